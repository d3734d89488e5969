// The job-wide door's checks of a frame, after its limits (door_limits.hpp)
// and its codec (common/jobwide/frame.hpp): docs/jobwide.md, "The
// channel", checks 2 to 5, cheapest first, in three steps by where they
// run. A refusal's reason is a token for the log and the exporter's
// gpuoversub_jobwide_refused_total{reason}.
//   admit (event loop): the job is one this node writes for, and the
//     frame's node is in one of its runs (2); the node's NodeAddr is known
//     (busy until the table has it).
//   open (a worker: both may block): the peer is that NodeAddr (3), before
//     MUNGE, so that a copied credential never spends the real one in
//     munged's replay cache; then munged finds the credential valid,
//     unexpired, not replayed, and made by uid 0 (4).
//   take (event loop): the sealed payload names the frame's job and node,
//     its part reads, and the run takes it (5).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "common/jobwide/frame.hpp"
#include "common/util/munge.hpp"
#include "daemon/gpud/jobwide_writer.hpp"
#include "daemon/gpud/node_table.hpp"

namespace gos::gpud {

struct Admission {
	enum class Is {
		pass,
		busy,		// a job not known here yet: its sender tries again
		refused,
	};
	Is is = Is::refused;
	std::string reason;	// busy, refused: the token
	std::string node_addr;	// pass: the node's NodeAddr, for open()
};
Admission admit_frame(const JobwideWriter &writer, NodeTable &nodes, const jobwide::Frame &frame);

// What open() found: the payload, or the refusal's token. AGAIN: the
// same frame may pass later (the peer's address is not the node's as the
// table has it, which is read again; munged could not be asked): answered
// busy, not refused. A replayed credential opens as a good one: munged
// has checked it, check 3 placed its sender, and the run keeps a node's
// first part only, so a resent frame is answered as its run says (dup
// once the part is held) and a part answered busy is never lost.
struct Opened {
	std::string refused;	// empty when it opened
	bool again = false;
	jobwide::Payload payload;
};
using Unseal = std::function<munge::Decoded(const std::string &credential)>;
// Seals PAYLOAD into CREDENTIAL with munged (the writer's answers), or says
// why not.
using Seal = std::function<std::optional<std::string>(const std::string &payload, std::string &credential)>;
// munged as the channel uses it: main.cpp gives it, since only the
// daemon's program links libmunge.
struct Munged {
	Unseal unseal;
	Seal seal;
};
using SameAddress = std::function<bool(const std::string &node_addr, const std::string &peer)>;
Opened open_frame(const jobwide::Frame &frame, const std::string &node_addr, const std::string &peer,
		  const SameAddress &same_address, const Unseal &unseal);

// Check 5 and the run's answer. LATE is set when the part came after its
// run's record was made (the file takes it, for the log to say so).
jobwide::Answer take_frame(JobwideWriter &writer, const jobwide::Frame &frame, const jobwide::Payload &payload,
			   bool &late);

} // namespace gos::gpud
