#include "spank/plugstack_args.hpp"

namespace gos::spank {

PlugstackArgs parse_plugstack_args(int argc, char *const argv[], const std::string &default_agent)
{
	PlugstackArgs a;
	a.agent = default_agent;
	auto bad = [&](const std::string &arg, const std::string &expected) {
		a.errors.push_back("plugstack argument '" + arg + "': expected " + expected);
	};
	for (int i = 0; i < argc; i++) {
		std::string arg = argv[i] ? argv[i] : "";
		auto eq = arg.find('=');
		std::string key = arg.substr(0, eq), value = eq == std::string::npos ? "" : arg.substr(eq + 1);
		if (eq == std::string::npos) {
			a.errors.push_back("plugstack argument '" + arg + "' is not KEY=VALUE");
		} else if (key == "socket" || key == "agent" || key == "config") {
			if (value.empty() || value[0] != '/')
				bad(arg, "an absolute path");
			else
				(key == "socket" ? a.socket : key == "agent" ? a.agent : a.config) = value;
		} else if (key == "mpi_hooks") {
			if (value == "auto")
				a.mpi_hooks = MpiHooks::automatic;
			else if (value == "always")
				a.mpi_hooks = MpiHooks::always;
			else if (value == "never")
				a.mpi_hooks = MpiHooks::never;
			else
				bad(arg, "auto, always or never");
		} else if (key == "on_daemon_down") {
			if (value == "fail" || value == "passthrough")
				a.fail_when_daemon_down = value == "fail";
			else
				bad(arg, "fail or passthrough");
		} else if (key == "default") {
			a.errors.push_back("plugstack argument '" + arg + "' is ignored: the option's default is now the "
					   "policy's default_oversub (gpuoversub.yaml(5)), which partitions and QOSes may set apart");
		} else if (key == "report_admin_comment") {
			if (value == "yes" || value == "no")
				a.report_admin_comment = value == "yes";
			else
				bad(arg, "yes or no");
		} else {
			a.errors.push_back("unknown plugstack argument '" + key +
					   "' (known: socket, agent, mpi_hooks, on_daemon_down, "
					   "report_admin_comment, config)");
		}
	}
	auto slash = a.agent.rfind('/');
	a.mpi_hooks_lib = (slash == std::string::npos ? std::string() : a.agent.substr(0, slash + 1)) +
			  "libgpuoversub_mpi.so";
	return a;
}

std::string_view option_value(const char *optarg)
{
	std::string_view v = optarg ? optarg : "";
	return v == "(null)" ? std::string_view() : v;
}

} // namespace gos::spank
