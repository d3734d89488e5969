// What a job asks for with --gpu-mem-oversub[=off|FACTOR|SIZE] (or
// SLURM_GPU_MEM_OVERSUB), and the admin's ceiling on FACTOR. Pure logic,
// shared by every SPANK context and tested without Slurm.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gos::spank {

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

// The value SPANK hands the option callback. Slurm forwards an option given
// without a value from sbatch to the job's sruns through the environment
// as the text "(null)" (printf of a NULL string), which means no value.
std::string_view option_value(const char *optarg);

// An empty value (the bare option) is Kind::on. On a bad value returns
// nothing and sets why to a message that says what is accepted.
std::optional<Request> parse_request(std::string_view value, std::string &why);

// Applies the ceiling on FACTOR: clamps (message says so) or refuses
// (returns nothing, message says why).
std::optional<Request> apply_ceiling(Request r, double max_factor, bool refuse, std::string &message);

} // namespace gos::spank
