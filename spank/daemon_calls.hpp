// The plugin's requests to gpuoversubd, each on a short-lived connection
// with a timeout, so a hung daemon cannot hang a job launch. As root they go
// to the daemon's root socket, which users flooding the public one cannot
// starve. Each is made with its row's typed stub:
//   ask_daemon(socket, [&](proto::Client &c) { return c.step_register(req); })
// A daemon that does not run answers -ENOTCONN, which callers may pass
// over; an exchange that broke (a reply over the frame limit, no answer in
// time) -EPROTO, which they log as an error.
#pragma once

#include <functional>
#include <string>

#include "common/proto/client.hpp"

namespace gos::spank {

proto::Reply ask_daemon(const std::string &socket, const std::function<proto::Reply(proto::Client &)> &call);

} // namespace gos::spank
