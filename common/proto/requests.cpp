#include "common/proto/requests.hpp"

#include <array>

namespace gos::proto {
namespace {

constexpr RequestRow rows[] = {
#define GOS_REQUEST(NAME, name, number, handler, caller, request, reply, cost)                                     \
	{GOS_REQ_##NAME, #name, Caller::caller, request::kind, request::min, request::max, request::record, reply::kind, \
	 reply::max, cost},
#include <gpuoversub/requests.def>
#undef GOS_REQUEST
};

// The numbers run 1, 2, ... in the table's order, so that a row is found by
// its number and GOS_REQ_MAX (the count of rows) is the highest.
constexpr bool numbered_in_order()
{
	for (std::size_t i = 0; i < std::size(rows); i++)
		if (rows[i].type != i + 1)
			return false;
	return true;
}
static_assert(numbered_in_order(), "requests.def: number the rows 1, 2, ... in order, and never renumber one");
static_assert(std::size(rows) == GOS_REQ_MAX);

} // namespace

std::span<const RequestRow> request_table()
{
	return rows;
}

const RequestRow *request_row(std::uint16_t type)
{
	return type >= 1 && type <= std::size(rows) ? &rows[type - 1] : nullptr;
}

std::string_view caller_name(Caller c)
{
	switch (c) {
	case Caller::anyone: return "anyone";
	case Caller::agent: return "agent";
	case Caller::owner: return "owner";
	case Caller::root: return "root";
	}
	return "?";
}

std::string_view body_name(Body b)
{
	switch (b) {
	case Body::none: return "none";
	case Body::fixed: return "fixed";
	case Body::records: return "records";
	case Body::json: return "json";
	case Body::bytes: return "bytes";
	}
	return "?";
}

} // namespace gos::proto
