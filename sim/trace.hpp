// Allocation traces for the simulator: CSV lines of
//   time,tenant,op,size,priority,tag,access
// See gpuoversub-sim(1) for the format.
#pragma once

#include <cstdint>
#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gos::sim {

enum class Op { capacity, external, weight, alloc, free, prio, exit };

struct Event {
	double time = 0;		// seconds from the start
	std::size_t tenant = 0;		// index into Trace::tenants
	Op op = Op::alloc;
	std::uint64_t size = 0;		// bytes; capacity/external; weight for `weight`
	std::uint32_t priority = 8;
	std::string tag;		// names the buffer within its tenant
	double access = 1;		// passes over the buffer per second
	int line = 0;
};

struct Trace {
	std::string file;
	std::vector<std::string> tenants;	// in order of first appearance
	std::vector<Event> events;
	std::uint64_t first_capacity = 0;
	double duration() const { return events.empty() ? 0 : events.back().time; }
};

// "FILE:LINE: reason".
class TraceError : public std::runtime_error {
public:
	using std::runtime_error::runtime_error;
};

Trace parse_trace(std::istream &in, const std::string &name);
Trace load_trace(const std::string &path);

} // namespace gos::sim
