#!/usr/bin/env bats
# packaging/debian-packages is the one list of the Debian packages
# gpuoversub needs: the packaging's build dependencies agree with it, and
# the dependency step of `make demo` and `make check` installs from it,
# with the names of the machine's Debian release.

list=packaging/debian-packages

# The names a column of the list gives (3: Build-Depends, 4: BuildRequires).
column() {
	awk -v c="$1" '!/^#/ && NF && $1 != "release" { n = split($c, f, ","); for (i = 1; i <= n; i++) if (f[i] != "-") print f[i] }' "$list" | sort -u
}

# An os-release file in $BATS_TEST_TMPDIR: fake_os_release ID CODENAME [VERSION_ID]
fake_os_release() {
	{
		echo "PRETTY_NAME=\"fake $1 $2\""
		echo "ID=$1"
		[ -z "${3:-}" ] || echo "VERSION_ID=\"$3\""
		echo "VERSION_CODENAME=$2"
	} >"$BATS_TEST_TMPDIR/os-release"
	echo "$BATS_TEST_TMPDIR/os-release"
}

@test "debian/control's Build-Depends are the list's" {
	control=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' debian/control | sed '$d' |
		sed 's/^Build-Depends://' | tr ',' '\n' | sed 's/(.*//; s/^[[:space:]]*//; s/[[:space:]]*$//' |
		grep -v '^$' | sort -u)
	diff <(column 3) <(echo "$control")
}

@test "gpuoversub.spec's BuildRequires are the list's" {
	spec=$(sed -n 's/^BuildRequires:[[:space:]]*//p' gpuoversub.spec | tr ' ' '\n' | grep -v '^$' | sort -u)
	diff <(column 4) <(echo "$spec")
}

@test "every package of the list has a known use, and this release's names are packages apt knows" {
	run awk '!/^#/ && NF && $1 != "release" && (NF != 4 || $2 !~ /^(build|demo|check|package|ci)(,(build|demo|check|package|ci))*$/)' "$list"
	[ -z "$output" ]
	run awk '$1 == "release" && (NF < 3 || $2 !~ /^[a-z]+$/)' "$list"
	[ -z "$output" ]
	command -v apt-cache >/dev/null || skip "no apt-cache on this machine"
	run packaging/deps.sh --list build demo check package ci
	[ "$status" -eq 0 ]
	listed=$(echo "$output" | sort -u)
	# shellcheck disable=SC2086 # one call: each costs seconds
	known=$(apt-cache show --no-all-versions $listed 2>/dev/null | sed -n 's/^Package: //p' | sort -u)
	diff <(echo "$listed") <(echo "$known")	# "<" lines: apt knows no such package
}

@test "each release takes its own names: the os-release codename picks them" {
	for r in bookworm:12:14 trixie:13:19 forky::21; do
		IFS=: read -r codename version clang <<<"$r"
		osr=$(fake_os_release debian "$codename" "$version")
		run env GOS_OS_RELEASE="$osr" packaging/deps.sh --list check
		echo "$codename: $output"
		[ "$status" -eq 0 ]
		[[ $'\n'$output$'\n' == *$'\n'clang-$clang$'\n'* ]]
		[[ $'\n'$output$'\n' == *$'\n'libclang-rt-$clang-dev$'\n'* ]]
		[[ $'\n'$output$'\n' == *$'\n'libslurm-dev$'\n'* ]]
		[[ $output != *'$'* ]]
		run env GOS_OS_RELEASE="$osr" packaging/deps.sh --value CLANG
		[ "$status" -eq 0 ]
		[ "$output" = "$clang" ]
	done
}

