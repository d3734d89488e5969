#include "common/proto/wire.hpp"

#include <algorithm>

#include "common/proto/requests.hpp"

namespace gos::proto {

Bytes encode(std::uint16_t type, std::uint32_t seq, const void *payload, std::size_t len)
{
	gos_wire_hdr hdr{GOS_WIRE_MAGIC, GOS_WIRE_VERSION, type, seq, static_cast<std::uint32_t>(len)};
	Bytes out(sizeof hdr + len);
	std::memcpy(out.data(), &hdr, sizeof hdr);
	if (len)
		std::memcpy(out.data() + sizeof hdr, payload, len);
	return out;
}

Bytes encode_reply(std::uint32_t seq, int status, std::string_view error, const void *body, std::size_t len)
{
	gos_reply rep{};
	rep.status = status;
	rep.length = static_cast<std::uint32_t>(len);
	std::size_t n = std::min(error.size(), sizeof rep.error - 1);
	if (n)	// an empty string_view's data may be null
		std::memcpy(rep.error, error.data(), n);
	Bytes payload(sizeof rep + len);
	std::memcpy(payload.data(), &rep, sizeof rep);
	if (len)
		std::memcpy(payload.data() + sizeof rep, body, len);
	return encode(GOS_WIRE_REPLY, seq, payload.data(), payload.size());
}

namespace {

// A request's payload against its row of the table: its exact size, or a
// head and a whole number of records within the row's bounds.
std::optional<std::string> check_payload(const RequestRow &row, std::uint32_t length)
{
	if (row.request != Body::records) {
		if (length == row.request_min)
			return std::nullopt;
		return "message type " + std::to_string(row.type) + " with " + std::to_string(length) +
		       " payload bytes, expected " + std::to_string(row.request_min);
	}
	std::size_t head = row.request_min - row.record;
	if (length >= row.request_min && length <= row.request_max && (length - head) % row.record == 0)
		return std::nullopt;
	return std::string(row.name) + " of " + std::to_string(length) +
	       " bytes is not its head and a whole number of records (1 to " +
	       std::to_string((row.request_max - head) / row.record) + ")";
}

} // namespace

std::optional<std::string> check_header(const gos_wire_hdr &hdr)
{
	if (hdr.magic != GOS_WIRE_MAGIC)
		return "bad magic; not a gpuoversub peer";
	if (hdr.version != GOS_WIRE_VERSION)
		return "protocol version " + std::to_string(hdr.version) + ", this side speaks " +
		       std::to_string(GOS_WIRE_VERSION);
	if (hdr.length > GOS_WIRE_MAX_PAYLOAD)
		return "frame of " + std::to_string(hdr.length) + " bytes exceeds the limit";
	if (hdr.type == GOS_WIRE_REPLY)
		return hdr.length >= sizeof(gos_reply) ? std::nullopt
						       : std::optional<std::string>("reply shorter than its header");
	if (hdr.type == GOS_WIRE_ORDER)
		return hdr.length == sizeof(gos_wire_order) ? std::nullopt
							    : std::optional<std::string>("order of the wrong size");
	const RequestRow *row = request_row(hdr.type);
	if (!row)
		return "unknown message type " + std::to_string(hdr.type);
	return check_payload(*row, hdr.length);
}

std::optional<std::string> check_request_header(const gos_wire_hdr &hdr)
{
	auto why = check_header(hdr);
	if (!why && hdr.type >= GOS_WIRE_REPLY)
		return "message type " + std::to_string(hdr.type) + " is sent only by the daemon";
	return why;
}

void Decoder::feed(const std::uint8_t *data, std::size_t len)
{
	if (pos_ > 0 && pos_ == buf_.size()) {
		buf_.clear();
		pos_ = 0;
	}
	buf_.insert(buf_.end(), data, data + len);
}

std::optional<Frame> Decoder::next()
{
	if (failed() || buf_.size() - pos_ < sizeof(gos_wire_hdr))
		return std::nullopt;
	Frame f;
	std::memcpy(&f.hdr, buf_.data() + pos_, sizeof f.hdr);
	if (auto why = accepts_ == Accepts::requests ? check_request_header(f.hdr) : check_header(f.hdr)) {
		error_ = *why;
		return std::nullopt;
	}
	if (buf_.size() - pos_ - sizeof f.hdr < f.hdr.length)
		return std::nullopt;
	auto start = buf_.begin() + static_cast<long>(pos_ + sizeof f.hdr);
	f.payload.assign(start, start + f.hdr.length);
	pos_ += sizeof f.hdr + f.hdr.length;
	if (pos_ > 65536) {	// compact now and then, not on every frame
		buf_.erase(buf_.begin(), buf_.begin() + static_cast<long>(pos_));
		pos_ = 0;
	}
	return f;
}

std::optional<gos_wire_hdr> Decoder::pending() const
{
	if (failed() || buf_.size() - pos_ < sizeof(gos_wire_hdr))
		return std::nullopt;
	gos_wire_hdr h;
	std::memcpy(&h, buf_.data() + pos_, sizeof h);
	if (buf_.size() - pos_ - sizeof h >= h.length)
		return std::nullopt;	// whole: next() gives it
	return h;
}

void Decoder::release()
{
	if (partial())
		return;
	Bytes().swap(buf_);
	pos_ = 0;
}

std::optional<Reply> decode_reply(const Frame &f)
{
	gos_reply rep;
	if (f.hdr.type != GOS_WIRE_REPLY || f.payload.size() < sizeof rep)
		return std::nullopt;
	std::memcpy(&rep, f.payload.data(), sizeof rep);
	if (rep.length != f.payload.size() - sizeof rep || !terminated(rep.error))
		return std::nullopt;
	Reply out;
	out.status = rep.status;
	out.error = rep.error;
	out.body.assign(f.payload.begin() + sizeof rep, f.payload.end());
	return out;
}

} // namespace gos::proto
