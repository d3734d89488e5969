// What the job-wide test tools (gos_jobwide_send, gos_jobwide_nodes) share:
// their way to fail, their numbers, and a part sealed as the epilog seals it.
#pragma once

#include <errno.h>	// program_invocation_short_name

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/jobwide/seal.hpp"
#include "common/util/munge.hpp"
#include "daemon/gpud/jobwide_sender.hpp"

namespace gos::jobwide_tool {

// send_for and a minute, as the epilog's credential lives.
constexpr int ttl_s = 660;

[[noreturn]] inline void fail(const std::string &why)
{
	std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, why.c_str());
	std::exit(2);
}

inline std::uint64_t number(const char *text)
{
	char *end = nullptr;
	unsigned long long v = std::strtoull(text, &end, 10);
	if (!*text || *end)
		fail(std::string("not a number: ") + text);
	return v;
}

// P sealed with the munged at MUNGE_SOCKET (as whoever runs the tool), framed.
inline std::string frame_of(const std::string &munge_socket, const jobwide::Payload &p)
{
	std::string frame;
	if (auto failure = jobwide::seal_part(p, ttl_s, munge_socket, frame))
		fail(failure->why);
	return frame;
}

// What a sender believes of the answer to P: sealed by root (the daemons
// of the harnesses), for this part, opened on WORKERS.
inline gpud::Believe believe(boost::asio::thread_pool &workers, const std::string &munge_socket,
			     const jobwide::Payload &p)
{
	return {&workers, [munge_socket](const std::string &c) { return munge::decode(c, munge_socket); }, {0},
		{p.job, p.start, p.node}};
}

} // namespace gos::jobwide_tool
