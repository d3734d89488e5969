# Building the Debian packages outside the tree, so that its build/ and
# debian/ stay as they are (sourced by .ci/packages.sh and the package tests).
#   debs_copy REPO DIR        the tree as git sees it (committed, changed and
#                             new files; nothing ignored) copied to DIR
#   debs_build DIR OUT [ARGS] dpkg-buildpackage -us -uc -b in DIR; the .debs to OUT
#   debs_next BUILT DIR       DIR: a copy of the built tree BUILT, build
#                             outputs kept, with a changelog entry one
#                             Debian revision up; prints the new version

debs_copy() {
	mkdir -p "$2"
	git -C "$1" ls-files -z --cached --others --exclude-standard |
		(cd "$1" && xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
		tar -C "$1" --null -T - -cf - | tar -C "$2" -xf -
}

debs_build() {
	local dir=$1 out=$2
	shift 2
	mkdir -p "$out"
	(cd "$dir" && dpkg-buildpackage -us -uc -b "$@") >"$out/build.log" 2>&1 || {
		tail -40 "$out/build.log" >&2
		echo "dpkg-buildpackage failed in $dir; the whole log is $out/build.log" >&2
		return 1
	}
	mv "$(dirname "$dir")"/*.deb "$(dirname "$dir")"/*.changes "$(dirname "$dir")"/*.buildinfo "$out"/
	mv "$(dirname "$dir")"/*.ddeb "$out"/ 2>/dev/null || true
}

debs_next() {
	local built=$1 dir=$2 version next
	mkdir -p "$(dirname "$dir")" && cp -a "$built" "$dir"
	(cd "$dir" && dh_clean)	# debhelper's record of the last build, not make's
	version=$(cd "$dir" && dpkg-parsechangelog -SVersion)
	next=${version%-*}-$((${version##*-} + 1))
	{
		printf 'gpuoversub (%s) unstable; urgency=medium\n\n' "$next"
		printf '  * The same tree one Debian revision up, for the upgrade test.\n\n'
		printf ' -- %s  %s\n\n' "$(cd "$dir" && dpkg-parsechangelog -SMaintainer)" "$(date -R)"
		cat "$dir/debian/changelog"
	} >"$dir/debian/changelog.next"
	mv "$dir/debian/changelog.next" "$dir/debian/changelog"
	echo "$next"
}
