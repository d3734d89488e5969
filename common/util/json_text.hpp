// JSON text that is always written: nlohmann's dump throws on a string that
// is not valid UTF-8 (type_error 316), and one such string in a job's record
// (a name from an older build, or any door that missed one) then failed the
// whole record, its save, its report and its job's end. Here each invalid
// byte becomes U+FFFD and the rest is written as it is.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gos {

// Any nlohmann JSON (an ordered_json keeps its keys in the order written)...
template <class Json>
	requires requires { typename Json::error_handler_t; }
std::string json_text(const Json &j, int indent = -1)
{
	return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// ...and whatever converts to nlohmann::json (a report, a status).
inline std::string json_text(const nlohmann::json &j, int indent = -1)
{
	return json_text<nlohmann::json>(j, indent);
}

} // namespace gos
