// The public C API (include/gpuoversub/gpuoversub.h).
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "agent.hpp"
#include "reentry.hpp"
#include "settings.hpp"

using gos::agent::Agent;
using gos::agent::Reentry;

namespace {

// GPUOVERSUB_PRIORITY_FILE: "name priority" per line, '#' comments.
// Read once; bad lines are reported with their line number and skipped.
const std::map<std::string, int> &tag_priorities()
{
	static const std::map<std::string, int> tags = [] {
		std::map<std::string, int> out;
		const std::string &path = gos::agent::settings().priority_file;
		if (path.empty())
			return out;
		std::ifstream in(path);
		if (!in) {
			gos::agent::warn("GPUOVERSUB_PRIORITY_FILE " + path + " cannot be read; tags have no priority");
			return out;
		}
		std::string line;
		for (int n = 1; std::getline(in, line); n++) {
			line = line.substr(0, line.find('#'));
			std::istringstream words(line);
			std::string name, extra;
			int prio;
			if (!(words >> name))
				continue;
			if (!(words >> prio) || (words >> extra) || prio < GPUOVERSUB_PRIORITY_MIN ||
			    prio > GPUOVERSUB_PRIORITY_MAX) {
				gos::agent::warn(path + ":" + std::to_string(n) + ": expected \"name priority\" with a "
					       "priority from 0 to 15; line skipped");
				continue;
			}
			out[name] = prio;
		}
		return out;
	}();
	return tags;
}

} // namespace

GOS_EXPORT int gpuoversub_set_priority(const void *ptr, size_t len, int priority)
{
	if (!ptr || priority < GPUOVERSUB_PRIORITY_MIN || priority > GPUOVERSUB_PRIORITY_MAX)
		return -EINVAL;
	Reentry in;
	return Agent::get().set_priority(reinterpret_cast<std::uintptr_t>(ptr), len,
					 static_cast<std::uint32_t>(priority));
}

GOS_EXPORT int gpuoversub_tag(const void *ptr, const char *name)
{
	if (!ptr || !name)
		return -EINVAL;
	auto it = tag_priorities().find(name);
	if (it == tag_priorities().end())
		return -ENOENT;
	Reentry in;
	return Agent::get().set_priority_of_buffer(reinterpret_cast<std::uintptr_t>(ptr),
						   static_cast<std::uint32_t>(it->second));
}

GOS_EXPORT int gpuoversub_stats(struct gpuoversub_usage *out)
{
	if (!out)
		return -EINVAL;
	Reentry in;
	return Agent::get().stats(*out);
}

GOS_EXPORT int gpuoversub_on_advice(gpuoversub_advice_fn fn, void *ctx)
{
	return Agent::get().on_advice(fn, ctx);
}

GOS_EXPORT int gpuoversub_set_rank(int rank, int local_rank, int world_size, const char *node)
{
	Reentry in;
	return Agent::get().set_rank(rank, local_rank, world_size, node);
}

// Not in gpuoversub.h: libgpuoversub_mpi.so hands rank 0's gather over here.
GOS_EXPORT int gpuoversub_mpi_report_ranks(const gos_rank_record *records, size_t count)
{
	Reentry in;
	return Agent::get().report_ranks(records, count);
}
