// GOS_FLOOR_JUMP and GOS_FLOOR_OWN: a symbol defined hidden in the library
// that holds the line, so that the library's references bind to it and
// not to the build's glibc (see glibc_floor.cpp).
#pragma once

// GOS_FLOOR_JUMP(NAME, OLD): NAME, hidden, jumps to OLD (name@version).
#define GOS_FLOOR_JUMP(name, old)                                            \
	__asm__(".pushsection .text\n"                                       \
		".symver gos_floor_old_" #name ", " old "\n"                 \
		".globl " #name "\n"                                         \
		".hidden " #name "\n"                                        \
		".type " #name ", @function\n"                               \
		#name ":\n"                                                  \
		"\tjmp gos_floor_old_" #name "@PLT\n"                        \
		".size " #name ", . - " #name "\n"                           \
		".popsection\n")
// GOS_FLOOR_OWN(NAME): NAME, hidden, jumps to the file's own gos_floor_NAME.
#define GOS_FLOOR_OWN(name)                                                  \
	__asm__(".pushsection .text\n"                                       \
		".globl " #name "\n"                                         \
		".hidden " #name "\n"                                        \
		".type " #name ", @function\n"                               \
		#name ":\n"                                                  \
		"\tjmp gos_floor_" #name "\n"                                \
		".size " #name ", . - " #name "\n"                           \
		".popsection\n")
