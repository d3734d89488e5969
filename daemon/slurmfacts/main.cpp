// gpuoversub-slurm-facts: prints the Slurm fairness facts gpuoversubd
// weighs jobs by, one per line, for the daemon's background refresh. It is
// a program of its own because libslurm ends its process on a bad or
// missing slurm.conf and may wait on slurmctld or slurmdbd: the daemon
// runs it with a deadline and never links libslurm.
//
//   partition NAME PRIORITY_JOB_FACTOR
//   qos NAME PRIORITY
//   fairshare ACCOUNT USER FACTOR		(only with --fairshare)
//   job ID running|finished STATE	(only the jobs asked with --jobs; a job
//					whose epilog still runs is running COMPLETING)
//   job ID unknown			(slurmctld knows no such job: purged)
//   names ID PARTITION ACCOUNT QOS	(with each job line that has a state; - for
//					none: the names the job is weighed by, as
//					slurmctld holds them, never the job's own
//					environment)
//   run ID RESTART_CNT START_TIME	(with each job line of a job that has
//					started: slurmctld's restart count and
//					the run's start, seconds since the epoch;
//					the start keys the run, docs/jobwide.md)
//   nodes ID HOSTLIST			(with each job line of a job that holds
//					nodes: its node list, as slurmctld
//					writes it)
//   unavailable partitions|qos|fairshare|jobs REASON
//
// Run by a user other than root or SlurmUser (the daemon's own), it reads
// nothing that slurm.conf's PrivateData would show it only in part: such
// a kind is unavailable, saying so. slurmctld leaves other users' records
// out without a word, and answers "Invalid job id" for a hidden job as for
// a purged one, which would end that job here.
//
// Exit status 0 whatever Slurm answered: what it could not read is said
// in an `unavailable` line.
//
// gpuoversub-slurm-facts --admin-comment ID prints job ID's AdminComment as
// slurmctld holds it, exactly and nothing else (gpuoversubctl's job-wide
// view: no other field of the job, which its owner may set, can pass for
// it); exit status 1, with why on stderr, when slurmctld cannot say.
//
// gpuoversub-slurm-facts --node-addrs prints each node's NodeAddr, from one
// slurm_load_node, for the job-wide door's address check (docs/jobwide.md,
// "The channel", check 3):
//   addr NODE ADDRESS
//   unavailable nodes REASON
// with exit status 0 whatever slurmctld answered.
//
// gpuoversub-slurm-facts --node-state NODE says whether slurmctld holds
// NODE down (DOWN, or not responding), for a run's successor, which writes
// the record only when the writer's node is (docs/jobwide.md, "Failures"):
//   state NODE down|up
//   unavailable node REASON
// with exit status 0 whatever slurmctld answered. One slurm_load_node_single.
//
// gpuoversub-slurm-facts --write-record JOB START <RECORD writes a run's
// job-wide record into its accounting record (write_record.cpp);
// --serve-record USER does the same for one request of USER on the record
// helper's socket (serve_record.cpp).
#include "common/compat/slurm.hpp"

#include <slurm/slurmdb.h>

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "common/util/user_name.hpp"
#include "daemon/slurmfacts/serve_record.hpp"
#include "daemon/slurmfacts/write_record.hpp"