@test "every release line sets each variable the names use" {
	for codename in $(awk '$1 == "release" { print $2 }' "$list"); do
		run env GOS_DEBIAN_RELEASE="$codename" packaging/deps.sh --list build demo check package ci
		echo "$codename: $output"
		[ "$status" -eq 0 ]
		[[ $output != *'$'* ]]
	done
	# A name with a variable the release does not set is an error, not a literal.
	printf 'release bookworm 12 CLANG=14\nclang-$CLANG build - -\nfoo-$NOPE build - -\n' >"$BATS_TEST_TMPDIR/list"
	run env GOS_DEPS_LIST="$BATS_TEST_TMPDIR/list" GOS_DEBIAN_RELEASE=bookworm packaging/deps.sh --list build
	[ "$status" -eq 2 ]
	[[ $output == *"bookworm line sets no value for: foo-\$NOPE"* ]]
}

@test "another system is refused with the releases it could be, unless GOS_DEBIAN_RELEASE names one" {
	for sys in ubuntu:noble debian:duke; do
		osr=$(fake_os_release "${sys%:*}" "${sys#*:}")
		run env -u GOS_NO_INSTALL -u GOS_DEBIAN_RELEASE GOS_OS_RELEASE="$osr" packaging/deps.sh --list check
		echo "$output"
		[ "$status" -eq 1 ]
		[[ $output == *"fake ${sys%:*} ${sys#*:}"* ]]
		[[ $output == *"Debian 12 (bookworm), Debian 13 (trixie), testing (forky)"* ]]
		[[ $output == *"GOS_DEBIAN_RELEASE=forky"* ]]
		[[ $output == *"GOS_NO_INSTALL=1"* ]]
		# The install step itself, as make check runs it, refuses the same way.
		run env -u GOS_NO_INSTALL -u GOS_DEBIAN_RELEASE GOS_OS_RELEASE="$osr" packaging/deps.sh check
		[ "$status" -eq 1 ]
		[[ $output == *"names gpuoversub's packages only for"* ]]
		# Provisioned by hand: the step is off and says nothing.
		run env GOS_NO_INSTALL=1 GOS_OS_RELEASE="$osr" packaging/deps.sh check
		[ "$status" -eq 0 ]
		[ -z "$output" ]
		run env GOS_DEBIAN_RELEASE=trixie GOS_OS_RELEASE="$osr" packaging/deps.sh --value CLANG
		[ "$status" -eq 0 ]
		[ "$output" = 19 ]
	done
	run env GOS_DEBIAN_RELEASE=hamm packaging/deps.sh --list build
	[ "$status" -eq 2 ]
	[[ $output == *"GOS_DEBIAN_RELEASE=hamm is not a release of"* ]]
}

@test "the fuzzers build with the release's clang" {
	for r in bookworm:14 trixie:19 forky:21; do
		run env GOS_DEBIAN_RELEASE="${r%:*}" make -s --no-print-directory --eval 'gos-fuzz-cc: ; @echo $(FUZZ_CC) $(FUZZ_CXX)' gos-fuzz-cc
		echo "${r%:*}: $output"
		[ "$status" -eq 0 ]
		[ "$output" = "clang-${r#*:} clang++-${r#*:}" ]
	done
}

@test "the step lists each use's packages, the build's with every use" {
	run packaging/deps.sh --list demo
	[ "$status" -eq 0 ]
	[[ $'\n'$output$'\n' == *$'\n'libyaml-dev$'\n'* ]]
	[[ $'\n'$output$'\n' == *$'\n'slurmctld$'\n'* ]]
	[[ $'\n'$output$'\n' != *$'\n'bats$'\n'* ]]
	run packaging/deps.sh --list check
	[[ $'\n'$output$'\n' == *$'\n'bats$'\n'* ]]
	run packaging/deps.sh bogus
	[ "$status" -eq 2 ]
	[[ $output == *"unknown use 'bogus'"* ]]
}

