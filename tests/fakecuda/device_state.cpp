#include "device_state.hpp"

#include "mig.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace fakecuda {
namespace {

constexpr std::uint32_t shared_magic = 0x46414b45;	// "FAKE"
constexpr int max_procs = 256;

struct Shared {
	std::uint32_t magic;
	pthread_mutex_t lock;
	std::uint64_t capacity[max_slots];
	std::uint64_t used[max_slots];
	std::uint64_t peak[max_slots];
	std::uint64_t over_peak[max_slots];
	std::uint64_t driver_evicted[max_slots];
	struct Proc {
		pid_t pid;
		int compute_instance;	// of the MIG device it sees; -1: none
		std::uint64_t used[max_slots];
		std::uint64_t managed[max_slots];	// of used
		std::uint64_t evicted[max_slots];	// not yet taken
	} procs[max_procs];
};

Shared *shared;
int ndevices = 1;
std::uint64_t ctx_bytes;
std::uint64_t delay_ms;
int log_fd = -1;
std::once_flag once;

std::uint64_t env_size(const char *name, std::uint64_t dflt)
{
	const char *v = std::getenv(name);
	if (!v || !*v)
		return dflt;
	char *end;
	unsigned long long n = std::strtoull(v, &end, 10);
	switch (*end) {
	case 'K': case 'k': n <<= 10; break;
	case 'M': case 'm': n <<= 20; break;
	case 'G': case 'g': n <<= 30; break;
	default: break;
	}
	return n;
}

void lock()
{
	int err = pthread_mutex_lock(&shared->lock);
	if (err == EOWNERDEAD)	// a process was killed holding it
		pthread_mutex_consistent(&shared->lock);
}

void unlock() { pthread_mutex_unlock(&shared->lock); }

// Dead, or a zombie: a process that has exited has closed its descriptors,
// and the real driver releases its memory with them.
bool gone(pid_t pid)
{
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return true;
	char path[64], buf[256];
	std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = 0;
	const char *paren = std::strrchr(buf, ')');
	return paren && (paren[2] == 'Z' || paren[2] == 'X');
}

// Frees what dead processes held; called with the lock held.
void reap()
{
	for (auto &p : shared->procs) {
		if (!p.pid || gone(p.pid)) {
			for (int d = 0; d < max_slots; d++)
				shared->used[d] -= p.used[d];
			p = {};
		}
	}
}

Shared::Proc &my_slot()
{
	pid_t me = getpid();
	for (auto &p : shared->procs)
		if (p.pid == me)
			return p;
	reap();
	for (auto &p : shared->procs)
		if (!p.pid) {
			p.pid = me;
			p.compute_instance = visible_compute_instance();
			return p;
		}
	std::fprintf(stderr, "fakecuda: more than %d processes share the state file\n", max_procs);
	std::abort();
}

void init_shared()
{
	ndevices = static_cast<int>(env_size("FAKECUDA_DEVICES", 1));
	if (ndevices < 0 || ndevices > max_devices)
		ndevices = 1;
	mig_init(ndevices);
	ctx_bytes = env_size("FAKECUDA_CONTEXT_BYTES", 0);
	delay_ms = env_size("FAKECUDA_PREFETCH_DELAY_MS", 0);
	if (const char *log = std::getenv("FAKECUDA_LOG"))
		log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	const char *path = std::getenv("FAKECUDA_STATE");
	void *mem;
	int fd = -1;
	if (path && *path) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
		if (fd < 0 || flock(fd, LOCK_EX) != 0 || ftruncate(fd, sizeof(Shared)) != 0) {
			std::fprintf(stderr, "fakecuda: cannot use %s: %s\n", path, std::strerror(errno));
			std::abort();
		}
		mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	} else {
		mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	}
	if (mem == MAP_FAILED)
		std::abort();
	shared = static_cast<Shared *>(mem);
	if (shared->magic != shared_magic) {
		pthread_mutexattr_t a;
		pthread_mutexattr_init(&a);
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
		pthread_mutex_init(&shared->lock, &a);
		std::uint64_t cap = env_size("FAKECUDA_MEMORY", 1ULL << 30);
		for (int slot = 0; slot < max_slots; slot++)
			shared->capacity[slot] = mig_in_slot(slot) ? mig_in_slot(slot)->memory : cap;
		shared->magic = shared_magic;
	}
	if (fd >= 0) {
		flock(fd, LOCK_UN);
		close(fd);
	}
}

} // namespace

void state_init() { std::call_once(once, init_shared); }
int device_count() { state_init(); return cuda_count(); }
std::uint64_t context_bytes() { state_init(); return ctx_bytes; }
std::uint64_t prefetch_delay_ms() { state_init(); return delay_ms; }

