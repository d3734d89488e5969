#!/usr/bin/env bash
# .ci/readme-path.sh ROOT: walks the README's "Try it" section in a bare
# root from .ci/bare-root.sh, as a new user would (.ci/release.sh): the
# line for minimal installs (`apt-get install make sudo`), then the
# section's commands exactly as written, in the clone (/root/gpuoversub,
# under a 0700 home). Which of them run: those
# whose text holds GOS_CI_README_RUN (default `make demo`; `make` runs them
# all, as Debian 13's CI run does). Prints each step's time.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$1
section=$(sed -n '/^## Try it/,/^## /p' README.md)
commands=$(sed -n '/^```sh$/,/^```$/p' <<<"$section" | sed '1d;$d' | sed 's/[[:space:]]*#.*$//' | grep -v '^$')
[ -n "$commands" ] || { echo "readme-path: no commands in the README's Try it section" >&2; exit 1; }
prereq='apt-get install make sudo'
grep -qF "\`$prereq\`" <<<"$section" || { echo "readme-path: the README no longer says \`$prereq\`" >&2; exit 1; }

step_label=readme-path
source .ci/step.bash
step "$prereq" bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive $prereq -y -qq >/dev/null"
while read -r cmd; do
	[[ $cmd == *${GOS_CI_README_RUN:-make demo}* ]] || { echo "readme-path: not run here: $cmd"; continue; }
	step "$cmd" bash -c "$cmd"
done <<<"$commands"
