// libFuzzer target: any bytes as a trace. Parsing must either succeed or
// throw TraceError; a trace that parses and is short enough is replayed
// under gpuoversub, which must not crash or trip a sanitizer.
#include <cstdint>
#include <sstream>
#include <string>

#include "sim/replay.hpp"
#include "sim/trace.hpp"

using namespace gos::sim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	std::istringstream in(std::string(reinterpret_cast<const char *>(data), size));
	Trace trace;
	try {
		trace = parse_trace(in, "fuzz.csv");
	} catch (const TraceError &) {
		return 0;
	}
	if (trace.duration() > 30 || trace.events.size() > 500)
		return 0;
	ReplayOptions opt;
	opt.capacity = 1ULL << 30;
	opt.chunk_size = 1 << 20;
	replay(trace, policies(opt).back(), opt);
	return 0;
}
