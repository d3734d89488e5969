// What gos_testapp's files share: its buffers, their patterns, and the
// commands of testapp_streams.cpp.
#pragma once

#include <cuda.h>
#include <dlfcn.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

struct Buf {
	CUdeviceptr ptr = 0;
	std::size_t size = 0;
	std::string how;
	CUmemGenericAllocationHandle handle = 0;
};

// The words a buffer named name holds: its own pattern, so that a buffer
// read back through another name or process is told apart.
std::vector<std::uint32_t> pattern(const std::string &name, std::size_t size);

template <class F>
F optional_symbol(const char *name)
{
	return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

// Streams, pools, CUDA IPC and capture (testapp_streams.cpp): true if cmd
// is one of them, its answer in reply.
bool stream_command(const std::string &cmd, const std::string &name, std::istringstream &in,
		    std::map<std::string, Buf> &bufs, std::string &reply);
// Frees a buffer of how "pool" or "import".
CUresult stream_free(const Buf &b);
