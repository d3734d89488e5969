#!/usr/bin/env bats
# packaging/debian-packages is the one list of the Debian packages
# gpuoversub needs: the packaging's build dependencies agree with it, and
# the dependency step of `make demo` and `make check` installs from it.

list=packaging/debian-packages

# The names a column of the list gives (3: Build-Depends, 4: BuildRequires).
column() {
	awk -v c="$1" '!/^#/ && NF { n = split($c, f, ","); for (i = 1; i <= n; i++) if (f[i] != "-") print f[i] }' "$list" | sort -u
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

@test "every package of the list is a Debian 12 package with a known use" {
	run awk '!/^#/ && NF && (NF != 4 || $2 !~ /^(build|demo|check|package|ci)(,(build|demo|check|package|ci))*$/)' "$list"
	[ -z "$output" ]
	if command -v apt-cache >/dev/null; then	# one call: each costs seconds
		listed=$(awk '!/^#/ && NF { print $1 }' "$list" | sort -u)
		# shellcheck disable=SC2086
		known=$(apt-cache show --no-all-versions $listed 2>/dev/null | sed -n 's/^Package: //p' | sort -u)
		diff <(echo "$listed") <(echo "$known")	# "<" lines: apt knows no such package
	fi
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
	printf 'build-essential build - -\ngos-no-such-package demo - -\n' >"$dir/list"
	cp -r packaging "$dir/" && chmod -R a+rX "$dir"
	run runuser -u nobody -- env -u GOS_NO_INSTALL GOS_DEPS_LIST="$dir/list" GOS_DEPS_FOR="make demo" "$dir/packaging/deps.sh" demo
	rm -rf "$dir"
	[ "$status" -eq 1 ]
	[[ $output == *"sudo apt-get install --no-install-recommends gos-no-such-package"* ]]
	[[ $output == *"sudo make demo"* ]]
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
