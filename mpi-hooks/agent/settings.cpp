#include "settings.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "common/util/units.hpp"

namespace gos::agent {
namespace {

const char *env(const char *name)
{
	const char *v = std::getenv(name);
	return v && *v ? v : nullptr;
}

std::vector<std::string> split(const std::string &s, char sep)
{
	std::vector<std::string> out;
	std::stringstream in(s);
	for (std::string part; std::getline(in, part, sep);)
		if (!part.empty())
			out.push_back(part);
	return out;
}

long long number(const char *name, long long dflt, Settings &s)
{
	const char *v = env(name);
	if (!v)
		return dflt;
	char *end;
	long long n = std::strtoll(v, &end, 10);
	if (*end || n < 0) {
		s.problems.push_back(std::string(name) + "=" + v + " is not a non-negative integer; using " +
				     std::to_string(dflt));
		return dflt;
	}
	return n;
}

// NAME=SIZE (4M, 1G); a malformed one is a problem, and `otherwise` says
// what stands instead.
std::optional<std::uint64_t> size(const char *name, const char *otherwise, Settings &s)
{
	const char *v = env(name);
	if (!v)
		return std::nullopt;
	if (auto n = parse_size(v))
		return n;
	s.problems.push_back(std::string(name) + "=" + v + " is not a size such as 256M; " + otherwise);
	return std::nullopt;
}

// NAME=ON or NAME=OFF; anything else is a problem, and dflt stands.
bool choice(const char *name, const std::string &on, const std::string &off, bool dflt, Settings &s)
{
	const char *v = env(name);
	if (!v)
		return dflt;
	if (v == on || v == off)
		return v == on;
	s.problems.push_back(std::string(name) + "=" + v + " is neither " + on + " nor " + off + "; using " +
			     (dflt ? on : off));
	return dflt;
}

Settings load()
{
	Settings s;
	if (const char *v = env("GPUOVERSUB_SOCKET"))
		s.socket = v;
	if (const char *v = env("GPUOVERSUB_REQUIRED"))
		s.required = std::string(v) == "1" || std::string(v) == "yes";
	s.evictable_min = size("GPUOVERSUB_EVICTABLE_MIN", "using 1M", s).value_or(s.evictable_min);
	s.pinned_libs = split(env("GPUOVERSUB_UNEVICTABLE_LIBS") ? env("GPUOVERSUB_UNEVICTABLE_LIBS")
								 : "libnccl:libnvshmem:libuct_cuda:libcuda_ipc",
			      ':');
	if (const char *v = env("GPUOVERSUB_PRIORITY_FILE"))
		s.priority_file = v;
	if (auto n = size("GPUOVERSUB_CONTEXT_BYTES", "measuring instead", s))
		s.context_bytes = static_cast<long long>(*n);
	s.call_timeout_ms = static_cast<int>(number("GPUOVERSUB_TIMEOUT_MS", 10000, s));
	s.inline_prefetch = choice("GPUOVERSUB_ALLOC_PREFETCH", "inline", "deferred", true, s);
	s.evictable_pools = choice("GPUOVERSUB_POOLS", "evictable", "device", true, s);
	s.ipc_device = choice("GPUOVERSUB_IPC", "device", "managed", false, s);
	// 4 until a GPU measures 1, 2, 4 and 8 (make bench-gpu): the fake
	// driver's model only says more lanes help while migrations overlap.
	auto workers = number("GPUOVERSUB_EVICT_WORKERS", 4, s);
	if (workers < 1 || workers > 64) {
		s.problems.push_back("GPUOVERSUB_EVICT_WORKERS=" + std::to_string(workers) +
				     " is not between 1 and 64; using 4");
		workers = 4;
	}
	s.evict_workers = static_cast<unsigned>(workers);
	s.reserve_bytes = size("GPUOVERSUB_RESERVE", "the reserve stays off", s).value_or(0);
	s.verbose = env("GPUOVERSUB_VERBOSE") && std::string(env("GPUOVERSUB_VERBOSE")) == "1";
	s.job_id = static_cast<std::uint64_t>(number("SLURM_JOB_ID", 0, s));
	for (const char *name : {"SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"})
		if (env(name)) {
			s.rank = static_cast<int>(number(name, -1, s));
			break;
		}
	for (const char *name : {"SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"})
		if (env(name)) {
			s.local_rank = static_cast<int>(number(name, -1, s));
			break;
		}
	for (const char *name : {"SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE"})
		if (env(name)) {
			s.world_size = static_cast<unsigned>(number(name, 0, s));
			break;
		}
	return s;
}

} // namespace

const Settings &settings()
{
	static const Settings s = [] {
		Settings loaded = load();
		for (const auto &p : loaded.problems)
			warn(p);
		return loaded;
	}();
	return s;
}

void warn(const std::string &msg)
{
	std::fprintf(stderr, "gpuoversub[%d]: %s\n", static_cast<int>(getpid()), msg.c_str());
}

void debug(const std::string &msg)
{
	if (settings().verbose)
		warn(msg);
}

} // namespace gos::agent
