// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gpuoversub.ko in a QEMU guest (run.sh, beside it, boots it): the ABI, the
 * daemon's calls and who may make them, agents as forked processes
 * that overcommit a GPU and get orders, kill -9 of a client, bad arguments
 * for every ioctl, and a bounded random ioctl fuzzer. Static, kselftest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include <gpuoversub/abi.h>

#define MiB (1ull << 20)
#define CONTROL_IOCTLS GOS_IOC_GPU_ADD, GOS_IOC_TENANT_CREATE, GOS_IOC_BIND, GOS_IOC_UNBIND, \
	GOS_IOC_TENANT_POLICY, GOS_IOC_TENANT_DESTROY, GOS_IOC_TENANT_STATS, GOS_IOC_GPU_STATS, \
	GOS_IOC_GPU_EXTERNAL, GOS_IOC_TENANT_LIST, GOS_IOC_TENANT_BUFFERS, GOS_IOC_TENANT_UNMANAGED
#define AGENT_IOCTLS GOS_IOC_ALLOC, GOS_IOC_FREE, GOS_IOC_PRIORITY, GOS_IOC_ORDER_DONE, GOS_IOC_PLACEMENT
#define ALL_IOCTLS GOS_IOC_VERSION, CONTROL_IOCTLS, AGENT_IOCTLS

/* An agent's file. */
static int dev(void)
{
	return open("/dev/gpuoversub", O_RDWR | O_CLOEXEC);
}

/* The daemon's file. */
static int control(void)
{
	return open("/dev/gpuoversub-control", O_RDWR | O_CLOEXEC);
}

/* ioctl's result as 0 or -errno. */
static int call(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/*
 * GPU `gpu` of `bytes` with two tenants of weight 1; returns the GPU. Each
 * test names its own GPU: the harness runs every test in a fresh process
 * against the one module.
 */
static uint32_t gpu_with_tenants(int fd, uint32_t gpu, uint64_t bytes, uint32_t *t0, uint32_t *t1)
{
	struct gos_ioc_gpu g = { .gpu = gpu, .physical = bytes };
	struct gos_ioc_tenant t = { .gpu = g.gpu, .weight = 1 };

	if (call(fd, GOS_IOC_GPU_ADD, &g))
		return UINT32_MAX;
	if (call(fd, GOS_IOC_TENANT_CREATE, &t))
		return UINT32_MAX;
	*t0 = t.tenant;
	t.tenant = 0;
	if (call(fd, GOS_IOC_TENANT_CREATE, &t))
		return UINT32_MAX;
	*t1 = t.tenant;
	return g.gpu;
}

/* Next order on fd within ms, or kind 0. */
static struct gos_wire_order read_order(int fd, int ms)
{
	struct gos_wire_order o = { 0 };
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, ms) == 1 && read(fd, &o, sizeof(o)) != sizeof(o))
		o.kind = 0;
	return o;
}

/* A child process bound to tenant: it allocates mib and reports on out. */
struct agent {
	pid_t pid;
	int go, out;
};

static struct agent spawn(int admin, uint32_t tenant, uint64_t mib)
{
	int go[2], out[2];
	struct agent a;

	if (pipe(go) || pipe(out))
		exit(2);
	a.pid = fork();
	if (a.pid == 0) {
		struct gos_ioc_alloc al = { .priority = 8, .size = mib * MiB };
		struct gos_wire_order o;
		char c;
		int fd = dev();

		close(admin);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		if (call(fd, GOS_IOC_ALLOC, &al))
			_exit(4);
		/* Report the placement, then every order: ack it and pass it on. */
		if (write(out[1], &al, sizeof(al)) != sizeof(al))
			_exit(5);
		for (;;) {
			o = read_order(fd, 10000);
			if (!o.kind)
				_exit(0);
			if (o.id) {
				struct gos_ioc_order done = { .order = o.id, .ok = 1 };

				call(fd, GOS_IOC_ORDER_DONE, &done);
			}
			if (write(out[1], &o, sizeof(o)) != sizeof(o))
				_exit(0);
		}
	}
	close(go[0]);
	close(out[1]);
	a.go = go[1];
	a.out = out[0];
	struct gos_ioc_bind b = { .pid = (uint32_t)a.pid, .ntenants = 1, .tenants = { tenant } };

	if (call(admin, GOS_IOC_BIND, &b))
		exit(6);
	if (write(a.go, "g", 1) != 1)
		exit(7);
	return a;
}

