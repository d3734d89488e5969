#include "common/util/hostlist.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <set>
#include <tuple>

namespace gos {
namespace {

// Numbers are at most 18 digits: any of them fits std::uint64_t, and a
// range's size never overflows. Slurm's own are unsigned long.
constexpr std::size_t max_digits = 18;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// TEXT in quotes for a refusal, cut: a hostile expression may be long.
std::string quoted(std::string_view text)
{
	return "'" + std::string(text.substr(0, 64)) + (text.size() > 64 ? "...'" : "'");
}

// NUMBER zero-padded to WIDTH digits (0: as it is).
std::string padded(std::uint64_t number, std::size_t width)
{
	std::string s = std::to_string(number);
	return s.size() < width ? std::string(width - s.size(), '0') + s : s;
}

struct Range {
	std::uint64_t lo = 0, hi = 0;
	std::size_t width = 0;	// the digits each name is padded to; 0: none
	std::uint64_t size() const { return hi - lo + 1; }
};

std::uint64_t names_in(const std::vector<Range> &ranges)
{
	std::uint64_t n = 0;
	for (const Range &r : ranges)
		n += r.size();
	return n;
}

std::uint64_t bound(std::string_view digits, std::string_view item)
{
	std::uint64_t n = 0;
	if (digits.empty() || digits.size() > max_digits || !std::all_of(digits.begin(), digits.end(), is_digit))
		throw HostlistError(quoted(item) + ": a range bound is no number of 1 to 18 digits");
	std::from_chars(digits.data(), digits.data() + digits.size(), n);
	return n;
}

// The ranges between one pair of brackets, "1-3,7".
std::vector<Range> ranges_of(std::string_view set, std::string_view item, std::size_t max_names)
{
	std::vector<Range> out;
	for (std::size_t at = 0; at <= set.size();) {
		std::size_t comma = std::min(set.find(',', at), set.size());
		std::string_view one = set.substr(at, comma - at), lo = one, hi = one;
		if (std::size_t dash = one.find('-'); dash != std::string_view::npos)
			lo = one.substr(0, dash), hi = one.substr(dash + 1);
		Range r{bound(lo, item), bound(hi, item), lo.size()};
		if (r.hi < r.lo)
			throw HostlistError(quoted(item) + ": the range " + std::string(one) + " is reversed");
		if (r.size() > max_names)
			throw HostlistError(quoted(item) + ": the range " + std::string(one) + " names more than " +
					    std::to_string(max_names) + " hosts");
		out.push_back(r);
		at = comma + 1;
	}
	return out;
}

// One item of an expression: literal text and bracketed sets in turn.
struct Part {
	std::string text;
	std::vector<Range> ranges;	// empty for literal text
	std::uint64_t count() const { return ranges.empty() ? 1 : names_in(ranges); }
};

std::vector<Part> parts_of(std::string_view item, std::size_t max_names)
{
	std::vector<Part> parts;
	for (std::size_t at = 0; at < item.size();) {
		std::size_t open = item.find('[', at);
		if (open != at) {
			std::size_t end = std::min(open, item.size());
			parts.push_back({std::string(item.substr(at, end - at)), {}});
			at = end;
			continue;
		}
		std::size_t close = item.find(']', open);	// split_items saw it balanced
		parts.push_back({"", ranges_of(item.substr(open + 1, close - open - 1), item, max_names)});
		at = close + 1;
	}
	return parts;
}

// The items between top-level commas; brackets balanced and never nested.
std::vector<std::string_view> split_items(std::string_view e)
{
	std::vector<std::string_view> items;
	std::size_t start = 0;
	bool in_bracket = false;
	for (std::size_t i = 0; i <= e.size(); i++) {
		char c = i < e.size() ? e[i] : ',';
		if (c == '[' && in_bracket)
			throw HostlistError(quoted(e) + ": a bracket opens inside another");
		if (c == ']' && !in_bracket)
			throw HostlistError(quoted(e) + ": a bracket closes that never opened");
		if (c == '[' || c == ']')
			in_bracket = c == '[';
		if (c == ',' && !in_bracket) {
			if (i > start)
				items.push_back(e.substr(start, i - start));
			start = i + 1;
		}
	}
	if (in_bracket)
		throw HostlistError(quoted(e) + ": a bracket never closes");
	return items;
}

// The names of one item, part by part: each part multiplies the names so
// far (never more than the item's count, checked before).
void expand_item(const std::vector<Part> &parts, std::vector<std::string> &out)
{
	std::vector<std::string> names = {""};
	for (const Part &p : parts) {
		std::vector<std::string> next;
		next.reserve(names.size() * p.count());
		for (const std::string &head : names) {
			if (p.ranges.empty())
				next.push_back(head + p.text);
			for (const Range &r : p.ranges)
				for (std::uint64_t n = r.lo;; n++) {
					next.push_back(head + padded(n, r.width));
					if (n == r.hi)
						break;
				}
		}
		names = std::move(next);
	}
	out.insert(out.end(), std::make_move_iterator(names.begin()), std::make_move_iterator(names.end()));
}

// The longest name an item makes.
std::size_t longest(const std::vector<Part> &parts)
{
	std::size_t n = 0;
	for (const Part &p : parts) {
		std::size_t most = p.text.size();
		for (const Range &r : p.ranges)
			most = std::max({most, r.width, std::to_string(r.hi).size()});
		n += most;
	}
	return n;
}

// A name as compress_hostlist groups it: the prefix, and the number its
// trailing digits make (none: the whole name is the prefix).
struct Numbered {
	std::string prefix;
	bool has_number = false;
	std::size_t width = 0;	// the digits when zero-padded ("007": 3) or ranged with such, else 0
	std::uint64_t number = 0;
	auto key() const { return std::tie(prefix, has_number, width, number); }
};

Numbered numbered(const std::string &name)
{
	for (char c : name)
		if (c == ',' || c == '[' || c == ']' || static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
			throw HostlistError(quoted(name) + " cannot be in a hostlist (a comma, bracket or white space)");
	if (name.empty())
		throw HostlistError("an empty host name cannot be in a hostlist");
	std::size_t start = name.size();
	while (start > 0 && is_digit(name[start - 1]))
		start--;
	std::string digits = name.substr(start);
	if (digits.empty() || digits.size() > max_digits)
		return {name};
	Numbered n{name.substr(0, start), true, digits.size() > 1 && digits[0] == '0' ? digits.size() : 0};
	std::from_chars(digits.data(), digits.data() + digits.size(), n.number);
	return n;
}

// One item of the compressed expression: a prefix and its ranges, or a
// name without a number.
struct Item {
	std::string prefix;
	std::vector<Range> ranges;
};

std::vector<Item> items_of(std::vector<std::string> names)
{
	std::vector<Numbered> all;
	all.reserve(names.size());
	std::set<std::pair<std::string, std::size_t>> padded_widths;
	for (const auto &n : names) {
		all.push_back(numbered(n));
		if (all.back().width)
			padded_widths.insert({all.back().prefix, all.back().width});
	}
	// An unpadded number as long as a padded width of its prefix ranges
	// with those (n0999,n1000: n[0999-1000]); any other ranges with the
	// unpadded (n9,n10: n[9-10]).
	for (Numbered &n : all) {
		std::size_t digits = std::to_string(n.number).size();
		if (n.has_number && !n.width && padded_widths.count({n.prefix, digits}))
			n.width = digits;
	}
	std::sort(all.begin(), all.end(), [](const Numbered &a, const Numbered &b) { return a.key() < b.key(); });
	all.erase(std::unique(all.begin(), all.end(), [](const Numbered &a, const Numbered &b) { return a.key() == b.key(); }),
		  all.end());
	std::vector<Item> items;
	for (const Numbered &n : all) {
		if (!n.has_number) {
			items.push_back({n.prefix, {}});
			continue;
		}
		if (items.empty() || items.back().ranges.empty() || items.back().prefix != n.prefix)
			items.push_back({n.prefix, {}});
		auto &ranges = items.back().ranges;
		if (!ranges.empty() && ranges.back().width == n.width && ranges.back().hi + 1 == n.number)
			ranges.back().hi = n.number;
		else
			ranges.push_back({n.number, n.number, n.width});
	}
	return items;
}

std::string range_text(const Range &r)
{
	std::string s = padded(r.lo, r.width);
	return r.hi == r.lo ? s : s + "-" + padded(r.hi, r.width);
}

} // namespace

std::vector<std::string> expand_hostlist(std::string_view expression, std::size_t max_names)
{
	std::vector<std::vector<Part>> items;
	std::uint64_t total = 0;
	for (std::string_view item : split_items(expression)) {
		items.push_back(parts_of(item, max_names));
		if (longest(items.back()) > hostlist_max_name)
			throw HostlistError(quoted(item) + " makes a name longer than " +
					    std::to_string(hostlist_max_name) + " bytes");
		std::uint64_t count = 1;
		for (const Part &p : items.back()) {
			if (p.count() > max_names / count)
				count = max_names + 1;
			else
				count *= p.count();
		}
		total += count;
		if (total > max_names)
			throw HostlistError(quoted(expression) + " names more than " + std::to_string(max_names) +
					    " hosts");
	}
	std::vector<std::string> names;
	names.reserve(total);
	for (const auto &parts : items)
		expand_item(parts, names);
	return names;
}

std::string compress_hostlist(std::vector<std::string> names)
{
	return compress_hostlist_within(std::move(names), std::string::npos).text;
}

CutHostlist compress_hostlist_within(std::vector<std::string> names, std::size_t max_bytes)
{
	CutHostlist cut;
	bool full = false;
	for (const Item &item : items_of(std::move(names))) {
		if (full) {
			cut.left_out += item.ranges.empty() ? 1 : names_in(item.ranges);
			continue;
		}
		// The item with its first `kept` ranges, grown while it fits.
		std::size_t sep = cut.text.empty() ? 0 : 1, kept = 0;
		std::string ranges;
		for (const Range &r : item.ranges) {
			std::string one = (kept ? "," : "") + range_text(r);
			bool single = kept == 0 && r.lo == r.hi;
			std::size_t with = item.prefix.size() + ranges.size() + one.size() + (single ? 0 : 2);
			if (cut.text.size() + sep + with > max_bytes)
				break;
			ranges += one;
			kept++;
		}
		if (item.ranges.empty() && cut.text.size() + sep + item.prefix.size() <= max_bytes) {
			cut.text += (sep ? "," : "") + item.prefix;
			continue;
		}
		if (kept > 0) {
			bool single = kept == 1 && item.ranges[0].lo == item.ranges[0].hi;
			cut.text += (sep ? "," : "") + item.prefix + (single ? ranges : "[" + ranges + "]");
		}
		if (item.ranges.empty() || kept < item.ranges.size()) {
			full = true;
			cut.left_out += item.ranges.empty() ? 1 : names_in({item.ranges.begin() + kept, item.ranges.end()});
		}
	}
	return cut;
}

} // namespace gos
