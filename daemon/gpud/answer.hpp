// What a request gets back from its handler (the client reads it as a
// proto::Reply), and the small helpers the daemon's parts share
// to build replies and messages.
#pragma once

#include <cstring>
#include <optional>
#include <string>
#include <type_traits>

namespace gos::gpud {

struct Answer {
	int status = 0;
	std::string error;
	std::string body;	// raw bytes for fixed replies, JSON text otherwise
	bool hang_up = false;	// the connection ends once this reply is sent
};

// Why the daemon's state refused a change: a negative errno and its words.
// The one error convention of the ledger and the tenant book: each change
// returns std::optional<Refusal>, empty when it was made whole, and
// nothing of a refused change stays.
struct Refusal {
	int status;
	std::string why;
};

// A change's outcome as its request's reply.
inline Answer answer_of(const std::optional<Refusal> &refused)
{
	if (refused)
		return {refused->status, refused->why, {}, false};
	return {};
}

// A fixed reply struct as the body's bytes.
template <class T>
std::string raw(const T &v)
{
	static_assert(std::is_trivially_copyable_v<T>);
	return std::string(reinterpret_cast<const char *>(&v), sizeof v);
}

// An engine's negative errno (or a positive one) in words.
inline std::string errno_text(int err)
{
	return std::strerror(err < 0 ? -err : err);
}

} // namespace gos::gpud
