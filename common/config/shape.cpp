#include "common/config/shape.hpp"

#include <yaml.h>

#include <memory>

#include "common/config/config.hpp"

namespace gos::config {

// Walks the file's events before the document is built: libyaml's loader
// and scanner slow down with depth (1 MB of nested flow mappings took
// minutes), and a policy is a few hundred nodes, a few levels deep.
void check_shape(const std::string &text, const std::string &name)
{
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		throw ConfigError(name + ": cannot start the YAML parser");
	std::unique_ptr<yaml_parser_t, void (*)(yaml_parser_t *)> guard(&parser, yaml_parser_delete);
	yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char *>(text.data()), text.size());
	std::size_t depth = 0, nodes = 0;
	for (;;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev))
			return;	// the loader reports the syntax error
		std::unique_ptr<yaml_event_t, void (*)(yaml_event_t *)> held(&ev, yaml_event_delete);
		auto refuse = [&](const std::string &why) {
			throw ConfigError(name + ":" + std::to_string(ev.start_mark.line + 1) + ":" +
					  std::to_string(ev.start_mark.column + 1) + ": " + why);
		};
		switch (ev.type) {
		case YAML_STREAM_END_EVENT: return;
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			if (++depth > max_depth)
				refuse("nested more than " + std::to_string(max_depth) + " levels deep; a policy needs a few");
			[[fallthrough]];
		case YAML_SCALAR_EVENT:
		case YAML_ALIAS_EVENT:
			if (++nodes > max_nodes)
				refuse("more than " + std::to_string(max_nodes) + " values; a policy needs a few hundred");
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT: depth--; break;
		default: break;
		}
	}
}

} // namespace gos::config
