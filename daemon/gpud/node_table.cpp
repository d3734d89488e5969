#include "daemon/gpud/node_table.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <sstream>

namespace gos::gpud {
namespace {

// A numeric address in one canonical text (IPv4-mapped IPv6 as IPv4), or
// empty when TEXT is not numeric.
std::string canonical(const std::string &text)
{
	char out[INET6_ADDRSTRLEN] = {};
	in_addr v4{};
	if (inet_pton(AF_INET, text.c_str(), &v4) == 1)
		return inet_ntop(AF_INET, &v4, out, sizeof out) ? out : "";
	in6_addr v6{};
	if (inet_pton(AF_INET6, text.c_str(), &v6) != 1)
		return "";
	if (IN6_IS_ADDR_V4MAPPED(&v6)) {
		std::memcpy(&v4, &v6.s6_addr[12], sizeof v4);
		return inet_ntop(AF_INET, &v4, out, sizeof out) ? out : "";
	}
	return inet_ntop(AF_INET6, &v6, out, sizeof out) ? out : "";
}

// Failed readings are tried again this soon, if the least time between
// readings is longer: the door refuses every sender until one succeeds.
constexpr NodeTable::Clock::duration retry_failed = std::chrono::seconds(60);

} // namespace

NodeAddrs parse_node_addrs(const std::string &text)
{
	NodeAddrs out;
	std::istringstream in(text);
	std::string line;
	while (std::getline(in, line)) {
		std::istringstream words(line);
		std::string kind, node, addr, more;
		words >> kind;
		if (kind == "unavailable" && (words >> node) && node == "nodes") {
			std::getline(words >> std::ws, out.unavailable);
			if (out.unavailable.empty())
				out.unavailable = "no reason given";
		} else if (kind == "addr" && (words >> node >> addr) && !(words >> more) && out.addr.size() < node_table_max)
			out.addr[node] = addr;
		else if (out.garbled.size() < 16)
			out.garbled.push_back(line);
	}
	return out;
}

NodeState parse_node_state(const std::string &text, const std::string &node)
{
	NodeState out;
	std::istringstream words(text);
	std::string kind, name, state, more;
	words >> kind;
	if (kind == "unavailable" && (words >> name) && name == "node") {
		std::getline(words >> std::ws, out.unavailable);
		if (out.unavailable.empty())
			out.unavailable = "no reason given";
	} else if (kind == "state" && (words >> name >> state) && !(words >> more) && name == node &&
		   (state == "down" || state == "up")) {
		out.down = state == "down";
	} else {
		out.unavailable = "an answer not understood: " + text.substr(0, 200);
	}
	return out;
}

bool is_node_address(const std::string &addr, const std::string &peer)
{
	std::string p = canonical(peer);
	if (p.empty())
		return false;
	if (std::string a = canonical(addr); !a.empty())
		return a == p;
	addrinfo hints{};
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	addrinfo *found = nullptr;
	if (getaddrinfo(addr.c_str(), nullptr, &hints, &found) != 0)
		return false;
	bool same = false;
	for (addrinfo *i = found; i && !same; i = i->ai_next) {
		char text[NI_MAXHOST];
		if (getnameinfo(i->ai_addr, i->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0)
			same = canonical(text) == p;
	}
	freeaddrinfo(found);
	return same;
}

NodeTable::NodeTable(Clock::time_point now, Clock::duration first_after, Clock::duration again_after)
	: again_after_(again_after), next_(now + first_after)
{
}

std::optional<std::string> NodeTable::address_of(const std::string &node)
{
	auto it = addr_.find(node);
	if (it != addr_.end())
		return it->second;
	mismatch();
	return std::nullopt;
}

void NodeTable::mismatch()
{
	wanted_ = true;
	if (!tried_)
		next_ = std::min(next_, Clock::now());
}

bool NodeTable::due(Clock::time_point now) const
{
	return wanted_ && now >= next_;
}

void NodeTable::take(NodeAddrs reading, Clock::time_point now)
{
	tried_ = true;
	if (reading.addr.empty()) {
		next_ = now + std::min(again_after_, retry_failed);
		return;		// the last good table stands, and a reading is still wanted
	}
	addr_ = std::move(reading.addr);
	wanted_ = false;
	next_ = now + again_after_;
}

} // namespace gos::gpud
