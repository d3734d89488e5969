#include "common/status/status.hpp"

#include <cmath>

namespace gos::status {

void to_json(nlohmann::json &j, const TenantStatus &t)
{
	j = nlohmann::json::object();
#define GOS_TENANT_STAT(type, name, kind, help) j[#name] = t.engine.name;
#include <gpuoversub/tenant_stats.def>
	j["job"] = t.job;
	j["weight"] = t.weight();
	j["throttled"] = t.engine.throttled != 0;
	j["idle"] = t.idle;
	j["oversubscribed_s"] = t.oversubscribed_s;
}

void from_json(const nlohmann::json &j, TenantStatus &t)
{
	t = TenantStatus{};
	// weight and throttled read again below, in their JSON forms
#define GOS_TENANT_STAT(type, name, kind, help) t.engine.name = j.value(#name, decltype(t.engine.name){0});
#include <gpuoversub/tenant_stats.def>
	t.job = j.value("job", std::uint64_t{0});
	t.engine.weight = static_cast<std::uint32_t>(std::lround(j.value("weight", 0.0) * 100));
	t.engine.throttled = j.value("throttled", false);
	t.idle = j.value("idle", false);
	t.oversubscribed_s = j.value("oversubscribed_s", 0.0);
}

} // namespace gos::status
