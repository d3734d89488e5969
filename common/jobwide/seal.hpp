// A node's part made ready for the job-wide channel: the payload sealed in
// a MUNGE credential by whoever calls (the epilog: root, which is what the
// writer checks), then framed (docs/jobwide.md, "The channel"). Built with
// the MUNGE wrapper, so only what links libmunge has it.
#pragma once

#include <optional>
#include <string>

#include "common/jobwide/frame.hpp"

namespace gos::jobwide {

// Sets FRAME to P sealed through the munged at MUNGE_SOCKET, valid TTL
// seconds, and framed; or returns why not (the step that failed, then its
// words).
std::optional<std::string> seal_part(const Payload &p, int ttl, const std::string &munge_socket, std::string &frame);

} // namespace gos::jobwide