namespace {

namespace slurm = gos::slurm;

std::string last_error()
{
	return slurm_strerror(slurm::last_errno());
}

// Each partition's PriorityJobFactor; slurmctld's error when it did not answer.
std::string partitions()
{
	partition_info_msg_t *msg = nullptr;
	if (slurm_load_partitions(0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
		std::string why = "slurmctld: " + last_error();
		std::printf("unavailable partitions %s\n", why.c_str());
		return why;
	}
	for (std::uint32_t i = 0; i < msg->record_count; i++) {
		const partition_info_t &p = msg->partition_array[i];
		if (p.name)
			std::printf("partition %s %u\n", p.name, static_cast<unsigned>(p.priority_job_factor));
	}
	slurm_free_partition_info_msg(msg);
	return "";
}

// Each list element through a typed callback.
template <class T, class Fn>
void each(slurm::List list, Fn fn)
{
	slurm::ListIterator it = slurm_list_iterator_create(list);
	while (void *x = slurm_list_next(it))
		fn(*static_cast<T *>(x));
	slurm_list_iterator_destroy(it);
}

// Why slurmdbd gave nothing, said for a reader: its error when it has one
// (a failed connection often leaves none, which would read "No error").
std::string slurmdbd_unreachable(const std::string &where)
{
	int err = slurm::last_errno();
	return "slurmdbd" + where + " cannot be reached" + (err ? ": " + last_error() : "");
}

// The QOS and their Priority, which only slurmdbd keeps: a site whose
// slurmctld says (conf, null when it did not answer) it keeps no
// accounting there has none, and is told so.
void qos(const slurm_conf_t *conf)
{
	std::string where;
	if (conf) {
		const char *type = conf->accounting_storage_type;
		std::string storage = type && *type ? type : "accounting_storage/none";
		if (storage != "accounting_storage/slurmdbd") {
			std::printf("unavailable qos this site keeps no Slurm accounting (AccountingStorageType=%s), "
				    "so no QOS has a Priority\n", storage.c_str());
			return;
		}
		if (conf->accounting_storage_host)
			where = " at " + std::string(conf->accounting_storage_host) + ":" +
				std::to_string(conf->accounting_storage_port);
	}
	std::uint16_t flags = 0;
	errno = 0;
	void *db = slurmdb_connection_get(&flags);
	if (!db) {
		std::printf("unavailable qos %s\n", slurmdbd_unreachable(where).c_str());
		return;
	}
	slurmdb_qos_cond_t cond;
	std::memset(&cond, 0, sizeof cond);
	slurm::List list = slurmdb_qos_get(db, &cond);
	if (!list)
		std::printf("unavailable qos %s\n", slurmdbd_unreachable(where).c_str());
	else {
		each<slurmdb_qos_rec_t>(list, [](const slurmdb_qos_rec_t &q) {
			if (q.name)
				std::printf("qos %s %u\n", q.name, q.priority);
		});
		slurm_list_destroy(list);
	}
	slurmdb_connection_close(&db);
}

// The fair-share factors slurmctld's priority/multifactor computed, from
// its association manager.
void fairshare()
{
	assoc_mgr_info_request_msg_t req;
	std::memset(&req, 0, sizeof req);
	req.flags = ASSOC_MGR_INFO_FLAG_ASSOC;
	assoc_mgr_info_msg_t *msg = nullptr;
	if (slurm_load_assoc_mgr_info(&req, &msg) != SLURM_SUCCESS || !msg) {
		std::printf("unavailable fairshare slurmctld: %s\n", last_error().c_str());
		return;
	}
	if (msg->assoc_list)
		each<slurmdb_assoc_rec_t>(msg->assoc_list, [](const slurmdb_assoc_rec_t &a) {
			if (a.acct && a.user && a.user[0] && a.usage)
				std::printf("fairshare %s %s %.6f\n", a.acct, a.user, a.usage->fs_factor);
		});
	slurm_free_assoc_mgr_info_msg(msg);
}

const char *const state_names[] = {"PENDING",	 "RUNNING",   "SUSPENDED", "COMPLETED", "CANCELLED",	 "FAILED",
				    "TIMEOUT",	 "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"};

// A name slurmctld holds, or - for none (and for one that would not read
// back as one word).
const char *word(const char *name)
{
	if (!name || !*name)
		return "-";
	for (const char *c = name; *c; c++)
		if (static_cast<unsigned char>(*c) <= ' ' || *c == 0x7f)
			return "-";
	return name;
}

// What slurmctld's PrivateData (conf: its configuration, null when it did
// not answer) hides from this reader, by kind, each with why; "" where
// nothing is. Root and SlurmUser see everything; Slurm
// operators do too, but telling one needs slurmdbd, so they are counted
// out. Measured with Slurm 22.05: as nobody, a job of root's answers
// ESLURM_INVALID_JOB_ID under PrivateData=jobs.
struct Hidden {
	std::string partitions, fairshare, jobs;
};

Hidden hidden_from_me(const slurm_conf_t *conf)
{
	Hidden h;
	const uid_t me = ::getuid();
	if (me == 0 || !conf)
		return h;	// each reading says slurmctld's silence itself
	if (me != conf->slurm_user_id) {
		const std::string who = gos::uid_and_name(me);
		auto why = [&](const std::string &flags, const std::string &what) {
			return "PrivateData=" + flags + " in slurm.conf hides other users' " + what + " from " + who +
			       "; run gpuoversubd as root or SlurmUser, or take " + flags + " out of PrivateData";
		};
		if (conf->private_data & PRIVATE_DATA_PARTITIONS)
			h.partitions = why("partitions", "partitions");
		if (conf->private_data & (PRIVATE_DATA_USAGE | PRIVATE_DATA_USERS | PRIVATE_DATA_ACCOUNTS))
			h.fairshare = why("usage,users,accounts", "associations");
		if (conf->private_data & PRIVATE_DATA_JOBS)
			h.jobs = why("jobs", "jobs");
	}
	return h;
}

// Where each job asked about is in its life, as slurmctld says.
void jobs(const std::vector<std::uint32_t> &ids)
{
	for (std::uint32_t id : ids) {
		job_info_msg_t *msg = nullptr;
		if (slurm::load_job(&msg, id, SHOW_ALL) != SLURM_SUCCESS) {
			if (slurm::last_errno() == ESLURM_INVALID_JOB_ID) {
				std::printf("job %u unknown\n", id);
				continue;
			}
			std::printf("unavailable jobs slurmctld: %s\n", last_error().c_str());
			return;
		}
		for (std::uint32_t i = 0; i < msg->record_count; i++) {
			const slurm_job_info_t &j = msg->job_array[i];
			if (j.job_id != id)
				continue;	// another part of a heterogeneous job
			std::uint32_t base = j.job_state & JOB_STATE_BASE;
			const char *name = base < std::size(state_names) ? state_names[base] : "UNKNOWN_STATE";
			// Completing: its epilog, which ends it on the node, still runs.
			if (j.job_state & JOB_COMPLETING)
				std::printf("job %u running COMPLETING\n", id);
			else
				std::printf("job %u %s %s\n", id, base < JOB_COMPLETE ? "running" : "finished", name);
			std::printf("names %u %s %s %s\n", id, word(j.partition), word(j.account), word(j.qos));
			// A pending job's start is only expected, and a requeued
			// one's restart count already names its next run.
			if (base != JOB_PENDING && j.start_time > 0)
				std::printf("run %u %u %lld\n", id, static_cast<unsigned>(j.restart_cnt),
					    static_cast<long long>(j.start_time));
			if (std::strcmp(word(j.nodes), "-") != 0)
				std::printf("nodes %u %s\n", id, j.nodes);
			break;
		}
		slurm_free_job_info_msg(msg);
	}
}

// "5,7,12" into job ids, or false.
bool job_ids(const char *list, std::vector<std::uint32_t> &ids)
{
	for (const char *p = list; *p;) {
		char *end = nullptr;
		errno = 0;
		unsigned long id = std::strtoul(p, &end, 10);
		if (end == p || errno || id == 0 || id > UINT32_MAX || (*end && *end != ','))
			return false;
		ids.push_back(static_cast<std::uint32_t>(id));
		p = *end ? end + 1 : end;
	}
	return !ids.empty();
}

// Job id's AdminComment, exactly; false when slurmctld cannot say.
bool admin_comment(std::uint32_t id)
{
	job_info_msg_t *msg = nullptr;
	if (slurm::load_job(&msg, id, SHOW_ALL) != SLURM_SUCCESS) {
		std::fprintf(stderr, "gpuoversub-slurm-facts: job %u: %s\n", id, last_error().c_str());
		return false;
	}
	for (std::uint32_t i = 0; i < msg->record_count; i++) {
		const slurm_job_info_t &j = msg->job_array[i];
		if (j.job_id == id && j.admin_comment)
			std::fputs(j.admin_comment, stdout);
	}
	slurm_free_job_info_msg(msg);
	return true;
}

// slurm.conf's path into path; why it cannot be read, or "": libslurm
// would retry a missing one for a minute, then exit.
std::string unreadable_slurm_conf(std::string &path)
{
	const char *conf = std::getenv("SLURM_CONF");
	path = conf && *conf ? conf : "/etc/slurm/slurm.conf";
	if (::access(path.c_str(), R_OK) == 0)
		return "";
	return "no readable slurm.conf at " + path + ": " + std::strerror(errno);
}

// --admin-comment ID: its exit status.
int admin_comment_of(const char *arg)
{
	std::vector<std::uint32_t> id;
	if (!job_ids(arg, id) || id.size() != 1) {
		std::fprintf(stderr, "usage: gpuoversub-slurm-facts --admin-comment ID\n");
		return 2;
	}
	std::string path;
	if (std::string why = unreadable_slurm_conf(path); !why.empty()) {
		std::fprintf(stderr, "gpuoversub-slurm-facts: %s\n", why.c_str());
		return 1;
	}
	slurm_init(path.c_str());
	bool ok = admin_comment(id[0]);
	slurm_fini();
	return ok ? 0 : 1;
}

// slurm_init with a readable slurm.conf, or why not.
std::string init_slurm()
{
	std::string path;
	if (std::string why = unreadable_slurm_conf(path); !why.empty())
		return why;
	slurm_init(path.c_str());
	return "";
}

// --node-addrs: each node's address as slurmctld holds it (NodeAddr, or
// the node's name where slurm.conf gives none).
int node_addrs()
{
	if (std::string why = init_slurm(); !why.empty()) {
		std::printf("unavailable nodes %s\n", why.c_str());
		return 0;
	}
	node_info_msg_t *msg = nullptr;
	if (slurm_load_node(0, &msg, SHOW_ALL | SHOW_FUTURE) != SLURM_SUCCESS || !msg) {
		std::printf("unavailable nodes slurmctld: %s\n", last_error().c_str());
	} else {
		for (std::uint32_t i = 0; i < msg->record_count; i++) {
			const node_info_t &n = msg->node_array[i];
			if (std::strcmp(word(n.name), "-") != 0 && std::strcmp(word(n.node_addr), "-") != 0)
				std::printf("addr %s %s\n", n.name, n.node_addr);
		}
		slurm_free_node_info_msg(msg);
	}
	slurm_fini();
	return 0;
}

// --node-state: whether slurmctld holds NODE down.
int node_state(const char *node)
{
	if (std::string why = init_slurm(); !why.empty()) {
		std::printf("unavailable node %s\n", why.c_str());
		return 0;
	}
	node_info_msg_t *msg = nullptr;
	if (slurm_load_node_single(&msg, const_cast<char *>(node), SHOW_ALL) != SLURM_SUCCESS || !msg) {
		std::printf("unavailable node slurmctld: %s\n", last_error().c_str());
	} else if (msg->record_count != 1 || std::strcmp(word(msg->node_array[0].name), node) != 0) {
		std::printf("unavailable node slurmctld has no node %s\n", node);
	} else {
		const std::uint32_t state = msg->node_array[0].node_state;
		const bool down = (state & NODE_STATE_BASE) == NODE_STATE_DOWN || (state & NODE_STATE_NO_RESPOND);
		std::printf("state %s %s\n", node, down ? "down" : "up");
	}
	if (msg)
		slurm_free_node_info_msg(msg);
	slurm_fini();
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc == 3 && std::strcmp(argv[1], "--admin-comment") == 0)
		return admin_comment_of(argv[2]);
	if (argc == 2 && std::strcmp(argv[1], "--node-addrs") == 0)
		return node_addrs();
	if (argc == 3 && std::strcmp(argv[1], "--node-state") == 0)
		return node_state(argv[2]);
	if (argc == 3 && std::strcmp(argv[1], "--serve-record") == 0)
		return gos::slurmfacts::serve_record(argv[2], init_slurm);
	if (argc >= 2 && std::strcmp(argv[1], "--write-record") == 0)
		return argc == 4 ? gos::slurmfacts::write_record(argv[2], argv[3], init_slurm)
				 : gos::slurmfacts::write_record("", "", init_slurm);	// its usage
	bool with_fairshare = false;
	std::vector<std::uint32_t> ids;
	for (int i = 1; i < argc; i++) {
		if (std::strcmp(argv[i], "--fairshare") == 0)
			with_fairshare = true;
		else if (std::strcmp(argv[i], "--jobs") == 0 && i + 1 < argc && job_ids(argv[i + 1], ids))
			i++;
		else {
			std::fprintf(stderr, "usage: gpuoversub-slurm-facts [--fairshare] [--jobs ID[,ID...]]\n"
					     "       gpuoversub-slurm-facts --admin-comment ID\n"
					     "       gpuoversub-slurm-facts --node-addrs\n"
					     "       gpuoversub-slurm-facts --node-state NODE\n"
					     "       gpuoversub-slurm-facts --write-record JOB START <RECORD\n"
					     "       gpuoversub-slurm-facts --serve-record USER   (on gpuoversub-record.socket)\n");
			return 2;
		}
	}
	std::string path;
	if (std::string why = unreadable_slurm_conf(path); !why.empty()) {
		std::printf("unavailable partitions %s\nunavailable qos %s\n", why.c_str(), why.c_str());
		if (with_fairshare)
			std::printf("unavailable fairshare %s\n", why.c_str());
		if (!ids.empty())
			std::printf("unavailable jobs %s\n", why.c_str());
		return 0;
	}
	slurm_init(path.c_str());
	// slurmctld's configuration, asked once: what it hides from this
	// reader, and where its accounting is.
	slurm_conf_t *conf = nullptr;
	if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS)
		conf = nullptr;
	const Hidden hidden = hidden_from_me(conf);
	std::string slurmctld_down;
	if (hidden.partitions.empty())
		slurmctld_down = partitions();
	else
		std::printf("unavailable partitions %s\n", hidden.partitions.c_str());
	qos(conf);
	if (conf)
		slurm::free_conf(conf);
	if (with_fairshare && hidden.fairshare.empty())
		fairshare();
	else if (with_fairshare)
		std::printf("unavailable fairshare %s\n", hidden.fairshare.c_str());
	// Not asked again of a slurmctld that just failed to answer: each call
	// would wait out its MessageTimeout, and the reading come that late.
	if (!slurmctld_down.empty() && !ids.empty())
		std::printf("unavailable jobs %s\n", slurmctld_down.c_str());
	else if (!hidden.jobs.empty() && !ids.empty())
		std::printf("unavailable jobs %s\n", hidden.jobs.c_str());
	else if (slurmctld_down.empty())
		jobs(ids);
	slurm_fini();
	return 0;
}
