// The policy file's shape, checked before libyaml builds its document:
// nesting and size limits refused fast, with the line and column.
#pragma once

#include <string>

namespace gos::config {

// Throws ConfigError naming name:line:column when the text nests deeper
// than max_depth or holds more than max_nodes values; a syntax error is
// left to the loader, which reports it.
void check_shape(const std::string &text, const std::string &name);

} // namespace gos::config
