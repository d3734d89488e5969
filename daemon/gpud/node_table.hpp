// Slurm's node table as the job-wide door needs it: each node's NodeAddr,
// against which a sender's peer address is checked before its credential
// is decoded (docs/jobwide.md, "The channel", check 3). It is read with
// `gpuoversub-slurm-facts --node-addrs` (one slurm_load_node): once after
// the daemon starts, at a random point of the first minute so that a
// cluster's daemons started together do not ask together (or at once, when
// a part needs it first), and again when a sender names a node it lacks or
// whose address differs, at most once per ten minutes. Between readings the last good one stands.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gos::gpud {

// One reading of `--node-addrs`.
struct NodeAddrs {
	std::map<std::string, std::string> addr;	// node name: NodeAddr as Slurm holds it
	std::string unavailable;	// why slurmctld gave none; empty when it did
	std::vector<std::string> garbled;	// lines not understood
};
// At most this many nodes are kept from a reading, Slurm's own cap on a
// job's hostlist: a garbled answer can't grow the table without bound.
constexpr std::size_t node_table_max = 65536;
NodeAddrs parse_node_addrs(const std::string &text);

// One answer of `--node-state NODE`: whether slurmctld holds NODE down
// (down, or not responding); none when it could not say, and why.
struct NodeState {
	std::optional<bool> down;
	std::string unavailable;
};
NodeState parse_node_state(const std::string &text, const std::string &node);

// Whether PEER (a numeric address, as accept(2) gave it) is ADDR, a
// NodeAddr: the same address when both are numeric (an IPv4-mapped IPv6
// peer is its IPv4 address); otherwise ADDR is a host name, looked up with
// getaddrinfo, which blocks: called from a worker, never the event loop.
bool is_node_address(const std::string &addr, const std::string &peer);

class NodeTable {
public:
	using Clock = std::chrono::steady_clock;

	// FIRST_AFTER: the delay before the first reading (the caller draws it
	// from 0 to 60 s); AGAIN_AFTER: the least time between two readings.
	NodeTable(Clock::time_point now, Clock::duration first_after, Clock::duration again_after);

	// The node's NodeAddr, when the latest reading held it. A miss (no
	// such node) asks for a reading, which comes no sooner than
	// again_after from the last.
	std::optional<std::string> address_of(const std::string &node);
	// A sender's address was not its node's: as a miss. Before the
	// first reading, a miss brings it forward to now: a part is waiting.
	void mismatch();

	// Whether a reading is due now; the caller then reads and calls take().
	bool due(Clock::time_point now) const;
	// A reading's result. One without addresses (slurmctld unreachable)
	// keeps the table as it was.
	void take(NodeAddrs reading, Clock::time_point now);
	std::size_t size() const { return addr_.size(); }

private:
	std::map<std::string, std::string> addr_;
	Clock::duration again_after_;
	Clock::time_point next_;	// the first reading, or the earliest next one
	bool wanted_ = true;	// a reading is asked for (the first, or a miss)
	bool tried_ = false;	// a reading was taken, with addresses or not
};

} // namespace gos::gpud
