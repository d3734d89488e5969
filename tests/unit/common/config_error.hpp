// The loader's refusal of a policy text, for tests that check messages.
#pragma once

#include <string>

namespace gos_test {

// What parse_config says of yaml (named p.yaml), or "" if it takes it.
std::string config_error(const std::string &yaml);

} // namespace gos_test
