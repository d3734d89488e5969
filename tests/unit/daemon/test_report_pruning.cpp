// reports.dir pruned by age and by size (issue 50, finding 10): what goes
// is the oldest first, only report files, only regular ones; the settings'
// zeroes prune nothing.
#define BOOST_TEST_MODULE report_pruning
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "daemon/gpud/report_pruning.hpp"

using namespace gos::gpud;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t now = 1800000000, day = 86400;

std::vector<std::string> names(const std::vector<ReportFile> &files)
{
	std::vector<std::string> out;
	for (const ReportFile &f : files)
		out.push_back(f.name);
	return out;
}

// A file of BYTES in DIR, last written AGE seconds before now.
void file(const fs::path &dir, const std::string &name, std::size_t bytes, std::int64_t age)
{
	std::ofstream(dir / name) << std::string(bytes, 'x');
	const timespec t[2] = {{now - age, 0}, {now - age, 0}};
	BOOST_REQUIRE(::utimensat(AT_FDCWD, (dir / name).c_str(), t, 0) == 0);
}

} // namespace

BOOST_AUTO_TEST_CASE(by_age_then_by_size_the_oldest_first)
{
	const std::vector<ReportFile> files = {{"job-3.json", now - 10 * day, 100},
					       {"job-1.json", now - 100 * day, 100},
					       {"job-2.txt", now - 95 * day, 50},
					       {"job-4.json", now - day, 100}};
	// 90 days: the two older ones.
	BOOST_TEST(names(reports_to_prune(files, now, 90 * day, 0)) == (std::vector<std::string>{"job-1.json", "job-2.txt"}),
		   boost::test_tools::per_element());
	// 220 bytes at most: the oldest until the rest fit (350 - 100 - 50 = 200).
	BOOST_TEST(names(reports_to_prune(files, now, 0, 220)) == (std::vector<std::string>{"job-1.json", "job-2.txt"}),
		   boost::test_tools::per_element());
	BOOST_TEST(names(reports_to_prune(files, now, 0, 199)) ==
			   (std::vector<std::string>{"job-1.json", "job-2.txt", "job-3.json"}),
		   boost::test_tools::per_element());
	BOOST_TEST(reports_to_prune(files, now, 0, 0).empty());
	BOOST_TEST(reports_to_prune(files, now, 365 * day, 1000).empty());
}

BOOST_AUTO_TEST_CASE(only_report_files_go)
{
	char tmpl[] = "/tmp/gos-prune-XXXXXX";
	const fs::path dir = ::mkdtemp(tmpl);
	file(dir, "job-1.json", 10, 100 * day);
	file(dir, "job-1.txt", 10, 100 * day);
	file(dir, "job-2.run-0.jobwide.json", 10, 100 * day);
	file(dir, "job-3.json", 10, day);
	file(dir, "notes.txt", 10, 100 * day);		// not ours
	fs::create_directory(dir / "job-9.json");	// not a file
	fs::create_symlink("/etc/hostname", dir / "job-8.json");
	Pruned p = prune_reports(dir, now, 90 * day, 0);
	BOOST_TEST(p.files == 3u);
	BOOST_TEST(p.bytes == 30u);
	BOOST_TEST(p.problems.empty());
	BOOST_TEST(!fs::exists(dir / "job-1.json"));
	BOOST_TEST(!fs::exists(dir / "job-2.run-0.jobwide.json"));
	BOOST_TEST(fs::exists(dir / "job-3.json"));
	BOOST_TEST(fs::exists(dir / "notes.txt"));
	BOOST_TEST(fs::is_directory(dir / "job-9.json"));
	BOOST_TEST(fs::is_symlink(dir / "job-8.json"));
	BOOST_TEST(prune_reports(dir, now, 0, 0).files == 0u);	// off
	fs::remove_all(dir);
}
