// What a job asks for with --gpu-mem-oversub[=off|FACTOR|SIZE] (or
// SLURM_GPU_MEM_OVERSUB), and the policy's values for it that are keyed by
// the job's partition and QOS: the ceiling on FACTOR (max_oversub) and the
// value of a job that asks for nothing (default_oversub). Pure logic, shared
// by the policy loader, the SPANK plugin and the daemon.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace gos::config {

struct Request {
	enum class Kind { off, on, factor, size } kind = Kind::off;
	double factor = 0;		// Kind::factor
	std::uint64_t size = 0;		// Kind::size, bytes

	bool enabled() const { return kind != Kind::off; }
	std::uint32_t factor_milli() const { return kind == Kind::factor ? std::uint32_t(factor * 1000 + 0.5) : 0; }
	std::string text() const;
};

// What users may write, for error messages.
extern const char *const accepted_values;

// An empty value (the bare option) is Kind::on. On a bad value returns
// nothing and sets why to a message that says what is accepted.
std::optional<Request> parse_request(std::string_view value, std::string &why);

// A policy value that partitions and QOSes may set apart: a plain value, or
// {default: V, partition: {NAME: V}, qos: {NAME: V}} in the policy file.
template <class T>
struct Keyed {
	T plain{};
	std::map<std::string, T> partition, qos;
};

// The value for a job and the policy entry it came from ("max_oversub",
// "max_oversub.partition.gpu"), for messages and explain.
template <class T>
struct Chosen {
	T value;
	std::string entry;
};

// The job's QOS entry wins over its partition's, which wins over the plain
// value: a QOS's limits override a partition's, as in Slurm.
template <class T>
Chosen<T> choose(const Keyed<T> &k, const std::string &key, const std::string &partition, const std::string &qos)
{
	if (auto it = k.qos.find(qos); it != k.qos.end())
		return {it->second, key + ".qos." + qos};
	if (auto it = k.partition.find(partition); it != k.partition.end())
		return {it->second, key + ".partition." + partition};
	return {k.plain, key};
}

// Applies the ceiling on FACTOR: clamps (message says so) or refuses
// (returns nothing, message says why). The message names the entry.
std::optional<Request> apply_ceiling(Request r, const Chosen<double> &ceiling, bool refuse, std::string &message);

} // namespace gos::config
