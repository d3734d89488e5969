// The files root writes and reads: atomic writes that never follow a
// planted link, reads that refuse what is not a regular file of ours, and
// the directory check gpuoversubd runs at start (issue 13, finding 2).
#define BOOST_TEST_MODULE files
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/util/atomic_file.hpp"
#include "common/util/held_dir.hpp"
#include "common/util/regular_file.hpp"
#include "common/util/trusted_dir.hpp"

namespace fs = std::filesystem;

namespace {

struct TempDir {
	std::string path;
	TempDir()
	{
		char tmpl[] = "/tmp/gos-files-XXXXXX";
		BOOST_REQUIRE(::mkdtemp(tmpl));
		path = tmpl;
		::chmod(path.c_str(), 0755);
	}
	~TempDir() { fs::remove_all(path); }
};

std::string content(const std::string &path)
{
	std::stringstream ss;
	ss << std::ifstream(path).rdbuf();
	return ss.str();
}

std::string refusal(const std::string &path, gos::ReadRules rules)
{
	try {
		gos::read_regular_file(path, rules);
	} catch (const gos::FileRefused &e) {
		return e.what();
	}
	return "";
}

std::size_t entries(const std::string &dir)
{
	return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

} // namespace

BOOST_AUTO_TEST_CASE(a_planted_link_is_replaced_and_its_target_kept)
{
	TempDir d;
	std::string target = d.path + "/precious", file = d.path + "/job-1.json";
	gos::write_file_atomically(target, "root's\n");
	fs::create_symlink(target, file);
	gos::write_file_atomically(file, "report\n", 0640);
	BOOST_TEST(content(target) == "root's\n");
	BOOST_TEST(!fs::is_symlink(file));
	BOOST_TEST(content(file) == "report\n");
	BOOST_TEST(static_cast<unsigned>(fs::status(file).permissions() & fs::perms::all) == 0640u);
}

BOOST_AUTO_TEST_CASE(a_link_planted_at_the_old_temporary_name_is_not_followed)
{
	TempDir d;
	std::string target = d.path + "/precious", file = d.path + "/state.json";
	gos::write_file_atomically(target, "root's\n");
	fs::create_symlink(target, file + ".tmp");	// the name writes used to go through
	gos::write_file_atomically(file, "new\n", 0600);
	BOOST_TEST(content(target) == "root's\n");
	BOOST_TEST(content(file) == "new\n");
	BOOST_TEST(entries(d.path) == 3u);	// no temporary of ours is left
}

BOOST_AUTO_TEST_CASE(a_failed_write_leaves_no_temporary_and_names_the_path)
{
	TempDir d;
	std::string file = d.path + "/sub/x";
	BOOST_CHECK_EXCEPTION(gos::write_file_atomically(file, "x"), std::runtime_error, [&](const std::runtime_error &e) {
		return std::string(e.what()).find(d.path + "/sub") != std::string::npos;
	});
	fs::create_directory(d.path + "/taken");
	BOOST_CHECK_THROW(gos::write_file_atomically(d.path + "/taken", "x"), std::runtime_error);
	BOOST_TEST(entries(d.path) == 1u);
}

BOOST_AUTO_TEST_CASE(reads_refuse_what_is_not_a_regular_file_without_blocking)
{
	TempDir d;
	std::string fifo = d.path + "/fifo";
	BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
	BOOST_TEST(refusal(fifo, {1024}) == fifo + ": is a FIFO; a regular file is needed");
	BOOST_TEST(refusal(d.path, {1024}) == d.path + ": is a directory; a regular file is needed");
	BOOST_TEST(refusal("/dev/zero", {1024}) == "/dev/zero: is a device; a regular file is needed");
	std::string big = d.path + "/big";
	gos::write_file_atomically(big, std::string(2048, 'x'));
	BOOST_TEST(refusal(big, {1024}) == big + ": is 2048 bytes, more than the limit of 1 KiB");
	BOOST_TEST(gos::read_regular_file(big, {2048}).size() == 2048u);
}

BOOST_AUTO_TEST_CASE(a_record_must_be_no_link_and_owned_by_the_daemon)
{
	TempDir d;
	std::string rec = d.path + "/job-7.json", link = d.path + "/job-8.json";
	gos::write_file_atomically(rec, "{}");
	fs::create_symlink(rec, link);
	BOOST_TEST(gos::read_regular_file(link, {1024}) == "{}");	// a policy may be a link
	BOOST_TEST(refusal(link, {1024, true}) == link + ": is a symbolic link, not a record the daemon wrote");
	BOOST_REQUIRE(::chown(rec.c_str(), 65534, 65534) == 0);
	BOOST_TEST(refusal(rec, {1024, true}).find(rec + ": is owned by uid 65534, not by the daemon's uid 0") == 0u);
}

BOOST_AUTO_TEST_CASE(a_directory_is_trusted_only_when_no_one_else_can_write_it)
{
	TempDir d;
	std::string own = d.path + "/state";
	fs::create_directory(own);
	BOOST_TEST(gos::untrusted_directory("state directory", own) == "");
	BOOST_TEST(gos::untrusted_directory("state directory", own + "/not/yet") == "");
	::chmod(own.c_str(), 01777);	// sticky like /tmp: fine as a parent, not as ours
	BOOST_TEST(gos::untrusted_directory("state directory", own) ==
		   "state directory " + own + " is owned by uid 0 (root) with mode 1777; it must be owned by root and "
		   "writable by no one else (chown root " + own + " && chmod go-w " + own + ")");
	BOOST_TEST(gos::untrusted_directory("report directory", own + "/reports") == "");
	::chmod(own.c_str(), 0755);
	BOOST_REQUIRE(::chown(own.c_str(), 65534, 65534) == 0);
	BOOST_TEST(gos::untrusted_directory("state directory", own).find(" is owned by uid 65534") != std::string::npos);
	std::string under = gos::untrusted_directory("socket directory", own + "/run");
	BOOST_TEST(under.find("socket directory " + own + "/run lies in " + own + ", owned by uid 65534") == 0u, under);
	::chmod(own.c_str(), 0770);
	BOOST_REQUIRE(::chown(own.c_str(), 0, 0) == 0);
	BOOST_TEST(gos::untrusted_directory("socket directory", own + "/run").find(" with mode 0770, where another user") !=
		   std::string::npos);
}

// Issue 24, finding 8: a user's link in a sticky directory (/tmp) that
// points at root's own directory passed, for stat followed it.
BOOST_AUTO_TEST_CASE(a_link_another_user_owns_is_refused_wherever_it_points)
{
	TempDir d;
	std::string sticky = d.path + "/tmp", own = d.path + "/own", link = sticky + "/state";
	fs::create_directory(sticky);
	fs::create_directory(own);
	::chmod(sticky.c_str(), 01777);
	fs::create_symlink(own, link);
	BOOST_TEST(gos::untrusted_directory("state directory", link) == "");	// root's link to root's directory
	BOOST_REQUIRE(::lchown(link.c_str(), 65534, 65534) == 0);
	std::string why = gos::untrusted_directory("state directory", link);
	BOOST_TEST_MESSAGE("refused: " << why);
	BOOST_TEST(why.find("state directory " + link + " is a symbolic link, " + link + ", owned by uid 65534") == 0u, why);
	why = gos::untrusted_directory("report directory", link + "/reports");
	BOOST_TEST(why.find("report directory " + link + "/reports lies under a symbolic link, " + link) == 0u, why);
	// Root's link to a directory another user could write: judged where it leads.
	::chmod(own.c_str(), 0777);
	BOOST_REQUIRE(::lchown(link.c_str(), 0, 0) == 0);
	why = gos::untrusted_directory("state directory", link);
	BOOST_TEST(why.find("state directory (by way of its links) ") == 0u, why);
}

// Re-pointing after the start redirects nothing: the directory checked is
// the one written in, though it be renamed away and a link to another
// directory put in its place.
BOOST_AUTO_TEST_CASE(a_held_directory_keeps_the_writes_where_the_check_looked)
{
	TempDir d;
	std::string dir = d.path + "/reports", moved = d.path + "/moved", elsewhere = d.path + "/elsewhere";
	fs::create_directory(dir);
	fs::create_directory(elsewhere);
	gos::hold_directory(dir);
	fs::rename(dir, moved);
	fs::create_directory_symlink(elsewhere, dir);
	gos::write_file_atomically(dir + "/job-5.json", "{\"job\": 5}");
	BOOST_TEST_MESSAGE("written in the held directory: " << fs::exists(moved + "/job-5.json") << ", through the link: "
							     << fs::exists(elsewhere + "/job-5.json"));
	BOOST_TEST(content(moved + "/job-5.json") == "{\"job\": 5}");
	BOOST_TEST(!fs::exists(elsewhere + "/job-5.json"));
	gos::remove_file(dir + "/job-5.json");
	BOOST_TEST(!fs::exists(moved + "/job-5.json"));
	// A directory that is not there cannot be held.
	BOOST_CHECK_EXCEPTION(gos::hold_directory(d.path + "/nowhere"), std::runtime_error,
			      [](const std::runtime_error &e) { return std::string(e.what()).find("cannot hold") == 0; });
}