static int agent_read(struct agent *a, void *buf, size_t len, int ms)
{
	struct pollfd p = { .fd = a->out, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && read(a->out, buf, len) == (ssize_t)len ? 0 : -1;
}

/*
 * Bytes a reads in records of `kind`, up to want; a SETTLED notice (not an
 * order) counts its device bytes as returned.
 */
static uint64_t order_bytes(struct agent *a, uint32_t kind, uint64_t want)
{
	struct gos_wire_order o;
	uint64_t got = 0;

	while (got < want && !agent_read(a, &o, sizeof(o), 3000)) {
		if (o.kind == kind)
			got += o.length;
		if (o.kind == GOS_ORDER_SETTLED && kind == GOS_ORDER_RETURN)
			got += o.device_bytes;
	}
	return got;
}

static void reap(struct agent *a)
{
	kill(a->pid, SIGKILL);
	waitpid(a->pid, NULL, 0);
}

TEST(abi_version)
{
	struct gos_ioc_version v = { 0 }, cv = { 0 };
	int fd = dev(), ctl = control();

	ASSERT_LE(0, fd);
	ASSERT_LE(0, ctl);
	ASSERT_EQ(0, call(fd, GOS_IOC_VERSION, &v));
	EXPECT_EQ((__u32)GOS_KABI_VERSION, v.abi);
	EXPECT_EQ(2 * MiB, v.chunk_size);
	EXPECT_NE(0ull, v.instance);
	/* Both nodes are one engine. */
	ASSERT_EQ(0, call(ctl, GOS_IOC_VERSION, &cv));
	EXPECT_EQ(0, memcmp(&v, &cv, sizeof(v)));
	close(fd);
	close(ctl);
}

TEST(overcommit_sends_orders_to_the_victim_and_returns_after_free)
{
	int admin = control();
	uint32_t t0, t1;
	struct gos_ioc_alloc placed;

	ASSERT_LE(0, admin);
	ASSERT_NE(UINT32_MAX, gpu_with_tenants(admin, 1, 64 * MiB, &t0, &t1));
	struct agent a = spawn(admin, t0, 48);

	ASSERT_EQ(0, agent_read(&a, &placed, sizeof(placed), 2000));
	EXPECT_EQ(48 * MiB, placed.device_bytes);
	/* The reply is the placement: device, waiting, host in that order. */
	EXPECT_EQ((__u32)GOS_ALLOC_IN_ORDER, placed.layout);
	struct agent b = spawn(admin, t1, 48);

	ASSERT_EQ(0, agent_read(&b, &placed, sizeof(placed), 2000));
	/* B's fair share is 32 MiB: A must give up 16, so A gets evict orders. */
	uint64_t evicted = order_bytes(&a, GOS_ORDER_EVICT, 16 * MiB);

	EXPECT_GE(evicted, 16 * MiB);
	/* B exits: its memory is released and A's evicted chunks come back. */
	reap(&b);
	EXPECT_EQ(evicted, order_bytes(&a, GOS_ORDER_RETURN, evicted));
	reap(&a);
	close(admin);
}

TEST(kill_9_of_a_client_holding_host_chunks_frees_them)
{
	int admin = control();
	uint32_t t0, t1;
	struct gos_ioc_alloc placed;

	ASSERT_LE(0, admin);
	ASSERT_NE(UINT32_MAX, gpu_with_tenants(admin, 2, 32 * MiB, &t0, &t1));
	struct agent a = spawn(admin, t0, 32);

	ASSERT_EQ(0, agent_read(&a, &placed, sizeof(placed), 2000));
	struct agent b = spawn(admin, t1, 32);

	ASSERT_EQ(0, agent_read(&b, &placed, sizeof(placed), 2000));
	reap(&a);	/* holding chunks, with orders outstanding */
	/* All of B ends up on the device. */
	uint64_t on_host = placed.host_bytes + placed.waiting_bytes;

	EXPECT_EQ(on_host, order_bytes(&b, GOS_ORDER_RETURN, on_host));
	reap(&b);
	close(admin);
}

/* Whether pid is asleep (state S in /proc/PID/stat), within 5 s. */
static int asleep_soon(pid_t pid)
{
	char path[32], stat[256];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 500; i++, usleep(10000)) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd < 0 ? -1 : read(fd, stat, sizeof(stat) - 1);
		char *end;

		if (fd >= 0)
			close(fd);
		if (n <= 0)
			return 0;
		stat[n] = '\0';
		end = strrchr(stat, ')');	/* "PID (COMM) STATE ..." */
		if (end && end[1] == ' ' && end[2] == 'S')
			return 1;
	}
	return 0;
}

