#include "daemon/gpud/report_pruning.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "common/util/atomic_file.hpp"

namespace gos::gpud {
namespace {

// A pass's bound: a directory of more is pruned over several passes.
constexpr std::size_t max_listed = 200000;
constexpr std::size_t max_problems = 4;

bool report_name(const std::string &name)
{
	return name.starts_with("job-") && (name.ends_with(".json") || name.ends_with(".txt"));
}

} // namespace

std::vector<ReportFile> reports_to_prune(std::vector<ReportFile> files, std::int64_t now, std::int64_t keep_s,
					 std::uint64_t max_bytes)
{
	std::sort(files.begin(), files.end(), [](const ReportFile &a, const ReportFile &b) {
		return a.mtime != b.mtime ? a.mtime < b.mtime : a.name < b.name;
	});
	std::uint64_t total = 0;
	for (const ReportFile &f : files)
		total += f.bytes;
	std::vector<ReportFile> out;
	for (const ReportFile &f : files) {
		const bool old = keep_s > 0 && now - f.mtime > keep_s, over = max_bytes > 0 && total > max_bytes;
		if (!old && !over)
			break;	// the oldest first: none after it is older
		out.push_back(f);
		total -= f.bytes;
	}
	return out;
}

Pruned prune_reports(const std::string &dir, std::int64_t now, std::int64_t keep_s, std::uint64_t max_bytes)
{
	Pruned p;
	if (keep_s <= 0 && max_bytes == 0)
		return p;
	std::vector<ReportFile> files;
	std::error_code ec;
	for (std::filesystem::directory_iterator d(dir, ec), end; !ec && d != end && files.size() < max_listed;
	     d.increment(ec)) {
		const std::string name = d->path().filename().string();
		struct stat st {};
		if (!report_name(name) || ::lstat(d->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		files.push_back({name, st.st_mtime, static_cast<std::uint64_t>(st.st_size)});
	}
	for (const ReportFile &f : reports_to_prune(std::move(files), now, keep_s, max_bytes)) {
		try {
			remove_file(dir + "/" + f.name);
			p.files++;
			p.bytes += f.bytes;
		} catch (const std::runtime_error &e) {
			if (p.problems.size() < max_problems)
				p.problems.push_back(e.what());
		}
	}
	return p;
}

} // namespace gos::gpud
