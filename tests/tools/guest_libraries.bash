# Sourced by the QEMU tests (tests/integration/kmod/run.sh,
# tests/service/run.sh), whose guests run programs built here.
#   copy_libraries ROOT FILE...   every shared library the FILEs load, and
#                                 the dynamic loader, as this machine has
#                                 them, at their paths under ROOT, where
#                                 ROOT lacks them
copy_libraries() {
	local root=$1 lib
	shift
	for lib in $(ldd "$@" 2>/dev/null |
		awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\/.*ld-linux/ {print $1}' | sort -u); do
		[ -e "$root$lib" ] || { mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib"; }
	done
}
