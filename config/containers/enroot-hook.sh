#!/bin/bash
# gpuoversub for enroot and pyxis: /etc/enroot/hooks.d/90-gpuoversub.sh,
# installed by the gpuoversub package (make install: from
# config/containers/enroot-hook.sh, @LIBDIR@ made PREFIX/lib).
#
# enroot runs it before each container starts, as the user. In a job step
# that gpuoversub manages (the SPANK plugin set GPUOVERSUB_SOCKET):
# - an image whose C library cannot load the agent (musl, or glibc older
#   than 2.28) gets the agent taken out of its LD_PRELOAD: the job runs
#   unmanaged in it, which one line on stderr and GPUOVERSUB_UNMANAGED in
#   its environment say;
# - any other image gets the agent in front of the LD_PRELOAD its
#   environment sets, and the socket's path;
# - /dev/gpuoversub is bound in where the container's /dev lacks it
#   (ENROOT_RESTRICT_DEV) and the kernel module is loaded.
# mounts.d/90-gpuoversub.fstab binds the agent and the socket's directory.
#
# What reaches the container's processes (docs/containers.md): enroot starts
# them with the environment file ($ENROOT_ENVIRON) only. pyxis starts
# enroot without the task's LD_PRELOAD, then gives the task the container's
# environment over its own: a variable the file sets replaces the task's, one
# it does not set is the task's (with the agent the plugin put there).
# Nothing here may stop a container from starting: every step is guarded.

[ -n "${GPUOVERSUB_SOCKET-}" ] || exit 0

agent=@LIBDIR@/libgpuoversub.so
floor=28	# glibc 2.28, the oldest the agent is built to load in

# An image path, followed through the image's own symbolic links: hooks run
# before the switch into the image, where an absolute link would lead into
# the host's tree.
in_image() {
	local p=$1 hops=0 target
	while [ -L "$ENROOT_ROOTFS$p" ] && [ $((hops += 1)) -le 16 ]; do
		target=$(readlink "$ENROOT_ROOTFS$p") || break
		case $target in
		/*) p=$target ;;
		*) p=${p%/*}/$target ;;
		esac
	done
	printf '%s\n' "$ENROOT_ROOTFS$p"
}

# Why the agent cannot load in the image, or nothing. musl's loader first:
# an Alpine image with gcompat has a libc.so.6 too, and its programs are
# still musl's. An image with neither (static, scratch) is left alone.
unloadable() {
	local f version
	for f in "$ENROOT_ROOTFS"/lib/ld-musl-*.so.1 "$ENROOT_ROOTFS"/usr/lib/ld-musl-*.so.1; do
		[ -e "$f" ] && { echo "its C library is musl, and the agent needs glibc 2.$floor or newer"; return; }
	done
	for f in "$ENROOT_ROOTFS"/{usr/lib64,lib64,usr/lib/*-linux-gnu,lib/*-linux-gnu,usr/lib,lib}/libc.so.6; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		# glibc's libc.so.6 says "... release version 2.NN." when run.
		version=$(grep -ao 'release version 2\.[0-9]\+' "$(in_image "${f#"$ENROOT_ROOTFS"}")" 2>/dev/null | head -n 1)
		version=${version##* }
		[ -n "$version" ] || continue
		[ "${version#2.}" -ge "$floor" ] ||
			echo "its C library is glibc $version, and the agent needs glibc 2.$floor or newer"
		return
	done
}

# A preload list without gpuoversub's libraries, colon-separated (ld.so also
# takes spaces).
without_ours() {
	local lib out=
	for lib in ${1//:/ }; do
		case ${lib##*/} in libgpuoversub*.so) ;; *) out=${out:+$out:}$lib ;; esac
	done
	printf '%s\n' "$out"
}

# The LD_PRELOAD the container would get: the last one its environment
# file sets (the image's /etc/environment, environ.d, pyxis's
# --container-env), or none.
image_preload=$(sed -n 's/^[[:space:]]*LD_PRELOAD=//p' "$ENROOT_ENVIRON" 2>/dev/null | tail -n 1)
image_preload=$(without_ours "${image_preload//[\"\']/}")

why=$(unloadable)
if [ -n "$why" ]; then
	echo "gpuoversub: this job runs unmanaged in this container: $why" >&2
	printf 'LD_PRELOAD=%s\nGPUOVERSUB_UNMANAGED=%s\n' "$image_preload" "$why" >>"$ENROOT_ENVIRON"
	exit 0
fi

# Ours from enroot's own environment (`enroot start` in a step); under
# pyxis, which keeps LD_PRELOAD from enroot, the agent at its installed path.
ours=
for lib in ${LD_PRELOAD//:/ }; do
	case ${lib##*/} in libgpuoversub*.so) ours=${ours:+$ours:}$lib ;; esac
done
# Under pyxis with an image that sets no LD_PRELOAD, the task keeps its own.
if [ -n "$ours" ] || [ -n "$image_preload" ]; then
	ours=${ours:-$agent}
	printf 'LD_PRELOAD=%s\n' "$ours${image_preload:+:$image_preload}" >>"$ENROOT_ENVIRON"
fi
printf 'GPUOVERSUB_SOCKET=%s\n' "$GPUOVERSUB_SOCKET" >>"$ENROOT_ENVIRON"

if [ -c /dev/gpuoversub ] && [ ! -e "$ENROOT_ROOTFS/dev/gpuoversub" ]; then
	echo "/dev/gpuoversub /dev/gpuoversub none x-create=file,bind,rw,nosuid,noexec,private,nofail" >>"$ENROOT_MOUNTS"
fi
exit 0
