// The job-wide channel's codec (frame.hpp): checks cheapest first, each
// refusal a token.
#include "common/jobwide/frame.hpp"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

namespace gos::jobwide {

namespace {

constexpr std::string_view magic = "GOSJ";

std::uint32_t get_le(std::span<const std::uint8_t> b, std::size_t at, std::size_t width)
{
	std::uint32_t v = 0;
	for (std::size_t i = width; i-- > 0;)
		v = v << 8 | b[at + i];
	return v;
}

void put_le(Bytes &out, std::size_t at, std::uint32_t v, std::size_t width)
{
	for (std::size_t i = 0; i < width; i++)
		out[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

bool printable(std::string_view s)
{
	return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

bool valid_reason(std::string_view r)
{
	return !r.empty() && std::all_of(r.begin(), r.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
}

// What the frame's fields must be, apart from the lengths the header holds.
std::optional<std::string> check_fields(const Frame &f)
{
	if (!valid_node(f.node))
		return "bad_node";
	if (!printable(f.credential))
		return "bad_credential";
	return std::nullopt;
}

} // namespace

bool valid_node(std::string_view name)
{
	return !name.empty() && name.size() <= node_max_bytes &&
	       std::all_of(name.begin(), name.end(), [](char c) {
		       return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
			      c == '_' || c == '-';
	       });
}

std::optional<std::string> encode_frame(const Frame &f, Bytes &out)
{
	if (f.kind != Kind::part)
		return "bad_kind";
	if (f.job == 0)
		return "bad_job";
	if (f.credential.empty())
		return "bad_credential";
	if (f.credential.size() > credential_max_bytes)
		return "oversize";
	if (auto bad = check_fields(f))
		return bad;
	// Sized first and filled in place: g++ 12 warns (wrongly) of an
	// overflow where a vector grows by insert from a string_view.
	Bytes b(frame_header_size + f.node.size() + f.credential.size());
	std::copy(magic.begin(), magic.end(), b.begin());
	b[4] = frame_version;
	b[5] = static_cast<std::uint8_t>(f.kind);
	put_le(b, 6, static_cast<std::uint32_t>(f.node.size()), 2);
	put_le(b, 8, f.job, 4);
	put_le(b, 12, static_cast<std::uint32_t>(f.credential.size()), 4);
	std::copy(f.node.begin(), f.node.end(), b.begin() + frame_header_size);
	std::copy(f.credential.begin(), f.credential.end(), b.begin() + frame_header_size + f.node.size());
	out = std::move(b);
	return std::nullopt;
}

std::optional<std::string> check_header(std::span<const std::uint8_t> header, std::size_t &total)
{
	if (header.size() < frame_header_size)
		return "short";
	if (!std::equal(magic.begin(), magic.end(), header.begin()))
		return "bad_magic";
	if (header[4] != frame_version)
		return "bad_version";
	if (header[5] != static_cast<std::uint8_t>(Kind::part))
		return "bad_kind";
	const std::size_t node = get_le(header, 6, 2), credential = get_le(header, 12, 4);
	if (node == 0 || node > node_max_bytes)
		return "bad_node";
	if (get_le(header, 8, 4) == 0)
		return "bad_job";
	if (credential == 0)
		return "bad_credential";
	// Either bound alone refuses a frame over frame_max_bytes; both are kept
	// so that neither limit can be raised past the other unseen.
	if (credential > credential_max_bytes || frame_header_size + node + credential > frame_max_bytes)
		return "oversize";
	total = frame_header_size + node + credential;
	return std::nullopt;
}

std::optional<std::string> decode_frame(std::span<const std::uint8_t> bytes, Frame &out)
{
	std::size_t total = 0;
	if (auto bad = check_header(bytes, total))
		return bad;
	if (bytes.size() < total)
		return "short";
	if (bytes.size() > total)
		return "trailing";
	const std::size_t node = get_le(bytes, 6, 2);
	Frame f;
	f.kind = static_cast<Kind>(bytes[5]);
	f.job = get_le(bytes, 8, 4);
	f.node.assign(bytes.begin() + frame_header_size, bytes.begin() + frame_header_size + node);
	f.credential.assign(bytes.begin() + frame_header_size + node, bytes.end());
	if (auto bad = check_fields(f))
		return bad;
	out = std::move(f);
	return std::nullopt;
}

namespace {

constexpr std::string_view words[] = {"ok", "dup", "busy", "refused"};

} // namespace

std::optional<std::string> encode_answer(const Answer &a, std::string &out)
{
	std::string line(words[static_cast<std::size_t>(a.word)]);
	if (a.word == Answer::Word::refused) {
		if (!valid_reason(a.reason))
			return "bad_answer";
		line += ' ' + a.reason;
	} else if (!a.reason.empty()) {
		return "bad_answer";
	}
	line += '\n';
	if (line.size() > answer_max_bytes)
		return "oversize";
	out = std::move(line);
	return std::nullopt;
}

std::optional<std::string> decode_answer(std::string_view line, Answer &out)
{
	if (line.size() > answer_max_bytes)
		return "oversize";
	if (line.empty() || line.back() != '\n')
		return "bad_answer";
	line.remove_suffix(1);
	const std::string_view word = line.substr(0, line.find(' '));
	for (std::size_t i = 0; i < std::size(words); i++) {
		if (word != words[i])
			continue;
		Answer a{static_cast<Answer::Word>(i), {}};
		if (a.word == Answer::Word::refused) {
			if (word.size() == line.size() || !valid_reason(line.substr(word.size() + 1)))
				return "bad_answer";
			a.reason = line.substr(word.size() + 1);
		} else if (word.size() != line.size()) {
			return "bad_answer";
		}
		out = std::move(a);
		return std::nullopt;
	}
	return "bad_answer";
}

std::optional<std::string> encode_answer_payload(const Answer &a, const AnswerTo &to, std::string &out)
{
	std::string line;
	if (auto bad = encode_answer(a, line))
		return bad;
	line.pop_back();
	if (!to.job || !valid_node(to.node))
		return "bad_answer";
	out = nlohmann::json{{"answer", line}, {"job", to.job}, {"start", to.start}, {"node", to.node}}.dump();
	return std::nullopt;
}

std::optional<std::string> decode_answer_payload(std::string_view text, const AnswerTo &to, Answer &out)
{
	const auto j = nlohmann::json::parse(text, nullptr, false);
	if (j.is_discarded() || !j.is_object() || j.size() != 4 || !j.contains("answer") || !j["answer"].is_string() ||
	    !j.contains("job") || !j["job"].is_number_unsigned() || !j.contains("start") ||
	    !j["start"].is_number_integer() || !j.contains("node") || !j["node"].is_string())
		return "bad_answer";
	if (j["job"].get<std::uint64_t>() != to.job || j["start"].get<std::int64_t>() != to.start ||
	    j["node"].get<std::string>() != to.node)
		return "not_this_part";
	return decode_answer(j["answer"].get<std::string>() + '\n', out);
}

namespace {

constexpr std::string_view sealed_word = "sealed ";

} // namespace

std::optional<std::string> encode_sealed_line(const std::string &credential, std::string &out)
{
	if (credential.empty() || !printable(credential))
		return "bad_answer";
	if (sealed_word.size() + credential.size() + 1 > sealed_answer_max_bytes)
		return "oversize";
	out = std::string(sealed_word) + credential + '\n';
	return std::nullopt;
}

std::optional<std::string> sealed_credential(std::string_view line)
{
	if (line.size() > sealed_answer_max_bytes || !line.starts_with(sealed_word) || !line.ends_with('\n'))
		return std::nullopt;
	line.remove_prefix(sealed_word.size());
	line.remove_suffix(1);
	if (line.empty() || !printable(line))
		return std::nullopt;
	return std::string(line);
}

namespace {

constexpr std::string_view payload_keys[] = {"job", "run", "start", "node", "writers", "part"};

// A JSON number that is an integer T holds (a float is refused).
template <class T>
std::optional<T> integer(const nlohmann::json &j)
{
	if (j.is_number_unsigned()) {
		const auto v = j.get<std::uint64_t>();
		if (v <= static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
			return static_cast<T>(v);
	} else if (j.is_number_integer()) {
		const auto v = j.get<std::int64_t>();
		if (v >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
		    (v < 0 || static_cast<std::uint64_t>(v) <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())))
			return static_cast<T>(v);
	}
	return std::nullopt;
}

bool strings(const nlohmann::json &j)
{
	return j.is_array() && std::all_of(j.begin(), j.end(), [](const nlohmann::json &s) { return s.is_string(); });
}

// What both sides check beyond the JSON's shape.
std::optional<std::string> check_payload(const Payload &p)
{
	if (p.job == 0)
		return "bad_job";
	if (p.writers.empty() || p.writers.size() > 2)
		return "bad_payload";
	if (!valid_node(p.node) || !std::all_of(p.writers.begin(), p.writers.end(), valid_node))
		return "bad_node";
	return std::nullopt;
}

} // namespace

std::optional<std::string> encode_payload(const Payload &p, std::string &out)
{
	if (auto bad = check_payload(p))
		return bad;
	const nlohmann::json j = {{"job", p.job},	{"run", p.run},		{"start", p.start},
				  {"node", p.node}, {"writers", p.writers}, {"part", p.part}};
	std::string text;
	try {
		text = j.dump();
	} catch (const nlohmann::json::exception &) {	// a part that is not UTF-8
		return "bad_payload";
	}
	if (text.size() > payload_max_bytes)
		return "oversize";
	out = std::move(text);
	return std::nullopt;
}

std::optional<std::string> decode_payload(std::string_view text, Payload &out)
{
	if (text.size() > payload_max_bytes)
		return "oversize";
	const auto j = nlohmann::json::parse(text, nullptr, false);
	if (j.is_discarded())
		return "bad_json";
	if (!j.is_object() || j.size() != std::size(payload_keys))
		return "bad_payload";
	for (auto key : payload_keys)
		if (!j.contains(key))
			return "bad_payload";
	const auto job = integer<std::uint32_t>(j["job"]), run = integer<std::uint32_t>(j["run"]);
	const auto start = integer<std::int64_t>(j["start"]);
	if (!job || !run || !start || !j["node"].is_string() || !j["part"].is_string() || !strings(j["writers"]))
		return "bad_payload";
	Payload p{*job, *run, *start, j["node"].get<std::string>(), j["writers"].get<std::vector<std::string>>(),
		  j["part"].get<std::string>()};
	if (auto bad = check_payload(p))
		return bad;
	out = std::move(p);
	return std::nullopt;
}

} // namespace gos::jobwide