TEST(a_blocking_read_wakes_for_a_new_order)
{
	int admin = control(), self_fd = dev(), go[2], out[2];
	uint32_t t0, t1;

	ASSERT_LE(0, admin);
	ASSERT_LE(0, self_fd);
	ASSERT_NE(UINT32_MAX, gpu_with_tenants(admin, 10, 32 * MiB, &t0, &t1));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(out));
	pid_t pid = fork();

	if (pid == 0) {
		struct gos_ioc_alloc al = { .priority = 8, .size = 32 * MiB };
		struct gos_wire_order o = { 0 };
		int fd = dev();
		char c;

		if (read(go[0], &c, 1) != 1 || call(fd, GOS_IOC_ALLOC, &al) || write(out[1], "r", 1) != 1)
			_exit(1);
		/* No poll: the read itself sleeps until the order comes. */
		if (read(fd, &o, sizeof(o)) != sizeof(o) || write(out[1], &o.kind, sizeof(o.kind)) < 0)
			_exit(2);
		_exit(0);
	}
	struct gos_ioc_bind child = { .pid = (uint32_t)pid, .ntenants = 1, .tenants = { t0 } };
	struct gos_ioc_bind self = { .pid = (uint32_t)getpid(), .ntenants = 1, .tenants = { t1 } };
	struct pollfd p = { .fd = out[0], .events = POLLIN };
	char ready;
	uint32_t kind = 0;

	ASSERT_EQ(0, call(admin, GOS_IOC_BIND, &child));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(1, read(out[0], &ready, 1));
	/* After "r" the child only reads: asleep, it waits in that read(). */
	ASSERT_TRUE(asleep_soon(pid));
	ASSERT_EQ(0, call(admin, GOS_IOC_BIND, &self));
	struct gos_ioc_alloc al = { .priority = 8, .size = 32 * MiB };

	ASSERT_EQ(0, call(self_fd, GOS_IOC_ALLOC, &al));	/* squeezes the child */
	ASSERT_EQ(1, poll(&p, 1, 3000));
	ASSERT_EQ((ssize_t)sizeof(kind), read(out[0], &kind, sizeof(kind)));
	EXPECT_EQ((uint32_t)GOS_ORDER_EVICT, kind);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(self_fd);
	close(admin);
}

/* Runs fn in a child as nobody, with no capability left; its exit status. */
static int as_nobody(int (*fn)(void))
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(100);
		_exit(fn());
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* On an agent's file, anyone's: the daemon's calls are refused. */
static int daemon_calls_on_an_agents_file(void)
{
	struct gos_ioc_gpu g = { .gpu = 60, .physical = MiB };
	struct gos_ioc_tenant t = { .gpu = 0, .weight = 1 };
	struct gos_ioc_bind b = { .pid = 1, .ntenants = 1 };
	struct gos_ioc_tenant_stats ts = { .tenant = 0 };
	struct gos_ioc_gpu_stats gs = { .gpu = 0 };
	struct gos_ioc_tenant_policy tp = { .tenant = 0, .weight = 5 };
	struct gos_ioc_tenant_list tl = { .count = 0 };
	struct gos_ioc_tenant_buffers tb = { .tenant = 0, .max_buffers = 1 };
	struct gos_ioc_alloc al = { .size = MiB };
	struct gos_ioc_version v;
	int fd = dev();

	if (fd < 0)
		return 10;
	if (call(fd, GOS_IOC_TENANT_LIST, &tl) != -EPERM || call(fd, GOS_IOC_TENANT_BUFFERS, &tb) != -EPERM)
		return 11;
	if (call(fd, GOS_IOC_GPU_ADD, &g) != -EPERM || call(fd, GOS_IOC_TENANT_CREATE, &t) != -EPERM ||
	    call(fd, GOS_IOC_BIND, &b) != -EPERM || call(fd, GOS_IOC_UNBIND, &b) != -EPERM ||
	    call(fd, GOS_IOC_TENANT_STATS, &ts) != -EPERM || call(fd, GOS_IOC_GPU_STATS, &gs) != -EPERM ||
	    call(fd, GOS_IOC_TENANT_POLICY, &tp) != -EPERM)
		return 12;
	/* Agents' calls stay open to it, but it belongs to no tenant. */
	if (call(fd, GOS_IOC_VERSION, &v) || call(fd, GOS_IOC_ALLOC, &al) != -EPERM)
		return 13;
	/* Nor can it open the control node, root's alone (0600). */
	if (control() != -1 || errno != EACCES)
		return 14;
	return 0;
}

/* The control node given to nobody: its calls need no capability. */
static int daemon_calls_by_the_control_nodes_owner(void)
{
	struct gos_ioc_gpu g = { .gpu = 61, .physical = 64 * MiB };
	struct gos_ioc_tenant t = { .gpu = 61, .weight = 1 };
	struct gos_ioc_gpu_stats gs = { .gpu = 61 };
	struct gos_ioc_alloc al = { .size = MiB };
	struct gos_ioc_version v;
	int ctl = control(), ro = open("/dev/gpuoversub-control", O_RDONLY | O_CLOEXEC);

	if (ctl < 0 || ro < 0)
		return 20;
	if (call(ctl, GOS_IOC_GPU_ADD, &g) || call(ctl, GOS_IOC_TENANT_CREATE, &t) ||
	    call(ctl, GOS_IOC_GPU_STATS, &gs) || gs.stats.tenants != 1)
		return 21;
	/* An agent's calls are not the control node's. */
	if (call(ctl, GOS_IOC_ALLOC, &al) != -ENOTTY)
		return 22;
	/* Opened for reading only: the version, and nothing else. */
	if (call(ro, GOS_IOC_VERSION, &v) || call(ro, GOS_IOC_GPU_STATS, &gs) != -EBADF)
		return 23;
	return 0;
}

