// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * What the SPANK plugin tells gpuoversubd, for the QEMU guest (no Slurm
 * there): register a step or a task, end a step. Static, root only.
 *
 *   gos_register SOCKET step JOB STEP GPU   (a step on one node GPU)
 *   gos_register SOCKET task JOB STEP PID
 *   gos_register SOCKET end JOB STEP
 *
 * Prints the daemon's error and exits 1 when it refuses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../include/gpuoversub/abi.h"

static int exchange(const char *path, __u16 type, const void *payload, __u32 len)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct gos_wire_hdr hdr = { GOS_WIRE_MAGIC, GOS_WIRE_VERSION, type, 1, len };
	struct { struct gos_wire_hdr hdr; struct gos_reply rep; } in;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	size_t got = 0;

	strncpy(addr.sun_path, path, sizeof(addr.sun_path) - 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		perror(path);
		return 1;
	}
	if (write(fd, &hdr, sizeof(hdr)) != sizeof(hdr) || write(fd, payload, len) != (ssize_t)len) {
		perror("write");
		return 1;
	}
	while (got < sizeof(in)) {
		ssize_t n = read(fd, (char *)&in + got, sizeof(in) - got);

		if (n <= 0) {
			fprintf(stderr, "gpuoversubd closed the connection\n");
			return 1;
		}
		got += n;
	}
	close(fd);
	if (in.rep.status) {
		in.rep.error[sizeof(in.rep.error) - 1] = 0;
		fprintf(stderr, "gpuoversubd: %s (%d)\n", in.rep.error, in.rep.status);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[2], "step")) {
		struct gos_req_step s = { .job_id = strtoull(argv[3], NULL, 10),
					  .step_id = strtoul(argv[4], NULL, 10), .ngpus = 1,
					  .gpus = { strtoul(argv[5], NULL, 10) } };

		return exchange(argv[1], GOS_REQ_STEP_REGISTER, &s, sizeof(s));
	}
	if (argc == 6 && !strcmp(argv[2], "task")) {
		struct gos_req_task t = { strtoull(argv[3], NULL, 10), strtoul(argv[4], NULL, 10),
					  strtoul(argv[5], NULL, 10) };

		return exchange(argv[1], GOS_REQ_TASK_REGISTER, &t, sizeof(t));
	}
	if (argc == 5 && !strcmp(argv[2], "end")) {
		struct gos_req_step_ref r = { strtoull(argv[3], NULL, 10), strtoul(argv[4], NULL, 10), 0 };

		return exchange(argv[1], GOS_REQ_STEP_END, &r, sizeof(r));
	}
	fprintf(stderr, "usage: gos_register SOCKET step JOB STEP GPU | task JOB STEP PID | end JOB STEP\n");
	return 2;
}
