#include "daemon/gpud/job_store.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>

#include "common/util/atomic_file.hpp"
#include "common/util/json_text.hpp"
#include "common/util/log.hpp"
#include "common/util/regular_file.hpp"

namespace gos::gpud {

std::string JobStore::path(std::uint64_t job) const
{
	return dir_ + "/job-" + std::to_string(job) + ".json";
}

std::string JobStore::ranks_path(std::uint64_t job) const
{
	return dir_ + "/ranks-" + std::to_string(job) + ".json";
}

std::map<std::uint64_t, Job> JobStore::load_all(std::vector<std::string> &problems)
{
	std::map<std::uint64_t, Job> jobs;
	DIR *d = ::opendir(dir_.c_str());
	if (!d)
		return jobs;
	while (dirent *e = ::readdir(d)) {
		std::string name = e->d_name;
		if (name.rfind("job-", 0) != 0 || name.size() < 10 || name.substr(name.size() - 5) != ".json")
			continue;
		std::string file = dir_ + "/" + name;
		try {
			// A link or a file someone else made is no record of ours.
			Job job = job_from_json(nlohmann::json::parse(read_regular_file(file, {64 << 20, true})));
			if (::access(ranks_path(job.id).c_str(), F_OK) == 0)
				for (const MpiRank &r : nlohmann::json::parse(read_regular_file(ranks_path(job.id), {64 << 20, true}))
								.get<std::vector<MpiRank>>())
					job.mpi_ranks[r.rank] = r;
			jobs[job.id] = std::move(job);
		} catch (const std::exception &ex) {
			// Kept for an admin to inspect, never silently deleted.
			problems.push_back(file + ": " + ex.what() + "; moved aside to " + file + ".bad");
			std::rename(file.c_str(), (file + ".bad").c_str());
		}
	}
	::closedir(d);
	return jobs;
}

std::string JobStore::save(const Job &now)
{
	try {
		if (now.mpi_ranks_unsaved) {
			make_dirs(dir_, 0700);
			write_file_atomically(ranks_path(now.id), json_text(mpi_rank_list(now)) + "\n", 0600);
		}
		nlohmann::json record = to_json(now);
		std::string text = json_text(record);
		if (written_[now.id] == text)
			return "";
		make_dirs(dir_, 0700);
		write_file_atomically(path(now.id), json_text(record, 1) + "\n", 0600);
		written_[now.id] = std::move(text);
		return "";
	} catch (const std::exception &e) {
		// The in-memory ledger stays right; only restart safety is at
		// risk until the record is saved.
		GOS_LOG_LIMITED(failures_, log::error, "state: cannot save job " << now.id << ": " << e.what());
		return e.what();
	}
}

void JobStore::remove(std::uint64_t job)
{
	remove_file(path(job));
	remove_file(ranks_path(job));
	written_.erase(job);
}

} // namespace gos::gpud