TEST(the_daemons_calls_are_the_control_nodes_alone)
{
	struct gos_ioc_gpu_stats gs = { .gpu = 0 };
	int fd = dev();

	/* Not even root's: no capability opens the agents' node to them. */
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EPERM, call(fd, GOS_IOC_GPU_STATS, &gs));
	close(fd);
	EXPECT_EQ(0, as_nobody(daemon_calls_on_an_agents_file));
	ASSERT_EQ(0, chown("/dev/gpuoversub-control", 65534, 65534));
	EXPECT_EQ(0, as_nobody(daemon_calls_by_the_control_nodes_owner));
	ASSERT_EQ(0, chown("/dev/gpuoversub-control", 0, 0));
}

TEST(bad_arguments_for_every_ioctl)
{
	int fd = dev(), ctl = control();
	void *unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	const unsigned long agents[] = { GOS_IOC_VERSION, AGENT_IOCTLS };
	const unsigned long controls[] = { GOS_IOC_VERSION, CONTROL_IOCTLS };

	ASSERT_LE(0, fd);
	ASSERT_LE(0, ctl);
	for (size_t i = 0; i < sizeof(agents) / sizeof(agents[0]); i++) {
		EXPECT_EQ(-EFAULT, call(fd, agents[i], NULL));
		EXPECT_EQ(-EFAULT, call(fd, agents[i], unmapped));
	}
	for (size_t i = 0; i < sizeof(controls) / sizeof(controls[0]); i++) {
		EXPECT_EQ(-EFAULT, call(ctl, controls[i], NULL));
		EXPECT_EQ(-EFAULT, call(ctl, controls[i], unmapped));
	}
	EXPECT_EQ(-ENOTTY, call(fd, _IO(GOS_IOC_MAGIC, 99), NULL));
	EXPECT_EQ(-ENOTTY, call(fd, _IOW('x', 1, int), NULL));
	EXPECT_EQ(-ENOTTY, call(ctl, _IO(GOS_IOC_MAGIC, 99), NULL));
	struct gos_ioc_gpu g = { .gpu = 70, .pad = 1, .physical = MiB };

	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_GPU_ADD, &g));
	struct gos_ioc_tenant t = { .gpu = 9999, .weight = 1 };

	EXPECT_NE(0, call(ctl, GOS_IOC_TENANT_CREATE, &t));	/* no such GPU */
	t.gpu = 0;
	t.weight = 0;
	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_TENANT_CREATE, &t));
	struct gos_ioc_bind b = { .pid = 0, .ntenants = 1 };

	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_BIND, &b));	/* neither pid nor cgroup */
	b.pid = 5;
	b.ntenants = 0;
	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_BIND, &b));	/* no tenant */
	b.ntenants = GOS_MAX_STEP_GPUS + 1;
	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_BIND, &b));
	b.ntenants = 1;
	b.pid = 5;
	b.cgroup = 7;
	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_BIND, &b));	/* both */
	b.cgroup = 0;
	b.pid = 5000000;	/* above PID_MAX_LIMIT */
	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_BIND, &b));
	b.pid = 31337;
	EXPECT_EQ(-ENOENT, call(ctl, GOS_IOC_UNBIND, &b));	/* never bound */
	struct gos_ioc_placement pl = { .buffer = 1, .count = 0 };

	EXPECT_EQ(-EINVAL, call(fd, GOS_IOC_PLACEMENT, &pl));
	pl.count = GOS_PLACEMENT_MAX + 1;
	EXPECT_EQ(-EINVAL, call(fd, GOS_IOC_PLACEMENT, &pl));
	struct gos_ioc_tenant_ref r = { .tenant = 0, .pad = 1 };

	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_TENANT_DESTROY, &r));
	struct gos_ioc_gpu_external x = { .gpu = 0, .pad = 1 };

	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_GPU_EXTERNAL, &x));
	struct gos_ioc_tenant_unmanaged um = { .tenant = 0, .pad = 1 };

	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_TENANT_UNMANAGED, &um));
	um.pad = 0;
	um.tenant = 999999;	/* no such tenant */
	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_TENANT_UNMANAGED, &um));
	struct gos_ioc_tenant_stats ts = { .tenant = 0, .pad = 1 };

	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_TENANT_STATS, &ts));
	uint32_t t0, t1;
	struct gos_ioc_tenant_list tl = { .count = 4, .pad = 1 };

	ASSERT_NE(UINT32_MAX, gpu_with_tenants(ctl, 71, 64 * MiB, &t0, &t1));
	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_TENANT_LIST, &tl));
	tl.pad = 0;
	tl.count = GOS_TENANT_LIST_MAX + 1;
	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_TENANT_LIST, &tl));
	tl.count = 4;
	tl.ids = 1;	/* not a user address */
	EXPECT_EQ(-EFAULT, call(ctl, GOS_IOC_TENANT_LIST, &tl));
	struct gos_ioc_alloc al = { .size = MiB, .flags = 0x80 };

	EXPECT_EQ(-EINVAL, call(fd, GOS_IOC_ALLOC, &al));
	struct gos_req_buffer nb = { .buffer = 12345 };

	EXPECT_NE(0, call(fd, GOS_IOC_FREE, &nb));
	struct gos_req_priority p = { .buffer = 12345, .length = MiB, .priority = 99 };

	EXPECT_NE(0, call(fd, GOS_IOC_PRIORITY, &p));
	struct gos_ioc_order o = { .order = 1, .ok = 2 };

	EXPECT_EQ(-EINVAL, call(fd, GOS_IOC_ORDER_DONE, &o));
	char small[8];

	EXPECT_EQ(-1, read(fd, small, sizeof(small)));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
	close(ctl);
}

