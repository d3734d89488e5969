// The request table (include/gpuoversub/requests.def) in C++: each
// request's payload and reply as types (Request<GOS_REQ_X>), for the typed
// client stubs, and a row of plain values per request (request_row), for
// the frame checks, the route table and the table the daemon lists.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>

#include <gpuoversub/abi.h>
#include "common/proto/wire.hpp"

namespace gos::proto {

// Who may send a request: anyone; an agent (a connection that said hello),
// for its own job; anyone, answered for the job's owner and root only
// (the handler decides, for it knows the job); root.
enum class Caller { anyone, agent, owner, root };
// A payload or a reply body.
enum class Body { none, fixed, records, json, bytes };

// Payloads, each with its bounds in bytes and how a client sends it
// (C::call(type, payload, len), without a copy where it can).
struct NoPayload {
	static constexpr Body kind = Body::none;
	static constexpr std::size_t min = 0, max = 0, record = 0;
	template <class C>
	static auto send(C &client, std::uint16_t type)
	{
		return client.call(type, static_cast<const void *>(nullptr), std::size_t(0));
	}
};

template <class T>
struct FixedPayload {
	static_assert(std::is_trivially_copyable_v<T>);
	static constexpr Body kind = Body::fixed;
	static constexpr std::size_t min = sizeof(T), max = sizeof(T), record = 0;
	using type = T;
	template <class C>
	static auto send(C &client, std::uint16_t type, const T &req)
	{
		return client.call(type, static_cast<const void *>(&req), sizeof req);
	}
};

// A head struct, then 1 .. Most records.
template <class Head, class Record, std::size_t Most>
struct RecordsPayload {
	static constexpr Body kind = Body::records;
	static constexpr std::size_t min = sizeof(Head) + sizeof(Record), max = sizeof(Head) + Most * sizeof(Record),
				     record = sizeof(Record), most = Most;
	using head_type = Head;
	using record_type = Record;
	template <class C>
	static auto send(C &client, std::uint16_t type, const Head &head, const Record *records, std::size_t count)
	{
		Bytes out(sizeof head + count * sizeof *records);
		std::memcpy(out.data(), &head, sizeof head);
		if (count)
			std::memcpy(out.data() + sizeof head, records, count * sizeof *records);
		return client.call(type, static_cast<const void *>(out.data()), out.size());
	}
};

// Reply bodies: their bound, and what a stub returns.
struct NoBody {
	static constexpr Body kind = Body::none;
	static constexpr std::size_t max = 0;
};
struct JsonBody {
	static constexpr Body kind = Body::json;
	static constexpr std::size_t max = GOS_WIRE_MAX_PAYLOAD - sizeof(gos_reply);
};
template <std::size_t Most>
struct BytesBody {
	static constexpr Body kind = Body::bytes;
	static constexpr std::size_t max = Most;
};
template <class T>
struct FixedBody {
	static constexpr Body kind = Body::fixed;
	static constexpr std::size_t max = sizeof(T);
	using type = T;
};

} // namespace gos::proto

// The table's cells as the types above.
#define GOS_IN_NONE ::gos::proto::NoPayload
#define GOS_IN_FIXED(T) ::gos::proto::FixedPayload<T>
#define GOS_IN_RECORDS(H, R, M) ::gos::proto::RecordsPayload<H, R, M>
#define GOS_OUT_NONE ::gos::proto::NoBody
#define GOS_OUT_JSON ::gos::proto::JsonBody
#define GOS_OUT_BYTES(M) ::gos::proto::BytesBody<M>
#define GOS_OUT_FIXED(T) ::gos::proto::FixedBody<T>

namespace gos::proto {

template <std::uint16_t Type>
struct Request;
#define GOS_REQUEST(NAME, name_, number, handler, caller_, request, reply, cost_) \
	template <>                                                               \
	struct Request<GOS_REQ_##NAME> {                                          \
		using In = request;                                               \
		using Out = reply;                                                \
		static constexpr Caller caller = Caller::caller_;                 \
	};
#include <gpuoversub/requests.def>
#undef GOS_REQUEST

// One row of the table, as values.
struct RequestRow {
	std::uint16_t type;
	std::string_view name;
	Caller caller;
	Body request;
	std::size_t request_min, request_max;	// payload bytes
	std::size_t record;			// Body::records: one record's bytes
	Body reply;
	std::size_t reply_max;			// body bytes
	std::string_view cost;
};

std::span<const RequestRow> request_table();
// The row of a request type; null for a type that is no request.
const RequestRow *request_row(std::uint16_t type);
std::string_view caller_name(Caller c);
std::string_view body_name(Body b);

} // namespace gos::proto
