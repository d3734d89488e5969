#include "daemon/gpud/sessions.hpp"

namespace gos::gpud {

SessionId SessionTable::open(const Peer &peer, std::function<void(proto::Bytes)> send, std::function<void()> hang_up)
{
	Session &s = sessions_[++last_];
	s.id = last_;
	s.peer = peer;
	s.send = std::move(send);
	s.hang_up = std::move(hang_up);
	return s.id;
}

void SessionTable::close(SessionId id)
{
	sessions_.erase(id);
}

Session *SessionTable::find(SessionId id)
{
	auto it = sessions_.find(id);
	return it == sessions_.end() ? nullptr : &it->second;
}

std::vector<SessionId> SessionTable::of_job(std::uint64_t job) const
{
	std::vector<SessionId> ids;
	for (const auto &[id, s] : sessions_)
		if (s.job == job)
			ids.push_back(id);
	return ids;
}

std::size_t SessionTable::agents() const
{
	std::size_t n = 0;
	for (const auto &[id, s] : sessions_)
		n += s.job != 0;
	return n;
}

std::set<pid_t> SessionTable::agent_pids() const
{
	std::set<pid_t> pids;
	for (const auto &[id, s] : sessions_)
		if (s.job)
			pids.insert(s.peer.pid);
	return pids;
}

} // namespace gos::gpud