TEST(tenant_policy_stats_placement_and_gpu_accounting)
{
	int fd = dev(), ctl = control();
	uint32_t t0, t1;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, ctl);
	ASSERT_NE(UINT32_MAX, gpu_with_tenants(ctl, 5, 64 * MiB, &t0, &t1));
	struct gos_ioc_gpu_external x = { .gpu = 5, .bytes = 16 * MiB };
	struct gos_ioc_gpu_stats gs = { .gpu = 5 };

	ASSERT_EQ(0, call(ctl, GOS_IOC_GPU_EXTERNAL, &x));
	ASSERT_EQ(0, call(ctl, GOS_IOC_GPU_STATS, &gs));
	EXPECT_EQ(64 * MiB, gs.stats.physical);
	EXPECT_EQ(48 * MiB, gs.stats.capacity);	/* minus what others use */
	EXPECT_EQ(2u, gs.stats.tenants);
	/* A tenant's unmanaged bytes are its own: used, and in its stats. */
	struct gos_ioc_tenant_unmanaged um = { .tenant = t1, .bytes = 4 * MiB };
	struct gos_ioc_tenant_stats us = { .tenant = t1 };

	ASSERT_EQ(0, call(ctl, GOS_IOC_TENANT_UNMANAGED, &um));
	ASSERT_EQ(0, call(ctl, GOS_IOC_TENANT_STATS, &us));
	EXPECT_EQ(4 * MiB, us.stats.unmanaged);
	EXPECT_EQ(4 * MiB, us.stats.resident);
	ASSERT_EQ(0, call(ctl, GOS_IOC_GPU_STATS, &gs));
	EXPECT_EQ(4 * MiB, gs.stats.used);
	um.bytes = 0;
	ASSERT_EQ(0, call(ctl, GOS_IOC_TENANT_UNMANAGED, &um));
	ASSERT_EQ(0, call(ctl, GOS_IOC_GPU_STATS, &gs));
	EXPECT_EQ(0u, gs.stats.used);
	struct gos_ioc_tenant_policy tp = { .tenant = t0, .weight = 3, .limit = 32 * MiB, .min_bytes = 4 * MiB };

	ASSERT_EQ(0, call(ctl, GOS_IOC_TENANT_POLICY, &tp));
	struct gos_ioc_bind b = { .pid = (uint32_t)getpid(), .ntenants = 1, .tenants = { t0 } };

	ASSERT_EQ(0, call(ctl, GOS_IOC_BIND, &b));
	struct gos_ioc_alloc al = { .priority = 8, .size = 8 * MiB };

	ASSERT_EQ(0, call(fd, GOS_IOC_ALLOC, &al));
	struct gos_ioc_alloc too_big = { .priority = 8, .size = 40 * MiB };

	EXPECT_NE(0, call(fd, GOS_IOC_ALLOC, &too_big));	/* over the 32 MiB limit */
	struct gos_ioc_tenant_stats ts = { .tenant = t0 };

	ASSERT_EQ(0, call(ctl, GOS_IOC_TENANT_STATS, &ts));
	EXPECT_EQ(5u, ts.stats.gpu);
	EXPECT_EQ(3u, ts.stats.weight);
	EXPECT_EQ(32 * MiB, ts.stats.limit);
	EXPECT_EQ(4 * MiB, ts.stats.min_bytes);
	EXPECT_EQ(8 * MiB, ts.stats.demand);
	EXPECT_EQ(8 * MiB, ts.stats.resident);
	EXPECT_EQ(1u, ts.stats.buffers);
	uint8_t states[4] = { 9, 9, 9, 9 };
	struct gos_ioc_placement pl = { .buffer = al.buffer, .first = 0, .count = 4,
					.states = (uint64_t)(uintptr_t)states };

	ASSERT_EQ(0, call(fd, GOS_IOC_PLACEMENT, &pl));
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(GOS_PLACE_DEVICE, states[i]);
	struct gos_ioc_tenant_ref r = { .tenant = t0 };

	EXPECT_EQ(-EBUSY, call(ctl, GOS_IOC_TENANT_DESTROY, &r));	/* it holds a buffer */
	struct gos_req_buffer fb = { .buffer = al.buffer };

	ASSERT_EQ(0, call(fd, GOS_IOC_FREE, &fb));
	EXPECT_EQ(0, call(ctl, GOS_IOC_TENANT_DESTROY, &r));
	EXPECT_NE(0, call(ctl, GOS_IOC_TENANT_STATS, &ts));
	ASSERT_EQ(0, call(ctl, GOS_IOC_UNBIND, &b));
	al.buffer = 0;	/* the fields the module writes go back in as 0 */
	al.layout = 0;
	EXPECT_EQ(-EPERM, call(fd, GOS_IOC_ALLOC, &al));	/* no tenant any more */
	close(fd);
	close(ctl);
}

