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

void to_json(nlohmann::json &j, const OversubChoice &o)
{
	j = {{"asked", o.asked}, {"ceiling", o.ceiling}, {"ceiling_from", o.ceiling_from}, {"default", o.fallback},
	     {"default_from", o.fallback_from}};
}

void from_json(const nlohmann::json &j, OversubChoice &o)
{
	o.asked = j.value("asked", "");
	o.ceiling = j.value("ceiling", 0.0);
	o.ceiling_from = j.value("ceiling_from", "");
	o.fallback = j.value("default", "");
	o.fallback_from = j.value("default_from", "");
}

void to_json(nlohmann::json &j, const GpuShare &g)
{
	j = g.rule;
	j.update(nlohmann::json(g.engine));
}

void from_json(const nlohmann::json &j, GpuShare &g)
{
	g.rule = j.get<report::GpuWeight>();
	g.engine = j.get<EngineShare>();
}

void to_json(nlohmann::json &j, const RequestLine &r)
{
	j = {{"number", r.number}, {"name", r.name}, {"caller", r.caller}, {"request", r.request},
	     {"request_min_bytes", r.request_min_bytes}, {"request_max_bytes", r.request_max_bytes},
	     {"reply", r.reply}, {"reply_max_bytes", r.reply_max_bytes}, {"cost", r.cost}};
	if (r.request == "records")
		j["record_bytes"] = r.record_bytes;
}

void from_json(const nlohmann::json &j, RequestLine &r)
{
	r.number = j.value("number", 0u);
	r.name = j.value("name", "");
	r.caller = j.value("caller", "");
	r.request = j.value("request", "");
	r.request_min_bytes = j.value("request_min_bytes", std::uint64_t{0});
	r.request_max_bytes = j.value("request_max_bytes", std::uint64_t{0});
	r.record_bytes = j.value("record_bytes", std::uint64_t{0});
	r.reply = j.value("reply", "");
	r.reply_max_bytes = j.value("reply_max_bytes", std::uint64_t{0});
	r.cost = j.value("cost", "");
}

} // namespace gos::status
