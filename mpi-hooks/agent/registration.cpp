#include "registration.hpp"

#include <algorithm>
#include <mutex>

namespace gos::agent {

Registration register_and_place(Link &link, Placement &placement, const BufferRef &b, std::string *why,
				bool prefetch_now)
{
	Registration r;
	if (b->backing != Backing::context)
		link.account_context(b->dev);
	std::lock_guard op(b->op);
	gos_rep_alloc rep;
	std::optional<gos_wire_order> settled;
	r.err = link.register_buffer(b, rep, why, &settled);
	if (r.err) {
		r.err = std::min(r.err, 0);	// 1: freed or registered meanwhile
		return r;
	}
	r.prefetch_later = !placement.place_new(*b, rep, prefetch_now);
	if (settled)	// its waiting chunks were placed before the reply came
		placement.place_settled(*b, *settled);
	r.engine_id = rep.buffer;
	r.device_bytes = rep.device_bytes;
	r.moves = b->moves;
	return r;
}

void register_waiting(Link &link, Placement &placement, Registry &registry)
{
	auto waiting = registry.unregistered();
	std::stable_partition(waiting.begin(), waiting.end(), [](const BufferRef &b) { return !b->started_on_host; });
	for (const BufferRef &b : waiting)
		register_and_place(link, placement, b, nullptr, true);
}

} // namespace gos::agent