/*
 * max_buffers_per_job in kernel mode: the tenant's cap, set by its own
 * ioctl, refuses one buffer more with ENOBUFS; a pad or an unknown flag is
 * refused before the engine sees it.
 */
TEST(a_tenants_buffer_cap_refuses_one_more_with_enobufs)
{
	int fd = dev(), ctl = control();
	uint32_t t0, t1;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, ctl);
	ASSERT_NE(UINT32_MAX, gpu_with_tenants(ctl, 7, 64 * MiB, &t0, &t1));
	struct gos_ioc_tenant_buffers tb = { .tenant = t0, .max_buffers = 2, .pad = 1 };

	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_TENANT_BUFFERS, &tb));
	tb.pad = 0;
	tb.flags = 1;
	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_TENANT_BUFFERS, &tb));
	tb.flags = 0;
	tb.tenant = t1 + 100;
	EXPECT_EQ(-EINVAL, call(ctl, GOS_IOC_TENANT_BUFFERS, &tb));	/* no such tenant */
	tb.tenant = t0;
	ASSERT_EQ(0, call(ctl, GOS_IOC_TENANT_BUFFERS, &tb));
	struct gos_ioc_bind b = { .pid = (uint32_t)getpid(), .ntenants = 1, .tenants = { t0 } };

	ASSERT_EQ(0, call(ctl, GOS_IOC_BIND, &b));
	struct gos_ioc_alloc al = { .size = MiB };
	uint64_t first;

	ASSERT_EQ(0, call(fd, GOS_IOC_ALLOC, &al));
	first = al.buffer;
	al.buffer = 0;	/* the fields the module writes go back in as 0 */
	al.layout = 0;
	ASSERT_EQ(0, call(fd, GOS_IOC_ALLOC, &al));
	al.buffer = 0;
	al.layout = 0;
	EXPECT_EQ(-ENOBUFS, call(fd, GOS_IOC_ALLOC, &al));
	struct gos_ioc_tenant_stats ts = { .tenant = t0 };

	ASSERT_EQ(0, call(ctl, GOS_IOC_TENANT_STATS, &ts));
	EXPECT_EQ(2u, ts.stats.buffers);
	EXPECT_EQ(2 * MiB, ts.stats.demand);	/* nothing of the refused one */
	struct gos_req_buffer fb = { .buffer = first };

	ASSERT_EQ(0, call(fd, GOS_IOC_FREE, &fb));
	EXPECT_EQ(0, call(fd, GOS_IOC_ALLOC, &al));	/* a free makes room */
	ASSERT_EQ(0, call(ctl, GOS_IOC_UNBIND, &b));
	close(fd);
	close(ctl);
}

/* Alloc from a fresh child, optionally after moving it into cgroup dir. */
static int alloc_in_child(const char *cgroup_dir)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct gos_ioc_alloc al = { .priority = 8, .size = MiB };
		char procs[256];
		int fd = dev(), p;

		if (cgroup_dir) {
			snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup_dir);
			p = open(procs, O_WRONLY);
			if (p < 0 || write(p, "0", 1) != 1)
				_exit(100);
			close(p);
		}
		_exit(-call(fd, GOS_IOC_ALLOC, &al));
	}
	int status;

	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? -WEXITSTATUS(status) : -1000;
}

