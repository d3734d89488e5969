#include "agent_node.hpp"

#include <fstream>
#include <sstream>

namespace gos_test {
namespace {

const std::string gpu_256m = "simulated_gpus:\n  - {memory: 256M, numa_node: 0, pci_bus_id: '0000:17:00.0'}\n";

// The balloon stays off unless a test configures it: it judges a job
// without kernel launches idle after a few seconds, and a slow (sanitized)
// run would otherwise see shares change under tests about something else.
std::string with_defaults(const std::string &yaml)
{
	return gpu_256m + "return_interval: 50ms\n" +
	       (yaml.find("balloon:") == std::string::npos ? "balloon: {enabled: false}\n" : "") + yaml;
}

} // namespace

Node::Node(const std::string &yaml, bool start) : daemon(with_defaults(yaml), start), gpu(256 * MiB, daemon.dir) {}

std::uint64_t field(const nlohmann::json &t, const char *key)
{
	return t.is_null() ? 0 : t[key].get<std::uint64_t>();
}

std::string call_log(const FakeGpu &gpu)
{
	std::ifstream in(gpu.calls);
	std::stringstream s;
	s << in.rdbuf();
	return s.str();
}

std::vector<std::uint64_t> usage(AppProcess &app)
{
	std::istringstream in(app.cmd("usage"));
	std::string ok;
	std::vector<std::uint64_t> u(5);
	in >> ok >> u[0] >> u[1] >> u[2] >> u[3] >> u[4];
	return u;
}

std::size_t count(const std::string &text, const std::string &what)
{
	std::size_t n = 0;
	for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
		n++;
	return n;
}

} // namespace gos_test