@test "not root, the step names the command that installs what is missing" {
	command -v runuser >/dev/null && [ "$(id -u)" -eq 0 ] || skip "needs root to run the step as another user"
	dir=$(mktemp -d) && chmod 755 "$dir"
	printf 'release bookworm 12\nbuild-essential build - -\ngos-no-such-package demo - -\n' >"$dir/list"
	cp -r packaging "$dir/" && chmod -R a+rX "$dir"
	run runuser -u nobody -- env -u GOS_NO_INSTALL GOS_DEPS_LIST="$dir/list" GOS_DEBIAN_RELEASE=bookworm GOS_DEPS_FOR="make demo" "$dir/packaging/deps.sh" demo
	rm -rf "$dir"
	[ "$status" -eq 1 ]
	[[ $output == *"sudo apt-get install --no-install-recommends gos-no-such-package"* ]]
	[[ $output == *"sudo make demo"* ]]
}

# A root-looking step with a fake apt-get: fake_apt UPDATE_STATUS INSTALL_STATUS
fake_apt() {
	local bin=$BATS_TEST_TMPDIR/bin
	mkdir -p "$bin" "$BATS_TEST_TMPDIR/cuda"
	touch "$BATS_TEST_TMPDIR/cuda/cuda.h"
	printf '#!/bin/sh\n[ "$1" = -u ] && echo 0 || exec /usr/bin/id "$@"\n' >"$bin/id"
	cat >"$bin/apt-get" <<-SH
		#!/bin/sh
		case \$1 in
		update) echo "E: Release file for http://deb.example/debian/dists/forky/InRelease is expired"; exit $1 ;;
		*) echo "E: Unable to locate package gos-no-such-package"; exit $2 ;;
		esac
	SH
	chmod +x "$bin/id" "$bin/apt-get"
	printf 'release bookworm 12\nbuild-essential build - -\ngos-no-such-package demo - -\n' >"$BATS_TEST_TMPDIR/list"
}

@test "apt-get update's failure is told apart from install's, with what to fix" {
	fake_apt 100 0
	run env -u GOS_NO_INSTALL PATH="$BATS_TEST_TMPDIR/bin:$PATH" CUDA_INC="$BATS_TEST_TMPDIR/cuda" \
		GOS_DEPS_LIST="$BATS_TEST_TMPDIR/list" GOS_DEBIAN_RELEASE=bookworm GOS_DEPS_FOR="make demo" packaging/deps.sh demo
	rm -f "$(sed -n 's/.*output: \(\/tmp\/gpuoversub-deps-[A-Za-z0-9]*\.log\).*/\1/p' <<<"$output")"
	[ "$status" -eq 1 ]
	[[ $output == *"is expired"* ]]
	[[ $output == *"make demo: apt-get update failed"* ]]
	[[ $output == *"/etc/apt/sources.list"* ]]
	[[ $output == *'Acquire::Check-Valid-Until "false";'* ]]
	fake_apt 0 100
	run env -u GOS_NO_INSTALL PATH="$BATS_TEST_TMPDIR/bin:$PATH" CUDA_INC="$BATS_TEST_TMPDIR/cuda" \
		GOS_DEPS_LIST="$BATS_TEST_TMPDIR/list" GOS_DEBIAN_RELEASE=bookworm GOS_DEPS_FOR="make demo" packaging/deps.sh demo
	rm -f "$(sed -n 's/.*output: \(\/tmp\/gpuoversub-deps-[A-Za-z0-9]*\.log\).*/\1/p' <<<"$output")"
	[ "$status" -eq 1 ]
	[[ $output == *"installing the Debian packages it needs"*"bookworm's names"* ]]
	[[ $output == *"make demo: apt-get could not install the packages above"* ]]
	[[ $output == *"the names are $BATS_TEST_TMPDIR/list's for bookworm"* ]]
	[[ $output != *"apt-get update failed"* ]]
}

@test "without the CUDA headers the step says where to get them; GOS_NO_INSTALL turns it off" {
	run env -u GOS_NO_INSTALL CUDA_INC=/nonexistent packaging/deps.sh demo
	[ "$status" -eq 1 ]
	[[ $output == *"/nonexistent/cuda.h"* ]]
	[[ $output == *"https://developer.nvidia.com/cuda-downloads"* ]]
	run env CUDA_INC=/nonexistent GOS_NO_INSTALL=1 packaging/deps.sh demo
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}
