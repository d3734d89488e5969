// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Plays the SPANK plugin (root) where there is no Slurm: the MPI tests,
 * the GPU suite, the benchmarks and the QEMU guest. Static C on the wire
 * ABI alone, so that the guest's initramfs runs it as it is.
 *
 *   gos_register SOCKET step JOB[.STEP] GPU[,GPU...] [FACTOR_MILLI [UID]]
 *   gos_register SOCKET task JOB[.STEP] PID
 *   gos_register SOCKET exec JOB[.STEP] PROGRAM [ARG...]
 *   gos_register SOCKET end JOB.STEP    (a step's end)
 *   gos_register SOCKET end JOB         (the epilog: the job's end, its report)
 *
 * STEP is 0 unless given, UID (the job's user) 0. PID may be any 32-bit
 * number, for the daemon's range check. exec registers this process as a task and then
 * becomes PROGRAM, which keeps the pid. Exits 1 with the daemon's reason
 * when it refuses, 2 on a usage error.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <gpuoversub/abi.h>

/* A registration's reply follows a synced save; on ext4 an fsync waits for
 * the journal's other dirty data too, and beside a build (CI runs other
 * releases' builds at once) that took over 30 s.
 */
#define REPLY_TIMEOUT_S 120

static int usage(void)
{
	fprintf(stderr, "usage: gos_register SOCKET step JOB[.STEP] GPU[,GPU...] [FACTOR_MILLI [UID]]\n"
			"       gos_register SOCKET task JOB[.STEP] PID\n"
			"       gos_register SOCKET exec JOB[.STEP] PROGRAM [ARG...]\n"
			"       gos_register SOCKET end JOB[.STEP]\n");
	return 2;
}

/* A decimal number up to max, ending at *end (NULL: at the string's end). */
static unsigned long long number(const char *s, const char *what, unsigned long long max, const char **end)
{
	char *stop;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &stop, 10);
	if (stop == s || *s == '-' || errno || v > max || (end ? 0 : *stop != '\0')) {
		fprintf(stderr, "gos_register: %s '%s' is not a number up to %llu\n", what, s, max);
		exit(2);
	}
	if (end)
		*end = stop;
	return v;
}

/* JOB or JOB.STEP; says whether the step was given. */
static int job_step(const char *s, __u64 *job, __u32 *step)
{
	const char *rest;

	*job = number(s, "JOB", UINT64_MAX, &rest);
	*step = 0;
	if (*rest == '\0')
		return 0;
	if (*rest != '.') {
		fprintf(stderr, "gos_register: '%s' is not JOB or JOB.STEP\n", s);
		exit(2);
	}
	*step = number(rest + 1, "STEP", UINT32_MAX, NULL);
	return 1;
}

static int put(int fd, const void *buf, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t n = send(fd, (const char *)buf + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		off += n;
	}
	return 0;
}

static int get(int fd, void *buf, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t n = read(fd, (char *)buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += n;
	}
	return 0;
}

/* One request and its reply; 0 when the daemon agreed. */
static int call(const char *path, __u16 type, const void *payload, __u32 len)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct gos_wire_hdr hdr = { GOS_WIRE_MAGIC, GOS_WIRE_VERSION, type, 1, len };
	struct timeval limit = { .tv_sec = REPLY_TIMEOUT_S };
	struct gos_reply rep;
	char rest[256];
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "gos_register: socket path too long: %s\n", path);
		return 1;
	}
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		fprintf(stderr, "gos_register: cannot reach gpuoversubd at %s: %s\n", path, strerror(errno));
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
	if (put(fd, &hdr, sizeof(hdr)) || put(fd, payload, len)) {
		fprintf(stderr, "gos_register: send to gpuoversubd: %s\n", strerror(errno));
		return 1;
	}
	if (get(fd, &hdr, sizeof(hdr)) || hdr.magic != GOS_WIRE_MAGIC || hdr.type != GOS_WIRE_REPLY ||
	    hdr.length < sizeof(rep) || get(fd, &rep, sizeof(rep))) {
		fprintf(stderr, "gos_register: no reply from gpuoversubd within %d s, or a malformed one\n",
			REPLY_TIMEOUT_S);
		return 1;
	}
	for (__u32 left = hdr.length - sizeof(rep); left;) {	/* a payload we do not need */
		__u32 n = left < sizeof(rest) ? left : sizeof(rest);

		if (get(fd, rest, n))
			break;
		left -= n;
	}
	close(fd);
	if (rep.status) {
		rep.error[sizeof(rep.error) - 1] = '\0';
		fprintf(stderr, "gos_register: gpuoversubd refused: %s (%d)\n", rep.error, rep.status);
		return 1;
	}
	return 0;
}

static int step(const char *sock, const char *job, const char *gpus, const char *factor, const char *uid)
{
	struct gos_req_step s = { 0 };
	const char *at = gpus;

	job_step(job, &s.job_id, &s.step_id);
	for (;;) {
		if (s.ngpus == GOS_MAX_STEP_GPUS) {
			fprintf(stderr, "gos_register: more than %d GPUs in '%s'\n", GOS_MAX_STEP_GPUS, gpus);
			exit(2);
		}
		s.gpus[s.ngpus++] = number(at, "GPU", UINT32_MAX, &at);
		if (*at == '\0')
			break;
		if (*at++ != ',') {
			fprintf(stderr, "gos_register: '%s' is not a list of GPU indices like 0,1\n", gpus);
			exit(2);
		}
	}
	s.factor_milli = factor ? number(factor, "FACTOR_MILLI", UINT32_MAX, NULL) : 0;
	s.uid = uid ? number(uid, "UID", UINT32_MAX, NULL) : 0;
	return call(sock, GOS_REQ_STEP_REGISTER, &s, sizeof(s));
}

static int task(const char *sock, const char *job, __u32 pid)
{
	struct gos_req_task t = { .pid = pid };

	job_step(job, &t.job_id, &t.step_id);
	return call(sock, GOS_REQ_TASK_REGISTER, &t, sizeof(t));
}

static int end(const char *sock, const char *job)
{
	struct gos_req_step_ref r = { 0 };
	struct gos_req_job j;

	if (job_step(job, &r.job_id, &r.step_id))
		return call(sock, GOS_REQ_STEP_END, &r, sizeof(r));
	j.job_id = r.job_id;
	return call(sock, GOS_REQ_JOB_END, &j, sizeof(j));
}

int main(int argc, char **argv)
{
	const char *what = argc > 2 ? argv[2] : "";

	if (argc == 5 && !strcmp(what, "step"))
		return step(argv[1], argv[3], argv[4], NULL, NULL);
	if ((argc == 6 || argc == 7) && !strcmp(what, "step"))
		return step(argv[1], argv[3], argv[4], argv[5], argc == 7 ? argv[6] : NULL);
	if (argc == 5 && !strcmp(what, "task"))
		return task(argv[1], argv[3], number(argv[4], "PID", UINT32_MAX, NULL));
	if (argc >= 5 && !strcmp(what, "exec")) {
		if (task(argv[1], argv[3], getpid()))
			return 1;
		execvp(argv[4], argv + 4);
		fprintf(stderr, "gos_register: cannot run %s: %s\n", argv[4], strerror(errno));
		return 127;
	}
	if (argc == 4 && !strcmp(what, "end"))
		return end(argv[1], argv[3]);
	return usage();
}