TEST(a_job_on_two_gpus_allocates_on_the_tenant_of_each)
{
	int fd = dev(), ctl = control();
	uint32_t a0, a1, b0, b1;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, ctl);
	ASSERT_NE(UINT32_MAX, gpu_with_tenants(ctl, 8, 64 * MiB, &a0, &a1));
	ASSERT_NE(UINT32_MAX, gpu_with_tenants(ctl, 9, 64 * MiB, &b0, &b1));
	struct gos_ioc_bind b = { .pid = (uint32_t)getpid(), .ntenants = 2, .tenants = { a1, b0 } };

	ASSERT_EQ(0, call(ctl, GOS_IOC_BIND, &b));
	struct gos_ioc_alloc on0 = { .gpu = 0, .priority = 8, .size = 2 * MiB };
	struct gos_ioc_alloc on1 = { .gpu = 1, .priority = 8, .size = 48 * MiB };
	struct gos_ioc_alloc on2 = { .gpu = 2, .priority = 8, .size = MiB };

	ASSERT_EQ(0, call(fd, GOS_IOC_ALLOC, &on0));
	ASSERT_EQ(0, call(fd, GOS_IOC_ALLOC, &on1));
	EXPECT_EQ(-EINVAL, call(fd, GOS_IOC_ALLOC, &on2));	/* the job has two GPUs */
	struct gos_ioc_tenant_stats s0 = { .tenant = a1 }, s1 = { .tenant = b0 };

	ASSERT_EQ(0, call(ctl, GOS_IOC_TENANT_STATS, &s0));
	ASSERT_EQ(0, call(ctl, GOS_IOC_TENANT_STATS, &s1));
	EXPECT_EQ(8u, s0.stats.gpu);
	EXPECT_EQ(2 * MiB, s0.stats.demand);
	EXPECT_EQ(9u, s1.stats.gpu);
	EXPECT_EQ(48 * MiB, s1.stats.demand);
	/* Squeezed on node GPU 9, the job hears of its GPU 1. */
	struct agent other = spawn(ctl, b1, 48);
	struct gos_ioc_alloc placed;

	ASSERT_EQ(0, agent_read(&other, &placed, sizeof(placed), 2000));
	struct gos_wire_order o = read_order(fd, 3000);

	EXPECT_EQ((__u32)GOS_ORDER_EVICT, o.kind);
	EXPECT_EQ(1u, o.gpu);
	reap(&other);
	close(fd);
	close(ctl);
}

static int listed(int fd, uint32_t tenant)
{
	uint32_t ids[4096];
	struct gos_ioc_tenant_list l = { .count = 4096, .ids = (uintptr_t)ids };

	if (call(fd, GOS_IOC_TENANT_LIST, &l) || l.count > 4096)
		return -1;
	for (uint32_t i = 0; i < l.count; i++)
		if (ids[i] == tenant)
			return 1;
	return 0;
}

TEST(the_tenant_list_names_every_tenant)
{
	int fd = control();
	uint32_t t0, t1;
	struct gos_ioc_tenant_list count_only = { .count = 0 };

	ASSERT_LE(0, fd);
	ASSERT_NE(UINT32_MAX, gpu_with_tenants(fd, 72, 64 * MiB, &t0, &t1));
	ASSERT_EQ(0, call(fd, GOS_IOC_TENANT_LIST, &count_only));
	EXPECT_LE(2u, count_only.count);
	EXPECT_EQ(1, listed(fd, t0));
	EXPECT_EQ(1, listed(fd, t1));
	struct gos_ioc_tenant_ref r = { .tenant = t1 };

	ASSERT_EQ(0, call(fd, GOS_IOC_TENANT_DESTROY, &r));
	EXPECT_EQ(1, listed(fd, t0));
	EXPECT_EQ(0, listed(fd, t1));
	close(fd);
}

TEST(a_cgroup_binds_its_processes_and_no_other)
{
	const char *dir = "/sys/fs/cgroup/gos-job-7";
	struct stat st;
	int fd = control();
	uint32_t t0, t1;

	ASSERT_LE(0, fd);
	ASSERT_NE(UINT32_MAX, gpu_with_tenants(fd, 6, 64 * MiB, &t0, &t1));
	ASSERT_EQ(0, mkdir(dir, 0755));
	ASSERT_EQ(0, stat(dir, &st));
	struct gos_ioc_bind b = { .cgroup = st.st_ino, .ntenants = 1, .tenants = { t1 } };	/* the cgroup's id */

	ASSERT_EQ(0, call(fd, GOS_IOC_BIND, &b));
	EXPECT_EQ(0, alloc_in_child(dir));	/* a task of the job */
	EXPECT_EQ(-EPERM, alloc_in_child(NULL));	/* anyone else */
	ASSERT_EQ(0, call(fd, GOS_IOC_UNBIND, &b));
	EXPECT_EQ(-EPERM, alloc_in_child(dir));
	rmdir(dir);
	close(fd);
}

