// Plays the SPANK plugin for the GPU and MPI suites (root): registers a job step on
// node GPUs, or a task pid of a job, with gpuoversubd.
//   gos_register SOCKET step JOB GPU[,GPU...] [FACTOR_MILLI]
//   gos_register SOCKET task JOB PID
//   gos_register SOCKET end JOB      (the epilog: ends the job, writes its report)
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "common/proto/client.hpp"

int main(int argc, char **argv)
{
	if (argc < 4 || (argc < 5 && std::string(argv[2]) != "end")) {
		std::fprintf(stderr, "usage: gos_register SOCKET step JOB GPUS [FACTOR_MILLI] | SOCKET task JOB PID | "
				     "SOCKET end JOB\n");
		return 2;
	}
	try {
		gos::proto::Client c(argv[1]);
		std::string what = argv[2];
		gos::proto::Reply r;
		if (what == "step") {
			gos_req_step s{};
			s.job_id = std::strtoull(argv[3], nullptr, 10);
			std::stringstream gpus(argv[4]);
			for (std::string g; std::getline(gpus, g, ',') && s.ngpus < GOS_MAX_STEP_GPUS;)
				s.gpus[s.ngpus++] = static_cast<std::uint32_t>(std::stoul(g));
			s.factor_milli = argc > 5 ? static_cast<std::uint32_t>(std::stoul(argv[5])) : 0;
			r = c.call(GOS_REQ_STEP_REGISTER, s);
		} else if (what == "task") {
			gos_req_task t{};
			t.job_id = std::strtoull(argv[3], nullptr, 10);
			t.pid = static_cast<std::uint32_t>(std::stoul(argv[4]));
			r = c.call(GOS_REQ_TASK_REGISTER, t);
		} else if (what == "end") {
			gos_req_job j{std::strtoull(argv[3], nullptr, 10)};
			r = c.call(GOS_REQ_JOB_END, j);
		} else {
			std::fprintf(stderr, "gos_register: unknown request %s\n", argv[2]);
			return 2;
		}
		if (r.status) {
			std::fprintf(stderr, "gos_register: %s\n", r.error.c_str());
			return 1;
		}
	} catch (const std::exception &e) {
		std::fprintf(stderr, "gos_register: %s\n", e.what());
		return 1;
	}
	return 0;
}
