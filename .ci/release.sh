#!/usr/bin/env bash
# .ci/release.sh RELEASE ROOT: CI's run on another Debian release, in a
# bare root of it from .ci/bare-root.sh (the checkout at /root/gpuoversub,
# under a 0700 home, so the suite proves it runs from one).
#   trixie (Debian 13, stable): the README's Try-it commands as written,
#     `sudo make demo` and `sudo make check`, after its line for minimal
#     installs (.ci/readme-path.sh).
#   forky (Debian testing): the README's `sudo make demo`, then what the
#     suites of Slurm, SPANK, MPI and the multi-node cluster need (not the
#     Boost.Test programs: CI's two cores have no time for a third build of
#     them), those suites and the module's build against its kernel; the
#     rest of the suite is Debian 12's and 13's to run.
# Prints each step's time, and the release's versions after its demo.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: .ci/release.sh trixie|forky ROOT" >&2; exit 2; }
release=$1 root=$2

step_label="$release"
source .ci/step.bash
versions() {
	step versions bash -c '. /etc/os-release; echo "$PRETTY_NAME"
		dpkg-query -W -f="\${Package} \${Version}\n" libslurm-dev libopenmpi-dev g++ linux-headers-amd64 \
			mariadb-server 2>/dev/null | sed "s/^/  /"'
}

case $release in
trixie)
	GOS_CI_README_RUN=make .ci/readme-path.sh "$root"
	versions
	;;
forky)
	.ci/readme-path.sh "$root"	# the minimal-install line and `sudo make demo`
	versions
	step "the check packages" packaging/deps.sh check
	step "make check-build-tools" make check-build-tools
	step "Slurm, SPANK, MPI and multi-node suites" tests/run-tests.sh build \
		tests/integration/slurm/*.bats tests/integration/spank/*.bats \
		tests/integration/mpi/*.bats tests/integration/multinode/*.bats
	step "the module against this release's kernel headers" make kmod
	;;
*) echo "release.sh: no CI run for '$release' (trixie or forky)" >&2; exit 2 ;;
esac