namespace {

// Adds bytes to this process's charge; the lock is held.
void add(Shared::Proc &me, int dev, std::uint64_t bytes)
{
	std::uint64_t after = shared->used[dev] + bytes;
	shared->used[dev] = after;
	me.used[dev] += bytes;
	if (after > shared->peak[dev])
		shared->peak[dev] = after;
}

// Records a demand beyond the capacity; the lock is held.
void note_over(int dev, std::uint64_t asked)
{
	if (asked > shared->capacity[dev] && asked > shared->over_peak[dev])
		shared->over_peak[dev] = asked;
}

// Takes up to want bytes from other processes' managed memory on dev, as
// the driver evicts them; the lock is held.
void evict_others(const Shared::Proc &me, int dev, std::uint64_t want)
{
	for (auto &p : shared->procs) {
		if (!want)
			return;
		if (!p.pid || &p == &me || !p.managed[dev])
			continue;
		std::uint64_t n = p.managed[dev] < want ? p.managed[dev] : want;
		p.managed[dev] -= n;
		p.used[dev] -= n;
		p.evicted[dev] += n;
		shared->used[dev] -= n;
		shared->driver_evicted[dev] += n;
		want -= n;
	}
}

// Removes up to bytes of this process's charge; the lock is held.
std::uint64_t remove(Shared::Proc &me, int dev, std::uint64_t bytes)
{
	bytes = bytes > me.used[dev] ? me.used[dev] : bytes;
	me.used[dev] -= bytes;
	shared->used[dev] -= bytes;
	return bytes;
}

} // namespace

bool charge(int dev, std::uint64_t bytes, bool strict)
{
	state_init();
	dev = cuda_slot(dev);
	lock();
	reap();
	bool fits = shared->used[dev] + bytes <= shared->capacity[dev];
	if (fits || !strict) {
		note_over(dev, shared->used[dev] + bytes);
		add(my_slot(), dev, bytes);
	}
	unlock();
	return fits || !strict;
}

void discharge(int dev, std::uint64_t bytes)
{
	state_init();
	dev = cuda_slot(dev);
	lock();
	remove(my_slot(), dev, bytes);
	unlock();
}

void charge_managed(int dev, std::uint64_t bytes)
{
	state_init();
	dev = cuda_slot(dev);
	lock();
	reap();
	Shared::Proc &me = my_slot();
	std::uint64_t asked = shared->used[dev] + bytes;
	note_over(dev, asked);
	if (asked > shared->capacity[dev])
		evict_others(me, dev, asked - shared->capacity[dev]);
	add(me, dev, bytes);
	me.managed[dev] += bytes;
	unlock();
}

void discharge_managed(int dev, std::uint64_t bytes)
{
	state_init();
	dev = cuda_slot(dev);
	lock();
	Shared::Proc &me = my_slot();
	std::uint64_t n = remove(me, dev, bytes > me.managed[dev] ? me.managed[dev] : bytes);
	me.managed[dev] -= n;
	unlock();
}

std::uint64_t take_evicted(int dev)
{
	state_init();
	dev = cuda_slot(dev);
	lock();
	Shared::Proc &me = my_slot();
	std::uint64_t n = me.evicted[dev];
	me.evicted[dev] = 0;
	unlock();
	return n;
}

DeviceUsage slot_usage(int slot)
{
	state_init();
	lock();
	reap();
	DeviceUsage u{shared->capacity[slot], shared->used[slot], shared->peak[slot], shared->over_peak[slot],
		      shared->driver_evicted[slot]};
	unlock();
	return u;
}

DeviceUsage usage(int dev)
{
	state_init();
	return slot_usage(cuda_slot(dev));
}

int processes(int slot, ProcessBytes *out, int max, int compute_instance)
{
	state_init();
	lock();
	reap();
	int n = 0;
	for (const auto &p : shared->procs) {
		std::uint64_t bytes = p.used[slot] - p.managed[slot];
		if (!p.pid || !bytes || (compute_instance >= 0 && p.compute_instance != compute_instance))
			continue;
		if (n < max)
			out[n] = {p.pid, bytes};
		n++;
	}
	unlock();
	return n;
}

void log_call(const char *fmt, ...)
{
	state_init();
	if (log_fd < 0)
		return;
	char line[512];
	int n = std::snprintf(line, sizeof line, "%d ", getpid());
	va_list ap;
	va_start(ap, fmt);
	n += std::vsnprintf(line + n, sizeof line - static_cast<std::size_t>(n) - 1, fmt, ap);
	va_end(ap);
	if (n > static_cast<int>(sizeof line) - 2)
		n = sizeof line - 2;
	line[n++] = '\n';
	ssize_t ignored = write(log_fd, line, static_cast<std::size_t>(n));	// O_APPEND: one line, whole
	(void)ignored;
}

} // namespace fakecuda
