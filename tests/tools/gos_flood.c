// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A hostile neighbour's flood of gpuoversubd's public socket, for the
 * hostile-neighbour suite. It runs until killed, and prints "ready" once
 * its connections are open and its first bytes sent: "ready PID".
 *
 *   gos_flood SOCKET hold N          N connections that say nothing
 *   gos_flood SOCKET besiege N       the same, but those the daemon closes
 *                                    for their silence reopen (those refused
 *                                    at the per-uid cap stay closed)
 *   gos_flood SOCKET slow N          N connections, each announcing a frame
 *                                    of 1 MiB of a type only the daemon sends
 *                                    and trickling it; those closed reopen
 *   gos_flood SOCKET pipeline N M    N connections, each sending M STATUS
 *                                    requests and never reading a reply
 *   gos_flood SOCKET hangup JOB      a step registration on GPU 0, then a
 *                                    close before any reply (exits at once)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <gpuoversub/abi.h>

static struct sockaddr_un addr = { .sun_family = AF_UNIX };

static int usage(void)
{
	fprintf(stderr, "usage: gos_flood SOCKET hold N | besiege N | slow N | pipeline N M | hangup JOB\n");
	return 2;
}

static long count(const char *s, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (end == s || *end || v < 1 || v > 1000000) {
		fprintf(stderr, "gos_flood: %s '%s' is not a number from 1 to 1000000\n", what, s);
		exit(2);
	}
	return v;
}

/* A non-blocking connection, or -1 when the daemon's backlog is full. */
static int open_one(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		perror("gos_flood: socket");
		exit(1);
	}
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0)
		return fd;
	close(fd);
	return -1;
}

static struct gos_wire_hdr header(__u16 type, __u32 seq, __u32 len)
{
	struct gos_wire_hdr h = { GOS_WIRE_MAGIC, GOS_WIRE_VERSION, type, seq, len };

	return h;
}

static void ready(void)
{
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
}

static void nap_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&t, NULL);
}

/* Whether the daemon closed fd with its per-uid cap's refusal. */
static int refused_at_cap(int fd)
{
	char b[sizeof(struct gos_wire_hdr) + sizeof(struct gos_reply)];
	struct gos_reply r;

	if (recv(fd, b, sizeof(b), MSG_DONTWAIT | MSG_WAITALL) != (ssize_t)sizeof(b))
		return 0;
	memcpy(&r, b + sizeof(struct gos_wire_hdr), sizeof(r));
	return r.status == -EUSERS;
}

/*
 * Held, or with reopen for as long as the tool runs, however long the test
 * takes: a connection closed for saying nothing in time opens again, as an
 * attacker holding connections would, so the uid stays at its cap.
 */
static _Noreturn void hold(long n, int reopen)
{
	struct pollfd *fds = calloc(n, sizeof(*fds));

	for (long i = 0; i < n; i++)
		fds[i] = (struct pollfd){ .fd = open_one(), .events = POLLIN };
	ready();
	for (;;) {
		if (poll(fds, n, -1) < 0)
			continue;
		for (long i = 0; i < n; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			int cap = refused_at_cap(fds[i].fd);

			close(fds[i].fd);
			fds[i].fd = cap || !reopen ? -1 : open_one();
		}
	}
}

/* A slow frame: its header, then a byte per round, for ever. */
static int start_slow(void)
{
	struct gos_wire_hdr h = header(GOS_WIRE_REPLY, 1, GOS_WIRE_MAX_PAYLOAD);
	int fd = open_one();

	if (fd >= 0 && send(fd, &h, sizeof(h), MSG_NOSIGNAL) != sizeof(h)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static _Noreturn void slow(long n)
{
	int *fds = calloc(n, sizeof(*fds));

	for (long i = 0; i < n; i++)
		fds[i] = start_slow();
	ready();
	for (;;) {
		nap_ms(100);
		for (long i = 0; i < n; i++) {
			char b = 0;

			if (fds[i] >= 0 && send(fds[i], &b, 1, MSG_NOSIGNAL) == 1)
				continue;
			if (fds[i] >= 0)
				close(fds[i]);
			fds[i] = start_slow();
		}
	}
}

static _Noreturn void pipeline(long n, long m)
{
	struct gos_wire_hdr *reqs = calloc(m, sizeof(*reqs));
	size_t *sent = calloc(n, sizeof(*sent)), total = m * sizeof(*reqs);
	int *fds = calloc(n, sizeof(*fds));

	for (long i = 0; i < m; i++)
		reqs[i] = header(GOS_REQ_STATUS, (__u32)i + 1, 0);
	for (long i = 0; i < n; i++)
		fds[i] = open_one();
	/* Whatever the daemon takes now; the rest as it reads on. */
	for (int round = 0;; round++) {
		for (long i = 0; i < n; i++) {
			ssize_t put;

			if (fds[i] < 0 || sent[i] == total)
				continue;
			put = send(fds[i], (char *)reqs + sent[i], total - sent[i], MSG_NOSIGNAL | MSG_DONTWAIT);
			if (put > 0)
				sent[i] += put;
			else if (errno != EAGAIN) {
				close(fds[i]);
				fds[i] = -1;
			}
		}
		if (round == 0)
			ready();
		nap_ms(100);
	}
}

static int hangup(const char *job)
{
	struct gos_req_step s = { .job_id = count(job, "JOB"), .ngpus = 1 };
	struct gos_wire_hdr h = header(GOS_REQ_STEP_REGISTER, 1, sizeof(s));
	char frame[sizeof(h) + sizeof(s)];
	int fd = open_one();

	memcpy(frame, &h, sizeof(h));
	memcpy(frame + sizeof(h), &s, sizeof(s));
	if (fd < 0 || send(fd, frame, sizeof(frame), MSG_NOSIGNAL) != sizeof(frame)) {
		perror("gos_flood: hangup");
		return 1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct rlimit r;

	if (argc < 4)
		return usage();
	if (strlen(argv[1]) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "gos_flood: socket path too long: %s\n", argv[1]);
		return 2;
	}
	strcpy(addr.sun_path, argv[1]);
	if (getrlimit(RLIMIT_NOFILE, &r) == 0) {	/* as many as this user may */
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
	if (argc == 4 && !strcmp(argv[2], "hold"))
		hold(count(argv[3], "N"), 0);
	if (argc == 4 && !strcmp(argv[2], "besiege"))
		hold(count(argv[3], "N"), 1);
	if (argc == 4 && !strcmp(argv[2], "slow"))
		slow(count(argv[3], "N"));
	if (argc == 5 && !strcmp(argv[2], "pipeline"))
		pipeline(count(argv[3], "N"), count(argv[4], "M"));
	if (argc == 4 && !strcmp(argv[2], "hangup"))
		return hangup(argv[3]);
	return usage();
}
