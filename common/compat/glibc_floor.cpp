// The glibc floor of the libraries preloaded into tasks (the agent, the MPI
// hooks): they are bound into containers whose image brings its own glibc,
// and one unmet symbol version makes ld.so fail the whole process. So
// nothing they need may be newer than GLIBC_2.28 (RHEL 8; Ubuntu 20.04 has
// 2.31), whatever glibc built them.
//
// Each symbol that the build's glibc versions newer is defined here,
// hidden, so that every reference in the library, ours and those of the
// static libstdc++ and libgcc alike, binds to it at link time:
//  - what only moved (libpthread and libdl into libc in 2.34, the C23
//    strto* and sscanf names of 2.38) jumps to the same function under its old
//    version, which glibc keeps for old binaries;
//  - what is new (arc4random, _dl_find_object, pthread_cond_clockwait,
//    the stat family as functions, __libc_single_threaded) is done with older
//    calls.
// dlsym is the exception: the agent has its own (dlsym_hook.cpp), and the
// MPI hooks jump to the old one themselves.
// The library links libpthread.so.0 and libdl.so.2 as well: before 2.34,
// the old versions live there. tests/unit/agent/glibc_floor.bats checks
// the result with objdump; the container test loads it in a glibc 2.31
// image. x86_64 only: the versions named are that ABI's.
#include <cstdint>	// defines __GLIBC__ where it is glibc
#if defined(__x86_64__) && defined(__GLIBC__)

#include <cerrno>
#include <cstdint>
#include <ctime>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/compat/glibc_floor.hpp"

// Moved into libc in 2.34: the old versions are libpthread's and libdl's.
GOS_FLOOR_JUMP(pthread_create, "pthread_create@GLIBC_2.2.5");
GOS_FLOOR_JUMP(pthread_join, "pthread_join@GLIBC_2.2.5");
GOS_FLOOR_JUMP(pthread_detach, "pthread_detach@GLIBC_2.2.5");
GOS_FLOOR_JUMP(pthread_once, "pthread_once@GLIBC_2.2.5");
GOS_FLOOR_JUMP(pthread_key_create, "pthread_key_create@GLIBC_2.2.5");
GOS_FLOOR_JUMP(__pthread_key_create, "__pthread_key_create@GLIBC_2.2.5");
GOS_FLOOR_JUMP(pthread_key_delete, "pthread_key_delete@GLIBC_2.2.5");
GOS_FLOOR_JUMP(pthread_getspecific, "pthread_getspecific@GLIBC_2.2.5");
GOS_FLOOR_JUMP(pthread_setspecific, "pthread_setspecific@GLIBC_2.2.5");
GOS_FLOOR_JUMP(pthread_rwlock_rdlock, "pthread_rwlock_rdlock@GLIBC_2.2.5");
GOS_FLOOR_JUMP(pthread_rwlock_wrlock, "pthread_rwlock_wrlock@GLIBC_2.2.5");
GOS_FLOOR_JUMP(pthread_rwlock_unlock, "pthread_rwlock_unlock@GLIBC_2.2.5");
GOS_FLOOR_JUMP(pthread_mutexattr_init, "pthread_mutexattr_init@GLIBC_2.2.5");
GOS_FLOOR_JUMP(pthread_mutexattr_setpshared, "pthread_mutexattr_setpshared@GLIBC_2.2.5");
GOS_FLOOR_JUMP(pthread_mutexattr_setrobust, "pthread_mutexattr_setrobust@GLIBC_2.12");
GOS_FLOOR_JUMP(pthread_mutex_consistent, "pthread_mutex_consistent@GLIBC_2.12");
GOS_FLOOR_JUMP(dlopen, "dlopen@GLIBC_2.2.5");
GOS_FLOOR_JUMP(dlvsym, "dlvsym@GLIBC_2.2.5");
GOS_FLOOR_JUMP(dladdr, "dladdr@GLIBC_2.2.5");
GOS_FLOOR_JUMP(dlclose, "dlclose@GLIBC_2.2.5");
GOS_FLOOR_JUMP(dlerror, "dlerror@GLIBC_2.2.5");
// The C23 names of 2.38 (with _GNU_SOURCE): they differ from the old ones
// only on "0b" numbers and %b, which nothing here reads.
GOS_FLOOR_JUMP(__isoc23_strtol, "strtol@GLIBC_2.2.5");
GOS_FLOOR_JUMP(__isoc23_strtoll, "strtoll@GLIBC_2.2.5");
GOS_FLOOR_JUMP(__isoc23_strtoul, "strtoul@GLIBC_2.2.5");
GOS_FLOOR_JUMP(__isoc23_strtoull, "strtoull@GLIBC_2.2.5");
GOS_FLOOR_JUMP(__isoc23_sscanf, "__isoc99_sscanf@GLIBC_2.7");

GOS_FLOOR_OWN(arc4random);
GOS_FLOOR_OWN(pthread_cond_clockwait);
GOS_FLOOR_OWN(fstat64);
GOS_FLOOR_OWN(fstat);
GOS_FLOOR_OWN(stat);
GOS_FLOOR_OWN(lstat);
#if __GLIBC_PREREQ(2, 35)
GOS_FLOOR_OWN(_dl_find_object);
#endif

