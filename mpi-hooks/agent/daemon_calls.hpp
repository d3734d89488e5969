// What only gpuoversubd answers, whichever the engine: the hello, the job's
// view of a GPU (meminfo), activity and ranks. DaemonClient implements
// them; where the engine is gpuoversub.ko they still go to the daemon.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <gpuoversub/abi.h>

namespace gos::agent {

class DaemonCalls {
public:
	virtual ~DaemonCalls() = default;

	// Every call returns 0 or -errno; -ENOTCONN once the daemon is gone.
	// error() holds the daemon's explanation of the last failure.
	virtual int hello(const gos_req_hello &req, gos_rep_hello &rep) = 0;
	virtual int meminfo(std::uint32_t gpu, gos_rep_meminfo &rep) = 0;
	virtual int activity(std::uint32_t gpu, std::uint32_t launches) = 0;	// not waited for
	virtual int rank(const gos_req_rank &req) = 0;
	// Sends records in frames of at most GOS_RANK_REPORT_MAX.
	virtual int rank_report(const gos_rank_record *records, std::size_t count) = 0;
	virtual std::string error() const = 0;
};

// What the job may still allocate on a GPU, in its cuMemGetInfo view.
inline std::uint64_t headroom(const gos_rep_meminfo &info)
{
	return info.allowed > info.used ? info.allowed - info.used : 0;
}

} // namespace gos::agent
