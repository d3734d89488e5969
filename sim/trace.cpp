#include "sim/trace.hpp"

#include <cctype>
#include <charconv>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/util/units.hpp"
#include "gos_engine.h"

namespace gos::sim {
namespace {

std::vector<std::string> split_csv(const std::string &line)
{
	std::vector<std::string> fields;
	std::string field;
	std::istringstream in(line);
	while (std::getline(in, field, ','))
		fields.push_back(field);
	if (!line.empty() && line.back() == ',')
		fields.emplace_back();
	for (auto &f : fields) {
		auto b = f.find_first_not_of(" \t\r");
		auto e = f.find_last_not_of(" \t\r");
		f = b == std::string::npos ? "" : f.substr(b, e - b + 1);
	}
	return fields;
}

bool parse_double(const std::string &s, double &out)
{
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
	return ec == std::errc() && p == s.data() + s.size();
}

bool parse_uint(const std::string &s, std::uint64_t &out)
{
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
	return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

const std::map<std::string, Op> ops = {
	{"capacity", Op::capacity}, {"external", Op::external}, {"weight", Op::weight},
	{"alloc", Op::alloc}, {"free", Op::free}, {"prio", Op::prio}, {"exit", Op::exit},
};

class Parser {
public:
	explicit Parser(const std::string &name) { trace_.file = name; }
	void line(const std::string &text, int number);
	Trace finish() { return std::move(trace_); }

private:
	[[noreturn]] void fail(const std::string &why) const
	{
		throw TraceError(trace_.file + ":" + std::to_string(number_) + ": " + why);
	}
	std::size_t tenant_index(const std::string &name);
	void need_live(const Event &ev, bool live);

	Trace trace_;
	int number_ = 0;
	bool header_seen_ = false;
	std::map<std::string, std::size_t> tenant_ids_;
	std::set<std::pair<std::size_t, std::string>> live_;	// (tenant, tag)
};

std::size_t Parser::tenant_index(const std::string &name)
{
	for (char c : name)
		if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
			fail("tenant '" + name + "' may use only letters, digits, '.', '_' and '-'");
	auto [it, added] = tenant_ids_.emplace(name, trace_.tenants.size());
	if (added)
		trace_.tenants.push_back(name);
	return it->second;
}

void Parser::need_live(const Event &ev, bool live)
{
	bool is_live = live_.count({ev.tenant, ev.tag});
	if (live && !is_live)
		fail("no live buffer '" + ev.tag + "' for tenant '" + trace_.tenants[ev.tenant] + "'");
	if (!live && is_live)
		fail("buffer '" + ev.tag + "' of tenant '" + trace_.tenants[ev.tenant] +
		     "' is still allocated; free it first or use another tag");
}

void Parser::line(const std::string &raw, int number)
{
	number_ = number;
	auto hash = raw.find('#');
	std::string text = raw.substr(0, hash);
	if (text.find_first_not_of(" \t\r") == std::string::npos)
		return;
	auto f = split_csv(text);
	if (!header_seen_ && trace_.events.empty() && !f.empty() && f[0] == "time") {
		header_seen_ = true;
		return;
	}
	if (f.size() < 3 || f.size() > 7)
		fail("expected 3 to 7 comma-separated fields (time,tenant,op,size,priority,tag,access), found " +
		     std::to_string(f.size()));
	f.resize(7);
	Event ev;
	ev.line = number;
	if (!parse_double(f[0], ev.time) || ev.time < 0)
		fail("time '" + f[0] + "' is not a non-negative number of seconds");
	if (!trace_.events.empty() && ev.time < trace_.events.back().time)
		fail("time " + f[0] + " goes backwards; lines must be in time order");
	auto op = ops.find(f[2]);
	if (op == ops.end())
		fail("unknown op '" + f[2] + "'; use capacity, external, weight, alloc, free, prio or exit");
	ev.op = op->second;
	bool gpu_wide = ev.op == Op::capacity || ev.op == Op::external;
	if (!gpu_wide && f[1].empty())
		fail("op '" + f[2] + "' needs a tenant");
	if (!gpu_wide)
		ev.tenant = tenant_index(f[1]);
	ev.tag = f[5];

	switch (ev.op) {
	case Op::capacity:
	case Op::external: {
		auto size = parse_size(f[3]);
		if (!size || (ev.op == Op::capacity && !*size) || *size >= (1ULL << 48))
			fail("size '" + f[3] + "' is not a byte size below 256 TiB such as 80G or 512M");
		ev.size = *size;
		if (ev.op == Op::capacity && !trace_.first_capacity)
			trace_.first_capacity = ev.size;
		break;
	}
	case Op::weight:
		if (!parse_uint(f[3], ev.size) || ev.size < 1 || ev.size > 65535)
			fail("weight '" + f[3] + "' must be a whole number from 1 to 65535");
		break;
	case Op::alloc: {
		auto size = parse_size(f[3]);
		if (!size || !*size || *size >= (1ULL << 48))
			fail("size '" + f[3] + "' is not a positive byte size such as 2G or 512M");
		ev.size = *size;
		[[fallthrough]];
	}
	case Op::prio: {
		std::uint64_t prio = GOS_PRIO_DEFAULT;
		if (!f[4].empty() && (!parse_uint(f[4], prio) || prio > GOS_PRIO_MAX))
			fail("priority '" + f[4] + "' must be a whole number from 0 to 15");
		ev.priority = static_cast<std::uint32_t>(prio);
		if (ev.tag.empty())
			fail("op '" + f[2] + "' needs a tag naming the buffer");
		need_live(ev, ev.op == Op::prio);
		if (ev.op == Op::alloc) {
			if (!f[6].empty() && (!parse_double(f[6], ev.access) || ev.access < 0))
				fail("access '" + f[6] + "' must be a non-negative number of passes per second");
			live_.insert({ev.tenant, ev.tag});
		}
		break;
	}
	case Op::free:
		if (ev.tag.empty())
			fail("op 'free' needs a tag naming the buffer");
		need_live(ev, true);
		live_.erase({ev.tenant, ev.tag});
		break;
	case Op::exit:
		std::erase_if(live_, [&](auto &key) { return key.first == ev.tenant; });
		break;
	}
	trace_.events.push_back(ev);
}

} // namespace

Trace parse_trace(std::istream &in, const std::string &name)
{
	Parser parser(name);
	std::string text;
	for (int number = 1; std::getline(in, text); number++)
		parser.line(text, number);
	Trace trace = parser.finish();
	if (trace.events.empty())
		throw TraceError(name + ": no events; a trace needs at least a capacity and an alloc line");
	return trace;
}

Trace load_trace(const std::string &path)
{
	std::ifstream in(path);
	if (!in)
		throw TraceError(path + ": cannot open trace file");
	return parse_trace(in, path);
}

} // namespace gos::sim
