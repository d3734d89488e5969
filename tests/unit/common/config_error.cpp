#include "tests/unit/common/config_error.hpp"

#include "common/config/config.hpp"

namespace gos_test {

std::string config_error(const std::string &yaml)
{
	try {
		gos::config::parse_config(yaml, "p.yaml");
	} catch (const gos::config::ConfigError &e) {
		return e.what();
	}
	return "";
}

} // namespace gos_test
