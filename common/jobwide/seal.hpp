// A node's part made ready for the job-wide channel: the payload sealed in
// a MUNGE credential by whoever calls (the epilog: root, which is what the
// writer checks), then framed (docs/jobwide.md, "The channel"). Built with
// the MUNGE wrapper, so only what links libmunge has it.
#pragma once

#include <optional>
#include <string>

#include <sys/types.h>

#include "common/jobwide/frame.hpp"

namespace gos::jobwide {

// Why a part was not sealed. BY_MUNGED: munged did not seal it (none
// answers at the socket, or it refused), which the site fixes on the node,
// and WHY is munged's words; otherwise the part itself would not encode,
// and WHY names the step, then its words.
struct SealFailure {
	bool by_munged = false;
	std::string why;
};

// Sets FRAME to P sealed through the munged at MUNGE_SOCKET, valid TTL
// seconds, and framed; or returns why not. With READER (the daemons' uid),
// only that uid and root can open it: a part is no other user's to read.
std::optional<SealFailure> seal_part(const Payload &p, int ttl, const std::string &munge_socket, std::string &frame,
				     std::optional<uid_t> reader = std::nullopt);

} // namespace gos::jobwide
