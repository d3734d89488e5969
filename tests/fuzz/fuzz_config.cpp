// libFuzzer target: any bytes as a policy file. The loader must accept it
// or throw ConfigError with a file:line:column message; nothing else. The
// limits walk (nesting depth, value count) runs on every input first; the
// corpus seeds it with nesting past the limit.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/config/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	try {
		gos::config::parse_config(std::string(reinterpret_cast<const char *>(data), size), "fuzz.yaml");
	} catch (const gos::config::ConfigError &e) {
		if (std::string(e.what()).rfind("fuzz.yaml:", 0) != 0)
			std::abort();
	}
	return 0;
}
