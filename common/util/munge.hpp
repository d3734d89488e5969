// A thin wrapper over libmunge: seal bytes into a credential and open one,
// through the munged at a given socket. The job-wide channel's parts travel
// in such credentials, which prove their sender's uid (docs/jobwide.md,
// "The channel"). Each call makes a context of its own, so calls from
// several threads never share one.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <sys/types.h>

namespace gos::munge {

// Sets CREDENTIAL to one holding PAYLOAD, valid TTL seconds (0: munged's
// default; munged caps it at its own maximum), or returns what went wrong,
// in munged's words. With READER, munged opens it only for that uid and
// root (MUNGE_OPT_UID_RESTRICTION): no other user reads the payload. Blocks
// on munged.
std::optional<std::string> encode(std::string_view payload, int ttl, const std::string &socket,
				  std::string &credential, std::optional<uid_t> reader = std::nullopt);

struct Decoded {
	// ok: the credential is good. expired, replayed and invalid say why
	// it is not; other: munged could not say (not reachable, out of memory).
	enum class Status { ok, expired, replayed, invalid, other };
	Status status = Status::other;
	std::string error;	// munged's words, when not ok
	// What the credential holds; trustworthy only when ok (munged
	// returns them for an expired or a replayed one too).
	uid_t uid = static_cast<uid_t>(-1);
	gid_t gid = static_cast<gid_t>(-1);
	std::string payload;
};

// Opens CREDENTIAL. Blocks on munged, for as long as munged takes: the
// daemon calls it on a worker thread, never its event loop.
Decoded decode(const std::string &credential, const std::string &socket);

// The status as a word for logs and labels: "ok", "expired", ... Inline:
// what only reads a verdict need not link libmunge.
inline const char *status_name(Decoded::Status s)
{
	switch (s) {
	case Decoded::Status::ok: return "ok";
	case Decoded::Status::expired: return "expired";
	case Decoded::Status::replayed: return "replayed";
	case Decoded::Status::invalid: return "invalid";
	case Decoded::Status::other: break;
	}
	return "other";
}

} // namespace gos::munge