extern "C" {

// libstdc++ skips atomics when this says the process has one thread; 0
// (perhaps several) is always right, only slower.
__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;

// The stat family became functions in 2.33; before, the headers called
// these with the structure's version.
int gos_floor_old___fxstat64(int ver, int fd, void *buf);
int gos_floor_old___fxstat(int ver, int fd, void *buf);
int gos_floor_old___xstat(int ver, const char *path, void *buf);
int gos_floor_old___lxstat(int ver, const char *path, void *buf);
__asm__(".symver gos_floor_old___fxstat64, __fxstat64@GLIBC_2.2.5");
__asm__(".symver gos_floor_old___fxstat, __fxstat@GLIBC_2.2.5");
__asm__(".symver gos_floor_old___xstat, __xstat@GLIBC_2.2.5");
__asm__(".symver gos_floor_old___lxstat, __lxstat@GLIBC_2.2.5");
constexpr int stat_version = 1;	// x86_64's _STAT_VER_LINUX

__attribute__((visibility("hidden"))) uint32_t gos_floor_arc4random()
{
	uint32_t value;
	for (;;) {
		ssize_t n = getrandom(&value, sizeof value, 0);
		if (n == sizeof value)
			return value;
		if (n < 0 && errno != EINTR)
			break;
	}
	// A kernel without getrandom (before 3.17): the device.
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, &value, sizeof value);
		close(fd);
		if (n == sizeof value)
			return value;
	}
	return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&value)) ^
	       static_cast<uint32_t>(time(nullptr));
}

// The condition variables are the default (realtime) kind: a deadline on
// another clock becomes the realtime deadline as far away.
__attribute__((visibility("hidden"))) int gos_floor_pthread_cond_clockwait(
	pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock, const struct timespec *deadline)
{
	if (clock == CLOCK_REALTIME)
		return pthread_cond_timedwait(cond, mutex, deadline);
	if (clock != CLOCK_MONOTONIC)
		return EINVAL;
	struct timespec now_clock, now_real;
	clock_gettime(clock, &now_clock);
	clock_gettime(CLOCK_REALTIME, &now_real);
	int64_t left_ns = (deadline->tv_sec - now_clock.tv_sec) * 1000000000LL +
			  (deadline->tv_nsec - now_clock.tv_nsec);
	if (left_ns < 0)
		left_ns = 0;
	int64_t at_ns = now_real.tv_sec * 1000000000LL + now_real.tv_nsec + left_ns;
	struct timespec at = { at_ns / 1000000000LL, at_ns % 1000000000LL };
	return pthread_cond_timedwait(cond, mutex, &at);
}

__attribute__((visibility("hidden"))) int gos_floor_fstat64(int fd, void *buf)
{
	return gos_floor_old___fxstat64(stat_version, fd, buf);
}

__attribute__((visibility("hidden"))) int gos_floor_fstat(int fd, void *buf)
{
	return gos_floor_old___fxstat(stat_version, fd, buf);
}

__attribute__((visibility("hidden"))) int gos_floor_stat(const char *path, void *buf)
{
	return gos_floor_old___xstat(stat_version, path, buf);
}

__attribute__((visibility("hidden"))) int gos_floor_lstat(const char *path, void *buf)
{
	return gos_floor_old___lxstat(stat_version, path, buf);
}

#if __GLIBC_PREREQ(2, 35)
namespace {
struct Finding {
	uintptr_t pc;
	struct dl_find_object *out;
	bool found;
};

int find_in(struct dl_phdr_info *info, size_t, void *arg)
{
	auto *f = static_cast<Finding *>(arg);
	uintptr_t start = UINTPTR_MAX, end = 0;
	const void *eh_frame = nullptr;
	bool holds = false;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) &ph = info->dlpi_phdr[i];
		uintptr_t at = info->dlpi_addr + ph.p_vaddr;
		if (ph.p_type == PT_GNU_EH_FRAME)
			eh_frame = reinterpret_cast<const void *>(at);
		if (ph.p_type != PT_LOAD)
			continue;
		start = at < start ? at : start;
		end = at + ph.p_memsz > end ? at + ph.p_memsz : end;
		holds = holds || (f->pc >= at && f->pc < at + ph.p_memsz);
	}
	if (!holds)
		return 0;
	f->out->dlfo_flags = 0;
	f->out->dlfo_map_start = reinterpret_cast<void *>(start);
	f->out->dlfo_map_end = reinterpret_cast<void *>(end);
	f->out->dlfo_link_map = nullptr;	// the unwinder reads only the frame
	f->out->dlfo_eh_frame = const_cast<void *>(eh_frame);
	f->found = true;
	return 1;
}
} // namespace

// The unwinder's question (libgcc asks it for every frame of a throw):
// which object holds this pc, and where is its frame table.
__attribute__((visibility("hidden"))) int gos_floor__dl_find_object(void *pc, struct dl_find_object *out)
{
	Finding f{ reinterpret_cast<uintptr_t>(pc), out, false };
	dl_iterate_phdr(find_in, &f);
	return f.found ? 0 : -1;
}
#endif

} // extern "C"

#endif