/* Alloc from a child on exactly pid (kernel.ns_last_pid); -ESRCH if it never got it. */
static int alloc_at_pid(pid_t want)
{
	for (int tries = 0; tries < 1000; tries++) {
		int last = open("/proc/sys/kernel/ns_last_pid", O_WRONLY), status;
		char number[16];

		if (last < 0)
			return -ENOENT;
		snprintf(number, sizeof(number), "%d", (int)want - 1);
		if (write(last, number, strlen(number)) < 0)
			return -EIO;
		close(last);
		pid_t pid = fork();

		if (pid == 0) {
			struct gos_ioc_alloc al = { .priority = 8, .size = MiB };

			if (getpid() != want)
				_exit(255);	/* another process took it: try again */
			_exit(-call(dev(), GOS_IOC_ALLOC, &al));
		}
		waitpid(pid, &status, 0);
		if (!WIFEXITED(status))
			return -1000;
		if (WEXITSTATUS(status) != 255)
			return -WEXITSTATUS(status);
	}
	return -ESRCH;
}

TEST(a_recycled_pid_is_another_process)
{
	int fd = control(), go[2], status;
	uint32_t t0, t1;

	ASSERT_LE(0, fd);
	ASSERT_NE(UINT32_MAX, gpu_with_tenants(fd, 11, 64 * MiB, &t0, &t1));
	ASSERT_EQ(0, pipe(go));
	pid_t task = fork();

	if (task == 0) {
		struct gos_ioc_alloc al = { .priority = 8, .size = MiB };
		char c;

		_exit(read(go[0], &c, 1) == 1 ? -call(dev(), GOS_IOC_ALLOC, &al) : 100);
	}
	struct gos_ioc_bind b = { .pid = (uint32_t)task, .ntenants = 1, .tenants = { t0 } };

	ASSERT_EQ(0, call(fd, GOS_IOC_BIND, &b));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(task, waitpid(task, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));	/* the bound task allocates */
	if (access("/proc/sys/kernel/ns_last_pid", W_OK))
		SKIP(return, "no kernel.ns_last_pid to place a process on a pid");
	EXPECT_EQ(-EPERM, alloc_at_pid(task));	/* its number, another process */
	b.pid = 4194000;	/* below PID_MAX_LIMIT, above the guest's pid_max */
	EXPECT_EQ(-ESRCH, call(fd, GOS_IOC_BIND, &b));	/* no such process */
	close(fd);
}

TEST(random_ioctls_never_hurt_the_kernel)
{
	const unsigned long cmds[] = { ALL_IOCTLS };
	const unsigned int ncmds = sizeof(cmds) / sizeof(cmds[0]);
	uint32_t t0, t1;
	int admin = control(), fd = dev();
	unsigned int seed = 12345;
	long calls = 0;

	ASSERT_LE(0, admin);
	ASSERT_NE(UINT32_MAX, gpu_with_tenants(admin, 3, 256 * MiB, &t0, &t1));
	struct gos_ioc_bind b = { .pid = (uint32_t)getpid(), .ntenants = 2, .tenants = { t0, t1 } };

	ASSERT_EQ(0, call(admin, GOS_IOC_BIND, &b));
	for (; calls < 100000; calls++) {
		uint64_t arg[8];
		unsigned long cmd = cmds[rand_r(&seed) % ncmds];

		for (int i = 0; i < 8; i++)
			arg[i] = ((uint64_t)rand_r(&seed) << 32 | (uint64_t)rand_r(&seed)) >> (rand_r(&seed) % 64);
		if (cmd == GOS_IOC_GPU_ADD)
			continue;	/* GPUs cannot be removed: it would fill the engine's table */
		if (rand_r(&seed) % 16 == 0)
			cmd = _IOC(_IOC_READ | _IOC_WRITE, GOS_IOC_MAGIC, rand_r(&seed) % 32, rand_r(&seed) % 64);
		ioctl(rand_r(&seed) % 2 ? fd : admin, cmd, arg);	/* either node, any command */
		if (rand_r(&seed) % 64 == 0) {
			struct gos_wire_order o[4];

			fcntl(fd, F_SETFL, O_NONBLOCK);
			(void)!read(fd, o, sizeof(o));
		}
		if (rand_r(&seed) % 4096 == 0) {
			close(fd);	/* releases whatever it holds */
			fd = dev();
		}
	}
	close(fd);
	close(admin);
	EXPECT_EQ(100000, calls);
}

TEST_HARNESS_MAIN
