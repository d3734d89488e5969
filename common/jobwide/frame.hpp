// The wire codec of the job-wide channel: what one gpuoversubd sends the
// run's writer over TCP, what the writer answers, and the payload sealed in
// the frame's MUNGE credential (docs/jobwide.md, "The channel"). Every
// decoder refuses with a short token, usable as a Prometheus label
// (gpuoversub_jobwide_refused_total{reason}), never trusting a length.
//
// A frame: a fixed header of frame_header_size bytes, then the node name,
// then the credential. Integers are little-endian.
//   0  "GOSJ"        4  version (1)   5  kind (1: a node's part)
//   6  node length (u16)   8  job (u32, nonzero)   12  credential length (u32)
// The header alone says the frame's length, so a reader refuses one over
// frame_max_bytes before reading its body.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gos::jobwide {

using Bytes = std::vector<std::uint8_t>;

constexpr std::uint8_t frame_version = 1;
constexpr std::size_t frame_header_size = 16;
constexpr std::size_t frame_max_bytes = 16384;
constexpr std::size_t node_max_bytes = 64;
constexpr std::size_t credential_max_bytes = 12288;
constexpr std::size_t payload_max_bytes = 8192;
constexpr std::size_t answer_max_bytes = 128;

enum class Kind : std::uint8_t { part = 1 };

struct Frame {
	Kind kind = Kind::part;
	std::string node;	// [A-Za-z0-9._-], 1 to node_max_bytes
	std::uint32_t job = 0;	// nonzero
	std::string credential;	// printable ASCII, 1 to credential_max_bytes
	bool operator==(const Frame &) const = default;
};

// Whether NAME may be a node's name here: 1 to node_max_bytes of
// [A-Za-z0-9._-], so that it is safe in a log line, a path and a label.
bool valid_node(std::string_view name);

// The frame's bytes, or the reason it cannot be sent (the decoder's tokens).
std::optional<std::string> encode_frame(const Frame &f, Bytes &out);

// Checks the first frame_header_size bytes of HEADER (more are ignored):
// sets TOTAL to the whole frame's length, or returns why it is refused:
// short, bad_magic, bad_version, bad_kind, bad_node (length), bad_job,
// bad_credential (empty), oversize.
std::optional<std::string> check_header(std::span<const std::uint8_t> header, std::size_t &total);

// One whole frame, exactly: check_header's reasons, and short, trailing,
// bad_node (a character), bad_credential (not printable ASCII).
std::optional<std::string> decode_frame(std::span<const std::uint8_t> bytes, Frame &out);

// The writer's answer, one line: "ok", "dup", "busy" or "refused REASON"
// (REASON of [a-z_]), then '\n', at most answer_max_bytes in all.
struct Answer {
	enum class Word { ok, dup, busy, refused };
	Word word = Word::ok;
	std::string reason;	// refused only
	bool operator==(const Answer &) const = default;
};
// Reasons: bad_answer (the line or its reason), oversize.
std::optional<std::string> encode_answer(const Answer &a, std::string &out);
std::optional<std::string> decode_answer(std::string_view line, Answer &out);

// An answer sealed by the writer's daemon: the line "sealed CREDENTIAL\n",
// at most sealed_answer_max_bytes. The credential holds the answer and the
// part it answers, {"answer":"ok","job":J,"start":S,"node":"N"}, so that
// whoever holds the port in the daemon's place can neither forge an answer
// (munged names the uid that sealed it) nor pass one part's off as
// another's. Every answer to a part munged has opened is sealed; those
// given before (the door's limits, a bad frame) are not, and a sender takes
// them as busy.
constexpr std::size_t sealed_answer_max_bytes = 2048;
struct AnswerTo {
	std::uint32_t job = 0;
	std::int64_t start = 0;
	std::string node;	// the sender
};
// The credential's payload; reasons as encode_answer's.
std::optional<std::string> encode_answer_payload(const Answer &a, const AnswerTo &to, std::string &out);
// Reasons: bad_answer (the text), not_this_part (it answers another).
std::optional<std::string> decode_answer_payload(std::string_view text, const AnswerTo &to, Answer &out);
// The sealed line of CREDENTIAL; oversize or bad_answer when it cannot be one.
std::optional<std::string> encode_sealed_line(const std::string &credential, std::string &out);
// LINE's credential when LINE is a sealed answer, else nothing.
std::optional<std::string> sealed_credential(std::string_view line);

// What the credential seals: compact JSON with exactly these keys, at most
// payload_max_bytes. A missing or extra key, or one of another type, is
// refused: a sender of another version must not pass for this one.
struct Payload {
	std::uint32_t job = 0;	// nonzero
	std::uint32_t run = 0;	// Slurm's restart count
	std::int64_t start = 0;	// the run's start, seconds since the epoch
	std::string node;	// the sender
	std::vector<std::string> writers;	// the writer, then its successor if any
	std::string part;	// the node's part, JSON text, opaque here
	bool operator==(const Payload &) const = default;
};
// Reasons: bad_json, bad_payload (keys, types, writers), bad_node,
// bad_job, oversize.
std::optional<std::string> encode_payload(const Payload &p, std::string &out);
std::optional<std::string> decode_payload(std::string_view text, Payload &out);

} // namespace gos::jobwide
