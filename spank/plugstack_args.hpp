// The plugin's arguments on its plugstack.conf line:
//   socket=PATH agent=PATH mpi_hooks=auto|always|never
//   on_daemon_down=fail|passthrough default=off|FACTOR|SIZE
//   report_admin_comment=yes|no config=PATH
#pragma once

#include <string>
#include <vector>

#include "spank/request.hpp"

namespace gos::spank {

enum class MpiHooks { automatic, always, never };

struct PlugstackArgs {
	std::string socket = "/run/gpuoversub/gpuoversubd.sock";
	std::string agent;		// default set by the build (GOS_AGENT_PATH)
	std::string mpi_hooks_lib;	// libgpuoversub_mpi.so beside the agent
	MpiHooks mpi_hooks = MpiHooks::automatic;
	bool fail_when_daemon_down = false;
	Request default_request;	// when a job says nothing
	bool report_admin_comment = false;
	std::string config = "/etc/gpuoversub/gpuoversub.yaml";
	std::vector<std::string> errors;	// one per bad argument, naming it
};

PlugstackArgs parse_plugstack_args(int argc, char *const argv[], const std::string &default_agent);

} // namespace gos::spank
