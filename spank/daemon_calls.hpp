// The plugin's requests to gpuoversubd, each on a short-lived connection
// with a timeout, so a hung daemon cannot hang a job launch. As root they go
// to the daemon's root socket, which users flooding the public one cannot
// starve.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <gpuoversub/abi.h>

namespace gos::spank {

struct Outcome {
	int status = 0;		// 0, -errno from the daemon, -ENOTCONN when none runs, -EPROTO when the exchange broke
	std::string error;	// why, for the log
	std::string body;
	bool ok() const { return status == 0; }
};

Outcome ask_daemon(const std::string &socket, std::uint16_t type, const void *payload, std::size_t len);

template <class T>
Outcome ask_daemon(const std::string &socket, std::uint16_t type, const T &payload)
{
	return ask_daemon(socket, type, &payload, sizeof payload);
}

} // namespace gos::spank
