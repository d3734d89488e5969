// The plugin's arguments on its plugstack.conf line:
//   socket=PATH agent=PATH mpi_hooks=auto|always|never
//   on_daemon_down=fail|passthrough report_admin_comment=yes|no config=PATH
// The option's default is the policy's (default_oversub in gpuoversub.yaml).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gos::spank {

enum class MpiHooks { automatic, always, never };

struct PlugstackArgs {
	std::string socket = "/run/gpuoversub/gpuoversubd.sock";
	std::string agent;		// default set by the build (GOS_AGENT_PATH)
	std::string mpi_hooks_lib;	// libgpuoversub_mpi.so beside the agent
	MpiHooks mpi_hooks = MpiHooks::automatic;
	bool fail_when_daemon_down = false;
	bool report_admin_comment = false;
	std::string config = "/etc/gpuoversub/gpuoversub.yaml";
	std::vector<std::string> errors;	// one per bad argument, naming it
};

PlugstackArgs parse_plugstack_args(int argc, char *const argv[], const std::string &default_agent);

// The value SPANK hands the option callback. Slurm forwards an option given
// without a value from sbatch to the job's sruns through the environment
// as the text "(null)" (printf of a NULL string), which means no value.
std::string_view option_value(const char *optarg);

} // namespace gos::spank
