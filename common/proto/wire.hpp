// Framing and validation of the wire ABI (include/gpuoversub/abi.h):
// encoding frames, and a decoder that takes bytes as they arrive and yields
// whole frames or a precise error. The decoder never trusts a length.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <gpuoversub/abi.h>
#include "common/util/text.hpp"

namespace gos::proto {

using Bytes = std::vector<std::uint8_t>;

struct Frame {
	gos_wire_hdr hdr{};
	Bytes payload;
};

Bytes encode(std::uint16_t type, std::uint32_t seq, const void *payload, std::size_t len);

template <class T>
Bytes encode(std::uint16_t type, std::uint32_t seq, const T &payload)
{
	static_assert(std::is_trivially_copyable_v<T>);
	return encode(type, seq, &payload, sizeof payload);
}

// A reply: gos_reply with status and message, then the body.
Bytes encode_reply(std::uint32_t seq, int status, std::string_view error, const void *body, std::size_t len);

// Checks a header on its own: magic, version, type, and its length: a
// request's against its row of the request table (requests.def). Returns
// the reason it is bad, or nothing.
std::optional<std::string> check_header(const gos_wire_hdr &hdr);
// The same for the daemon's side: a type only the daemon sends is refused
// too, so that no body is buffered for a frame that will be refused.
std::optional<std::string> check_request_header(const gos_wire_hdr &hdr);

// Incremental decoder: feed() bytes, then next() frames until it yields
// nothing. After an error, error() says why and the stream is unusable.
// Each header is checked as soon as it is whole, before its body arrives.
class Decoder {
public:
	enum class Accepts { any, requests };
	explicit Decoder(Accepts accepts = Accepts::any) : accepts_(accepts) {}
	void feed(const std::uint8_t *data, std::size_t len);
	std::optional<Frame> next();
	const std::string &error() const { return error_; }
	bool failed() const { return !error_.empty(); }
	// Bytes of a frame begun but not yet whole.
	bool partial() const { return pos_ < buf_.size(); }
	// Bytes received and not yet taken by next().
	std::size_t held() const { return buf_.size() - pos_; }
	// The header of a frame begun and not yet whole, once the header is.
	std::optional<gos_wire_hdr> pending() const;
	// Gives the buffer's memory back once nothing is pending.
	void release();

private:
	Accepts accepts_;
	Bytes buf_;
	std::size_t pos_ = 0;
	std::string error_;
};

// Copies a fixed-size payload into T, or says why it cannot.
template <class T>
std::optional<std::string> decode(const Frame &f, T &out)
{
	if (f.payload.size() != sizeof(T))
		return "payload of " + std::to_string(f.payload.size()) + " bytes, expected " + std::to_string(sizeof(T));
	std::memcpy(&out, f.payload.data(), sizeof(T));
	return std::nullopt;
}

// A reply frame split into status, message and body.
struct Reply {
	int status = 0;
	std::string error;
	Bytes body;
};
std::optional<Reply> decode_reply(const Frame &f);

// True if a fixed char array holds a NUL-terminated string.
template <std::size_t N>
bool terminated(const char (&s)[N])
{
	return std::memchr(s, 0, N) != nullptr;
}

// True if a fixed char array holds a NUL-terminated string of safe text
// (valid UTF-8 without control characters, text.hpp): a name the daemon
// logs, prints and writes to JSON records.
template <std::size_t N>
bool printable_name(const char (&s)[N])
{
	const void *end = std::memchr(s, 0, N);
	return end && safe_text(std::string_view(s, static_cast<const char *>(end) - s));
}

} // namespace gos::proto
