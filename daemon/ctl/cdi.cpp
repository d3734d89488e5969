#include "daemon/ctl/cdi.hpp"

#include <getopt.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "common/config/config.hpp"
#include "common/util/atomic_file.hpp"
#include "common/util/json_text.hpp"
#include "common/util/text.hpp"

namespace gos::ctl {
namespace {

using nlohmann::ordered_json;

const char *cdi_usage =
	"usage: gpuoversubctl cdi [--output FILE] [--config FILE] [--agent PATH]\n"
	"  -o, --output FILE  write the spec to FILE, atomically (/etc/cdi/gpuoversub.json);\n"
	"                     without it, to standard output\n"
	"  -c, --config FILE  the policy whose socket the spec binds in\n"
	"                     (default /etc/gpuoversub/gpuoversub.yaml)\n"
	"  --agent PATH       the agent (default PREFIX/lib/libgpuoversub.so, PREFIX\n"
	"                     being gpuoversubctl's); the MPI hooks are beside it\n";

// Said with the usage, exit status 2.
struct BadOption : std::runtime_error {
	using std::runtime_error::runtime_error;
};

// What the spec names: host paths, each bound in at the same path, so that
// the container sees what the SPANK plugin gives a task outside one.
struct Node {
	std::string agent;
	std::string mpi_hooks;	// empty where they are not installed
	std::string socket;
	bool device_node;	// /dev/gpuoversub: the kernel module is loaded
};

std::string dir_of(const std::string &path)
{
	return path.substr(0, path.rfind('/'));
}

bool is_a(const std::string &path, mode_t type)
{
	struct stat st;
	return ::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == type;
}

// `make install` puts gpuoversubctl in PREFIX/bin and the agent in
// PREFIX/lib, where the plugin preloads it from; the build tree is laid out
// the same way.
std::string installed_agent()
{
	char exe[4096];
	ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe);
	if (n <= 0 || n == sizeof exe)
		throw std::runtime_error(std::string("cannot read /proc/self/exe to find the agent beside gpuoversubctl (") +
					 (n <= 0 ? std::strerror(errno) : "too long") + "); give it with --agent");
	return dir_of(dir_of(std::string(exe, static_cast<std::size_t>(n)))) + "/lib/libgpuoversub.so";
}

Node this_node(const std::string &config_path, std::string agent)
{
	if (agent.empty())
		agent = installed_agent();
	else if (agent[0] != '/')
		throw BadOption("--agent needs an absolute path, not '" + agent + "'");
	if (!is_a(agent, S_IFREG))
		throw std::runtime_error("the agent " + agent +
					 " is not there (install libgpuoversub, or give its path with --agent)");
	std::string hooks = dir_of(agent) + "/libgpuoversub_mpi.so";
	std::string socket = config::load_config(config_path).start.socket;
	if (dir_of(socket).empty())
		throw std::runtime_error(config_path + ": the socket " + socket +
					 " is in /, which no container can have bound in; give it a directory of its own");
	return {agent, is_a(hooks, S_IFREG) ? hooks : "", socket, is_a("/dev/gpuoversub", S_IFCHR)};
}

ordered_json bound_in(const std::string &path, bool directory)
{
	ordered_json options = {"ro", "nosuid", "nodev"};
	if (directory)
		options.push_back("noexec");
	options.push_back("bind");
	return {{"hostPath", path}, {"containerPath", path}, {"options", options}};
}

// One spec, kind gpuoversub.org/agent. What every container gets (the
// socket, the mounts, the device node) is the spec's; each device sets the
// preload, since a CDI device's environment replaces the container's own
// LD_PRELOAD and no one can add the MPI hooks to it afterwards: "all" is
// the agent, "mpi" the agent and the hooks (only where they are installed).
// CDI 0.3.0, the oldest version with all of it: runtimes refuse a version
// they do not know, and Debian 12's podman 4.3 knows none after 0.5.0.
ordered_json spec(const Node &n)
{
	ordered_json mounts = {bound_in(n.agent, false)};
	if (!n.mpi_hooks.empty())
		mounts.push_back(bound_in(n.mpi_hooks, false));
	mounts.push_back(bound_in(dir_of(n.socket), true));
	ordered_json edits = {{"env", {"GPUOVERSUB_SOCKET=" + n.socket}}};
	if (n.device_node)
		edits["deviceNodes"] = {{{"path", "/dev/gpuoversub"}}};
	edits["mounts"] = mounts;

	auto device = [](const std::string &name, const std::string &preload) {
		return ordered_json{{"name", name}, {"containerEdits", {{"env", {"LD_PRELOAD=" + preload}}}}};
	};
	ordered_json devices = {device("all", n.agent)};
	if (!n.mpi_hooks.empty())
		devices.push_back(device("mpi", n.agent + ":" + n.mpi_hooks));
	return {{"cdiVersion", "0.3.0"}, {"kind", "gpuoversub.org/agent"}, {"devices", devices}, {"containerEdits", edits}};
}

} // namespace

int cdi_main(int argc, char **argv)
{
	std::string output, config = "/etc/gpuoversub/gpuoversub.yaml", agent;
	static const option longopts[] = {{"output", required_argument, nullptr, 'o'},
					  {"config", required_argument, nullptr, 'c'},
					  {"agent", required_argument, nullptr, 'a'},
					  {"help", no_argument, nullptr, 'h'},
					  {nullptr, 0, nullptr, 0}};
	opterr = 0;	// each bad option is said below, with the usage
	try {
		for (int c; (c = getopt_long(argc, argv, ":o:c:h", longopts, nullptr)) != -1;) {
			switch (c) {
			case 'o':
				output = optarg;
				if (output.empty())
					throw BadOption("--output needs a file name");
				break;
			case 'c': config = optarg; break;
			case 'a': agent = optarg; break;
			case 'h': std::cout << cdi_usage; return 0;
			case ':': throw BadOption(std::string(argv[optind - 1]) + " needs a value");
			default: throw BadOption("unknown option '" + std::string(argv[optind - 1]) + "'");
			}
		}
		if (optind < argc)
			throw BadOption("unexpected argument '" + std::string(argv[optind]) + "'");
		std::string text = json_text(spec(this_node(config, agent)), 2) + "\n";
		if (output.empty())
			std::cout << text;
		else
			write_file_atomically(output, text, 0644);
	} catch (const BadOption &e) {
		std::cerr << "gpuoversubctl cdi: " << escaped(e.what()) << "\n" << cdi_usage;
		return 2;
	} catch (const std::exception &e) {
		std::cerr << "gpuoversubctl cdi: " << escaped(e.what()) << "\n";
		return 1;
	}
	return 0;
}

} // namespace gos::ctl
