#include "daemon/gpud/port_holder.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/util/user_name.hpp"

namespace gos::gpud {

namespace {

// TCP states that hold a local port for a listener: LISTEN (0A), and a
// socket bound but not yet listening or connected (CLOSE, 07).
bool holds_port(const std::string &state)
{
	return state == "0A" || state == "07";
}

} // namespace

std::vector<uid_t> port_holders_in(const std::string &text, std::uint16_t port)
{
	std::vector<uid_t> out;
	std::istringstream lines(text);
	std::string line;
	std::getline(lines, line);	// the header
	while (std::getline(lines, line)) {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
		std::istringstream f(line);
		std::string sl, local, remote, state, queues, timer, retransmits;
		unsigned long uid = 0;
		if (!(f >> sl >> local >> remote >> state >> queues >> timer >> retransmits >> uid))
			continue;
		const auto colon = local.rfind(':');
		if (colon == std::string::npos || !holds_port(state))
			continue;
		unsigned long p = 0;
		try {
			p = std::stoul(local.substr(colon + 1), nullptr, 16);
		} catch (const std::exception &) {
			continue;
		}
		const auto who = static_cast<uid_t>(uid);
		if (p == port && std::find(out.begin(), out.end(), who) == out.end())
			out.push_back(who);
	}
	return out;
}

std::string port_holders(std::uint16_t port)
{
	std::vector<uid_t> all;
	for (const char *path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
		std::ifstream in(path);
		std::stringstream text;
		text << in.rdbuf();
		for (uid_t uid : port_holders_in(text.str(), port))
			if (std::find(all.begin(), all.end(), uid) == all.end())
				all.push_back(uid);
	}
	std::string out;
	for (uid_t uid : all)
		out += (out.empty() ? " (held by " : ", ") + uid_and_name(uid);
	return out.empty() ? out : out + ")";
}

} // namespace gos::gpud
