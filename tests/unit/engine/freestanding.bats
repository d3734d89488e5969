#!/usr/bin/env bats
# The engine core must build into the kernel too: outside its OS layer it may
# call only itself, and what the kernel also provides: the memory builtins
# and the stack protector's __stack_chk_fail (the build hardens the core).

@test "engine objects use no libc beyond memset/memcpy/memmove and the stack protector" {
	objs=("${BUILD:-build}"/kmod/engine/*.o)
	[ -e "${objs[0]}" ]
	foreign=$(nm -u "${objs[@]}" | awk 'NF == 2 { print $2 }' |
		grep -v -E '^(gos_[a-z0-9_]+|memset|memcpy|memmove|__stack_chk_fail)$' |
		grep -v -E '^(__asan_|__ubsan_|_GLOBAL_OFFSET_TABLE_)' | sort -u)	# sanitizer builds
	[ -z "$foreign" ] || { echo "libc symbols used by the engine core: $foreign"; false; }
}

@test "the OS layer is the only userspace-specific file" {
	run grep -l -E '#include <(stdio|stdlib|string|pthread|time|sys/)' kmod/engine/*.c kmod/engine/*.h
	[ "$status" -ne 0 ] || { echo "libc headers in the engine core: $output"; false; }
}
