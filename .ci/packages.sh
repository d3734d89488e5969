#!/usr/bin/env bash
# CI's package steps, in two halves:
#   .ci/packages.sh build WORK: the Debian packages built from a copy of the
#     tree (WORK/debs), lintian, the same one Debian revision up for the
#     upgrade tests (WORK/next/debs), the RPM spec through rpmbuild, all in
#     WORK; CI runs it in the background beside the tree's own tests (it
#     needs nothing of build/).
#   .ci/packages.sh test WORK: tests/package/packages.bats on them: install
#     with apt, a Slurm job through the installed system, an upgrade to the
#     next version under running jobs, purge (after `make check`: it takes
#     the fake CUDA driver and the test program from build/).
# Each prints what it did and how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] && [[ $1 == build || $1 == test ]] || { echo "usage: .ci/packages.sh build|test WORK" >&2; exit 2; }
half=$1 work=$2
started=$(date +%s)

export DEBIAN_FRONTEND=noninteractive
packaging/deps.sh package	# the packaging tools, from the one list

source tests/package/debs.bash
if [ "$half" = test ]; then
	GOS_DEBS=$work/debs GOS_DEBS_NEXT=$work/next/debs bats --verbose-run tests/package/packages.bats
	echo "package tests: $(($(date +%s) - started)) s"
	exit 0
fi
mkdir -p "$work"

# The source and binary versions agree with the Makefile's and the spec's.
version=$(sed -n 's/^VERSION := //p' Makefile)
[ "$(dpkg-parsechangelog -SVersion | sed 's/-[^-]*$//')" = "$version" ] ||
	{ echo "debian/changelog's upstream version is not the Makefile's $version"; exit 1; }
[ "$(sed -n 's/^Version: *//p' gpuoversub.spec)" = "$version" ] ||
	{ echo "gpuoversub.spec's Version is not the Makefile's $version"; exit 1; }

debs_copy . "$work/src"
# Both cores: CI runs this niced, so it takes what the tests leave idle.
# -g1 after Debian's -g: line tables in the -dbgsym packages, not full
# debug info, at three quarters of the compile time (the Makefile's own
# default, measured there); CI's two cores are its limit (docs/releases.md).
DEB_BUILD_OPTIONS="parallel=$(nproc)" DEB_CFLAGS_APPEND=-g1 DEB_CXXFLAGS_APPEND=-g1 \
	debs_build "$work/src" "$work/debs"
echo "Debian packages:"
(cd "$work/debs" && ls -l *.deb | awk '{ printf "  %-60s %9d bytes\n", $9, $5 }')
echo "lintian (info tags shown, errors and warnings fail):"
lint=0
lintian --fail-on error,warning --display-info "$work"/debs/*.changes >"$work/lintian.txt" 2>&1 || lint=$?
grep -v 'running with root privileges' "$work/lintian.txt" | sed 's/^/  /' || true
[ "$lint" -eq 0 ] || { echo "lintian found errors or warnings"; exit 1; }
debs_built=$(date +%s)
# The same tree one Debian revision up, its build outputs kept (-nc): the
# version that the upgrade tests (packages.bats, and the booted guest's,
# tests/service) install over these.
next=$(debs_next "$work/src" "$work/next/src")
debs_build "$work/next/src" "$work/next/debs" -nc
rm -rf "$work/next/src"
echo "the next version's packages ($next): $(($(date +%s) - debs_built)) s"

# The spec, in the tree the .debs were built in: rpmbuild runs %build (make
# finds the objects up to date), %install and the file lists, and writes the
# RPMs. Its BuildRequires name EL packages, hence --nodeps here.
(cd "$work/src" && rpmbuild -bb --build-in-place --nodeps --define "_topdir $work/rpm" \
	--define "slurm_version $(packaging/slurm-version)" --define 'mpicc mpicc' \
	gpuoversub.spec) >"$work/rpmbuild.log" 2>&1 || { tail -40 "$work/rpmbuild.log"; exit 1; }
echo "RPMs (from rpmbuild on Debian):"
(cd "$work/rpm/RPMS" && ls -l */*.rpm | awk '{ printf "  %-60s %9d bytes\n", $9, $5 }')
echo "package builds: $(($(date +%s) - started)) s (Debian build and lintian $((debs_built - started)) s)"
