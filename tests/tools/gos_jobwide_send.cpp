// A node's side of the job-wide channel from the shell, through the real
// code: the payload sealed with munged (as whoever runs this), the frame
// encoded, and then
//   gos_jobwide_send end SOCKET MUNGE JOB RUN START NUM_NODES NODE NODELIST PART|-
//       the epilog's JOBWIDE_PART to the daemon at SOCKET (root's socket
//       when run as root), with the part sealed (none for "-"); prints
//       "ok START RUN" (the run the daemon took: START 0 asks it for
//       slurmctld's) or the daemon's error, exit 0 or 1;
//   gos_jobwide_send door HOST PORT FROM MUNGE JOB RUN START NODE WRITERS PART [SEALER_UID]
//       the sealed frame straight to a door with send_frame, from address
//       FROM ("-": any) and a reserved port (as root), believing only an
//       answer root sealed; prints what it heard ("taken", "busy: WHY",
//       "refused: REASON"), exit 0. With SEALER_UID, the part is sealed by
//       that user, and sent by whoever runs this.
// PART is a node's part as JSON; WRITERS the writer and successor, with a
// comma.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/proto/client.hpp"
#include "daemon/gpud/jobwide_sender.hpp"
#include "tests/tools/jobwide_tool.hpp"

using namespace gos;
using gos::jobwide_tool::fail;
using gos::jobwide_tool::frame_of;
using gos::jobwide_tool::number;

namespace {

std::vector<std::string> split(const std::string &s)
{
	std::vector<std::string> out;
	for (std::size_t at = 0;;) {
		std::size_t comma = s.find(',', at);
		out.push_back(s.substr(at, comma - at));
		if (comma == std::string::npos)
			return out;
		at = comma + 1;
	}
}

// JOB RUN START at A, NODE at NODE.
jobwide::Payload payload_of(char **a, char *node)
{
	jobwide::Payload p;
	p.job = static_cast<std::uint32_t>(number(a[0]));
	p.run = static_cast<std::uint32_t>(number(a[1]));
	p.start = static_cast<std::int64_t>(number(a[2]));
	p.node = node;
	return p;
}

int end_of_run(char **a)
{
	// SOCKET MUNGE JOB RUN START NUM_NODES NODE NODELIST PART
	jobwide::Payload p = payload_of(a + 2, a[6]);
	std::string nodelist = a[7], part = a[8];
	gos_req_jobwide head{};
	head.job_id = p.job;
	head.start = p.start;
	head.run = p.run;
	head.num_nodes = static_cast<__u32>(number(a[5]));
	// NUL-padded; a name of all 64 bytes fills it (too long: the daemon
	// sees it cut, and refuses it as not the frame's node).
	std::memcpy(head.node, a[6], std::min(std::strlen(a[6]), sizeof head.node));
	std::string frame;
	if (part != "-") {
		p.writers = {nodelist.substr(0, nodelist.find_first_of(",["))};
		p.part = part;
		frame = frame_of(a[1], p);
	}
	head.nodelist_len = static_cast<__u32>(nodelist.size());
	head.frame_len = static_cast<__u32>(frame.size());
	std::string bytes = nodelist + frame;
	proto::Client c(a[0], proto::Client::Path::privileged);
	auto r = c.jobwide_part(head, reinterpret_cast<const __u8 *>(bytes.data()), bytes.size());
	if (r.status) {
		std::printf("%s\n", r.error.c_str());
		return 1;
	}
	std::printf("ok %lld %u\n", static_cast<long long>(r.value.start), r.value.run);
	return 0;
}

// P sealed by the user UID (as the tool runs when UID is empty): a child
// drops to it, seals, and hands the frame back, so that root can send a
// part another user sealed (from a reserved port only root may bind).
std::string frame_sealed_by(const std::string &munge_socket, const jobwide::Payload &p, const std::string &uid)
{
	if (uid.empty())
		return frame_of(munge_socket, p);
	int fds[2];
	if (::pipe(fds) != 0)
		fail(std::string("pipe: ") + std::strerror(errno));
	pid_t child = ::fork();
	if (child < 0)
		fail(std::string("fork: ") + std::strerror(errno));
	if (child == 0) {
		::close(fds[0]);
		const auto id = static_cast<uid_t>(number(uid.c_str()));
		if (::setgroups(0, nullptr) != 0 || ::setgid(id) != 0 || ::setuid(id) != 0)
			fail(std::string("cannot become uid ") + uid + ": " + std::strerror(errno));
		std::string frame = frame_of(munge_socket, p);
		ssize_t put = ::write(fds[1], frame.data(), frame.size());
		::_exit(put == static_cast<ssize_t>(frame.size()) ? 0 : 2);
	}
	::close(fds[1]);
	std::string frame;
	char buf[4096];
	for (ssize_t got; (got = ::read(fds[0], buf, sizeof buf)) > 0;)
		frame.append(buf, static_cast<std::size_t>(got));
	::close(fds[0]);
	int status = 0;
	::waitpid(child, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		std::exit(2);	// the child said why
	return frame;
}

int to_door(char **a, const std::string &sealer)
{
	// HOST PORT FROM MUNGE JOB RUN START NODE WRITERS PART
	jobwide::Payload p = payload_of(a + 4, a[7]);
	p.writers = split(a[8]);
	p.part = a[9];
	std::string frame = frame_sealed_by(a[3], p, sealer);
	boost::asio::io_context io;
	boost::asio::thread_pool workers{1};
	gpud::SendTo to{a[0], static_cast<std::uint16_t>(number(a[1])), std::strcmp(a[2], "-") ? a[2] : "",
			std::chrono::milliseconds(10000)};
	gpud::send_frame(io, to, frame, jobwide_tool::believe(workers, a[3], p), [](gpud::Heard heard, const std::string &why) {
		switch (heard) {
		case gpud::Heard::taken:
			std::printf("taken\n");
			break;
		case gpud::Heard::busy:
			std::printf("busy: %s\n", why.c_str());
			break;
		case gpud::Heard::refused:
			std::printf("refused: %s\n", why.c_str());
			break;
		}
	});
	io.run();
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc == 11 && std::strcmp(argv[1], "end") == 0)
		return end_of_run(argv + 2);
	if ((argc == 12 || argc == 13) && std::strcmp(argv[1], "door") == 0)
		return to_door(argv + 2, argc == 13 ? argv[12] : "");
	std::fprintf(stderr, "usage: gos_jobwide_send end SOCKET MUNGE JOB RUN START NUM_NODES NODE NODELIST PART|-\n"
			     "       gos_jobwide_send door HOST PORT FROM|- MUNGE JOB RUN START NODE WRITERS PART [SEALER_UID]\n");
	return 2;
}
