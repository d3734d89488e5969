#include "spank/daemon_calls.hpp"

#include <cerrno>

#include "common/proto/client.hpp"

namespace gos::spank {

Outcome ask_daemon(const std::string &socket, std::uint16_t type, const void *payload, std::size_t len)
{
	Outcome o;
	try {
		proto::Client c(socket, proto::Client::Path::privileged);
		proto::Reply r = c.call(type, payload, len, 5000);
		o.status = r.status;
		o.error = r.error;
		o.body.assign(r.body.begin(), r.body.end());
	} catch (const proto::ProtocolError &e) {
		// No daemon is ENOTCONN, which callers may pass over; an exchange
		// that broke (a reply over the frame limit, no answer in time) is
		// EPROTO, which they log as an error.
		o.status = e.code() == ENOENT || e.code() == ECONNREFUSED ? -ENOTCONN : -EPROTO;
		o.error = e.what();
	} catch (const std::exception &e) {
		o.status = -EPROTO;
		o.error = e.what();
	}
	return o;
}

} // namespace gos::spank
