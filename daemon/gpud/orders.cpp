#include "daemon/gpud/orders.hpp"

namespace gos::gpud {

int OrderRouter::connect(SessionId id, std::uint32_t &client)
{
	if (int err = clients_.client_create(client))
		return err;
	by_session_[id].id = client;
	return 0;
}

void OrderRouter::disconnect(SessionId id)
{
	auto it = by_session_.find(id);
	if (it == by_session_.end())
		return;
	clients_.client_exit(it->second.id);
	by_session_.erase(it);
	flush();
}

std::uint32_t OrderRouter::client_of(SessionId id) const
{
	auto it = by_session_.find(id);
	return it == by_session_.end() ? 0 : it->second.id;
}

int OrderRouter::done(const Session &s, std::uint64_t order, bool ok)
{
	auto c = by_session_.find(s.id);
	if (c == by_session_.end())
		return -ENOENT;
	int err = clients_.order_done(c->second.id, order, ok);
	auto it = c->second.orders.find(order);
	if (it != c->second.orders.end()) {
		Job *job = ledger_.find(s.job);	// null once the job is gone
		RankStats *rs = job ? job->counters(s.rank, s.peer.pid) : nullptr;
		if (!err && ok && rs)
			(it->second.first == GOS_MSG_EVICT ? rs->bytes_evicted : rs->bytes_returned) += it->second.second;
		c->second.orders.erase(it);
	}
	return err;
}

void OrderRouter::flush()
{
	for (auto &[id, client] : by_session_) {
		Session *s = sessions_.find(id);
		gos_message msgs[64];
		int n;
		while (s && (n = clients_.read_messages(client.id, msgs, 64)) > 0)
			for (int i = 0; i < n; i++) {
				if (msgs[i].id)
					client.orders[msgs[i].id] = {msgs[i].kind, msgs[i].length};
				deliver(*s, msgs[i]);
			}
	}
}

// The engine's message as the agent's order (gos_order_of_message, as the
// module writes it), with the GPU as the job's own index and the NUMA node
// next to that GPU for evicted data.
void OrderRouter::deliver(Session &s, const gos_message &m)
{
	auto owner = ledger_.tenants().owner(m.tenant);
	gos_wire_order o;
	gos_order_of_message(&m, owner ? owner->view : 0, &o);
	Job *job = ledger_.find(s.job);
	if (job && o.gpu < job->gpus.size())
		o.numa_node = gpus_[job->gpus[o.gpu].node_gpu].numa_node;
	if (m.kind == GOS_MSG_ADVICE && job) {
		if (RankStats *rs = job->counters(s.rank, s.peer.pid))
			rs->advice++;
		job->advice_events++;
	}
	s.send(proto::encode(GOS_WIRE_ORDER, 0, o));
}

void OrderRouter::tick()
{
	clients_.tick();
	flush();
}

} // namespace gos::gpud
