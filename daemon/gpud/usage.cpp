#include "daemon/gpud/usage.hpp"

namespace gos::gpud {

void OutsideUse::measure()
{
	if (!discovery_.usage)
		return;
	std::set<pid_t> ours = sessions_.agent_pids();
	for (const Gpu &g : discovery_.gpus) {
		std::uint64_t outside = 0;
		for (const ProcessUse &p : discovery_.usage->processes(g))
			if (!ours.count(p.pid))
				outside += p.bytes;
		engine_.gpu_set_external(g.index, outside);
	}
}

} // namespace gos::gpud
