#include "caller.hpp"

#include <dlfcn.h>
#include <execinfo.h>

#include <cstring>
#include <mutex>
#include <unordered_map>

#include "settings.hpp"

namespace gos::agent {
namespace {

const char *library_of(void *addr)
{
	Dl_info info{};
	return dladdr(addr, &info) && info.dli_fname ? info.dli_fname : "";
}

bool pinned(const char *path)
{
	const char *base = std::strrchr(path, '/');
	base = base ? base + 1 : path;
	for (const std::string &lib : settings().pinned_libs)
		if (std::strstr(base, lib.c_str()))
			return true;
	return false;
}

bool is_runtime_or_agent(const char *path)
{
	return std::strstr(path, "libcudart") || std::strstr(path, "libgpuoversub");
}

} // namespace

bool from_pinned_library(void *ret)
{
	static std::mutex mu;
	static std::unordered_map<void *, bool> known;	// per call site
	{
		std::lock_guard g(mu);
		auto it = known.find(ret);
		if (it != known.end())
			return it->second;
	}
	const char *lib = library_of(ret);
	if (!std::strstr(lib, "libcudart")) {
		bool answer = pinned(lib);
		std::lock_guard g(mu);
		known[ret] = answer;
		return answer;
	}
	// Through a shared runtime the call site says nothing; the first frame
	// outside the runtime does. Not cached: one runtime site serves all.
	void *frames[24];
	int n = backtrace(frames, 24);
	for (int i = 1; i < n; i++) {
		const char *at = library_of(frames[i]);
		if (!is_runtime_or_agent(at))
			return pinned(at);
	}
	return false;
}

} // namespace gos::agent
