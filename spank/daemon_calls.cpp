#include "spank/daemon_calls.hpp"

#include <cerrno>

namespace gos::spank {

proto::Reply ask_daemon(const std::string &socket, const std::function<proto::Reply(proto::Client &)> &call)
{
	try {
		proto::Client c(socket, proto::Client::Options{proto::Client::Path::privileged, 5000, std::nullopt});
		return call(c);
	} catch (const proto::ProtocolError &e) {
		return {e.code() == ENOENT || e.code() == ECONNREFUSED ? -ENOTCONN : -EPROTO, e.what(), {}};
	} catch (const std::exception &e) {
		return {-EPROTO, e.what(), {}};
	}
}

} // namespace gos::spank
