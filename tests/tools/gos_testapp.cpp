// A CUDA driver-API program for agent tests, driven line by line on stdin.
// It reaches the allocation family directly, through dlsym, or through
// cuGetProcAddress (--via), fills every buffer with a pattern of its own
// and checks it back. It knows nothing of gpuoversub except through
// dlsym, so it also runs without the agent and on a real GPU.
//
//   alloc|async|managed|pitch|vmm NAME MIB   -> ok | err CODE
//   free NAME, verify NAME, prio NAME P, tag NAME TAG -> ok | bad | err
//   where NAME -> ok DEVICE_BYTES HOST_BYTES (fake driver only, else -1 -1)
//   meminfo -> ok FREE TOTAL;  stats -> ok MANAGED DEVICE HOST ALLOWED EVICTIONS RETURNS
//     BYTES_EVICTED BYTES_RETURNED REQUESTS WAITS (this thread's to gpuoversubd)
//   usage -> ok CAPACITY USED PEAK OVER (fake driver);  fork -> ok STATUS
//   bench N MIB -> ok MEDIAN_NS of N allocate+free pairs
//   press NAME MIB LIMIT_MS -> ok NS from the allocation until it is all on
//     the device (on_device says how that is known), or bad after LIMIT_MS
//   threads N ROUNDS -> ok | bad: N threads allocate, fill, check and free
//   comm NAME MIB  -> allocated by libnccl-standin.so (next to this program)
//   busy SECONDS   -> launches kernels for that long (on the fake driver, no-ops)
//   streams, pools, IPC and capture: testapp_streams.cpp
//   quit
#include <cuda.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gpuoversub/gpuoversub.h>

#include "testapp.hpp"

namespace {

struct Api {
	decltype(&::cuMemAlloc_v2) alloc;
	decltype(&::cuMemAllocPitch_v2) pitch;
	decltype(&::cuMemFree_v2) free;
	decltype(&::cuMemAllocManaged) managed;
	decltype(&::cuMemAllocAsync) alloc_async;
	decltype(&::cuMemFreeAsync) free_async;
	decltype(&::cuMemGetInfo_v2) info;
	decltype(&::cuMemCreate) create;
	decltype(&::cuMemRelease) release;
};

template <class F>
void by_proc_address(F &slot, const char *api)
{
	void *p = nullptr;
	CUdriverProcAddressQueryResult st;
	if (cuGetProcAddress_v2(api, &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &st) != CUDA_SUCCESS || !p) {
		std::fprintf(stderr, "cuGetProcAddress(%s) failed\n", api);
		std::exit(2);
	}
	slot = reinterpret_cast<F>(p);
}

template <class F>
void by_dlsym(F &slot, void *lib, const char *symbol)
{
	slot = reinterpret_cast<F>(dlsym(lib, symbol));
	if (!slot) {
		std::fprintf(stderr, "dlsym(%s) failed\n", symbol);
		std::exit(2);
	}
}

Api resolve(const std::string &via)
{
	Api a{&::cuMemAlloc_v2, &::cuMemAllocPitch_v2, &::cuMemFree_v2, &::cuMemAllocManaged, &::cuMemAllocAsync,
	      &::cuMemFreeAsync, &::cuMemGetInfo_v2, &::cuMemCreate, &::cuMemRelease};
	if (via == "procaddress") {
		by_proc_address(a.alloc, "cuMemAlloc");
		by_proc_address(a.pitch, "cuMemAllocPitch");
		by_proc_address(a.free, "cuMemFree");
		by_proc_address(a.managed, "cuMemAllocManaged");
		by_proc_address(a.alloc_async, "cuMemAllocAsync");
		by_proc_address(a.free_async, "cuMemFreeAsync");
		by_proc_address(a.info, "cuMemGetInfo");
		by_proc_address(a.create, "cuMemCreate");
		by_proc_address(a.release, "cuMemRelease");
	} else if (via == "dlsym") {
		void *lib = dlopen("libcuda.so.1", RTLD_NOW);
		by_dlsym(a.alloc, lib, "cuMemAlloc_v2");
		by_dlsym(a.pitch, lib, "cuMemAllocPitch_v2");
		by_dlsym(a.free, lib, "cuMemFree_v2");
		by_dlsym(a.managed, lib, "cuMemAllocManaged");
		by_dlsym(a.alloc_async, lib, "cuMemAllocAsync");
		by_dlsym(a.free_async, lib, "cuMemFreeAsync");
		by_dlsym(a.info, lib, "cuMemGetInfo_v2");
		by_dlsym(a.create, lib, "cuMemCreate");
		by_dlsym(a.release, lib, "cuMemRelease");
	}
	return a;
}

struct CommLibrary {
	int (*alloc)(CUdeviceptr *, size_t);
	int (*free)(CUdeviceptr);
};

// libnccl-standin.so, found beside this program.
const CommLibrary &comm_library()
{
	static CommLibrary lib = [] {
		std::string self = std::filesystem::read_symlink("/proc/self/exe").parent_path();
		void *h = dlopen((self + "/libnccl-standin.so").c_str(), RTLD_NOW);
		if (!h) {
			std::fprintf(stderr, "%s\n", dlerror());
			std::exit(2);
		}
		return CommLibrary{reinterpret_cast<int (*)(CUdeviceptr *, size_t)>(dlsym(h, "standin_alloc")),
				   reinterpret_cast<int (*)(CUdeviceptr)>(dlsym(h, "standin_free"))};
	}();
	return lib;
}

// Whether all of [p, p + size) is on device dev. The fake driver says so
// itself. A real one says only where a managed range was last prefetched to
// (dev for all of it, else another location or none), not whether the move
// is done: once the agent has asked for all of it on dev, a context
// synchronize waits for those prefetches, which run in this context.
bool on_device(CUdeviceptr p, std::size_t size, CUdevice dev)
{
	static auto fake = optional_symbol<void (*)(CUdeviceptr, size_t, unsigned long long *, unsigned long long *)>(
		"fakecuda_residency");
	static auto range_attribute = optional_symbol<decltype(&::cuMemRangeGetAttribute)>("cuMemRangeGetAttribute");
	if (fake) {
		unsigned long long d = 0, h = 0;
		fake(p, size, &d, &h);
		return d == size;
	}
	int where = CU_DEVICE_INVALID;
	return range_attribute &&
	       !range_attribute(&where, sizeof where, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, p, size) &&
	       where == dev && !cuCtxSynchronize();
}

} // namespace

std::vector<std::uint32_t> pattern(const std::string &name, std::size_t size)
{
	std::uint32_t seed = 2166136261u;
	for (char c : name)
		seed = (seed ^ static_cast<unsigned char>(c)) * 16777619u;
	std::vector<std::uint32_t> v(size / 4);
	for (std::size_t i = 0; i < v.size(); i++)
		v[i] = seed ^ static_cast<std::uint32_t>(i * 2654435761u);
	return v;
}

int main(int argc, char **argv)
{
	std::string via = argc > 2 && !std::strcmp(argv[1], "--via") ? argv[2] : "direct";
	CUdevice dev;
	CUcontext ctx;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
		std::printf("err no device\n");
		return 1;
	}
	Api api = resolve(via);
	std::map<std::string, Buf> bufs;
	std::setvbuf(stdout, nullptr, _IOLBF, 0);
	std::printf("ready\n");
	for (std::string line; std::getline(std::cin, line);) {
		std::istringstream in(line);
		std::string cmd, name;
		in >> cmd >> name;
		std::ostringstream out;
		if (cmd == "alloc" || cmd == "async" || cmd == "managed" || cmd == "pitch" || cmd == "vmm" ||
		    cmd == "comm") {
			std::size_t mib = 0;
			in >> mib;
			Buf b;
			b.size = mib << 20;
			b.how = cmd;
			CUresult r;
			if (cmd == "alloc")
				r = api.alloc(&b.ptr, b.size);
			else if (cmd == "async")
				r = api.alloc_async(&b.ptr, b.size, nullptr);
			else if (cmd == "managed")
				r = api.managed(&b.ptr, b.size, CU_MEM_ATTACH_GLOBAL);
			else if (cmd == "comm")
				r = static_cast<CUresult>(comm_library().alloc(&b.ptr, b.size));
			else if (cmd == "pitch") {
				std::size_t pitch = 0;
				r = api.pitch(&b.ptr, &pitch, 1000, b.size / 1024, 4);
				b.size = pitch * (b.size / 1024);
			} else {
				CUmemAllocationProp prop{};
				prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
				prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, dev};
				r = api.create(&b.handle, b.size, &prop, 0);
			}
			if (r != CUDA_SUCCESS) {
				out << "err " << r;
			} else {
				if (b.ptr) {
					auto p = pattern(name, b.size);
					r = cuMemcpyHtoD(b.ptr, p.data(), p.size() * 4);
				}
				bufs[name] = b;
				out << (r == CUDA_SUCCESS ? "ok" : "err " + std::to_string(r));
			}
		} else if (cmd == "free" && bufs.count(name)) {
			Buf b = bufs[name];
			bufs.erase(name);
			CUresult r = b.how == "vmm"    ? api.release(b.handle)
				     : b.how == "comm" ? static_cast<CUresult>(comm_library().free(b.ptr))
				     : b.how == "async" ? api.free_async(b.ptr, nullptr)
				     : b.how == "pool" || b.how == "import" ? stream_free(b)
							: api.free(b.ptr);
			out << (r == CUDA_SUCCESS ? "ok" : "err " + std::to_string(r));
		} else if (cmd == "verify" && bufs.count(name)) {
			Buf &b = bufs[name];
			std::vector<std::uint32_t> got(b.size / 4);
			CUresult r = cuMemcpyDtoH(got.data(), b.ptr, got.size() * 4);
			out << (r != CUDA_SUCCESS ? "err " + std::to_string(r) : got == pattern(name, b.size) ? "ok" : "bad");
		} else if (cmd == "prio" && bufs.count(name)) {
			int p = 0;
			in >> p;
			auto set = optional_symbol<int (*)(const void *, size_t, int)>("gpuoversub_set_priority");
			int r = set ? set(reinterpret_cast<void *>(bufs[name].ptr), bufs[name].size, p) : -38;
			out << (r ? "err " + std::to_string(r) : "ok");
		} else if (cmd == "tag" && bufs.count(name)) {
			std::string tag;
			in >> tag;
			auto set = optional_symbol<int (*)(const void *, const char *)>("gpuoversub_tag");
			int r = set ? set(reinterpret_cast<void *>(bufs[name].ptr), tag.c_str()) : -38;
			out << (r ? "err " + std::to_string(r) : "ok");
		} else if (cmd == "where" && bufs.count(name)) {
			auto res = optional_symbol<void (*)(CUdeviceptr, size_t, unsigned long long *, unsigned long long *)>(
				"fakecuda_residency");
			unsigned long long d = 0, h = 0;
			if (res)
				res(bufs[name].ptr, bufs[name].size, &d, &h);
			out << "ok " << (res ? static_cast<long long>(d) : -1) << " " << (res ? static_cast<long long>(h) : -1);
		} else if (cmd == "meminfo") {
			std::size_t f = 0, t = 0;
			CUresult r = api.info(&f, &t);
			out << (r ? "err " + std::to_string(r) : "ok " + std::to_string(f) + " " + std::to_string(t));
		} else if (cmd == "stats") {
			auto get = optional_symbol<int (*)(gpuoversub_usage *)>("gpuoversub_stats");
			gpuoversub_usage u{};
			u.size = sizeof u;
			int r = get ? get(&u) : -38;
			out << (r ? "err " + std::to_string(r) : "ok");
			if (!r)
				out << " " << u.managed << " " << u.device_bytes << " " << u.host_bytes << " " << u.allowed
				    << " " << u.evictions << " " << u.returns << " " << u.bytes_evicted << " "
				    << u.bytes_returned << " " << u.daemon_requests << " " << u.daemon_waits;
		} else if (cmd == "usage") {
			auto get = optional_symbol<void (*)(int, unsigned long long *)>("fakecuda_usage");
			unsigned long long u[5] = {};
			if (get)
				get(0, u);
			out << (get ? "ok" : "err -38") << " " << u[0] << " " << u[1] << " " << u[2] << " " << u[3] << " "
			    << u[4];
		} else if (cmd == "fork") {
			pid_t pid = fork();
			if (pid == 0) {	// a child that uses no CUDA, as CUDA requires
				CUdeviceptr none = 0;
				_exit(none == 0 ? 0 : 1);
			}
			int status = 0;
			waitpid(pid, &status, 0);
			out << "ok " << status;
		} else if (cmd == "bench") {
			int n = std::stoi(name);
			std::size_t mib = 0;
			in >> mib;
			std::vector<long long> ns;
			CUresult r = CUDA_SUCCESS;
			for (int i = 0; i < n && r == CUDA_SUCCESS; i++) {
				CUdeviceptr p = 0;
				auto t = std::chrono::steady_clock::now();
				r = api.alloc(&p, mib << 20);
				if (r == CUDA_SUCCESS)
					r = api.free(p);
				ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(
						     std::chrono::steady_clock::now() - t).count());
			}
			std::sort(ns.begin(), ns.end());
			out << (r ? "err " + std::to_string(r) : "ok " + std::to_string(ns[ns.size() / 2]));
		} else if (cmd == "press") {
			std::size_t mib = 0;
			long long limit_ms = 0;
			in >> mib >> limit_ms;
			Buf b;
			b.size = mib << 20;
			b.how = "alloc";
			auto t = std::chrono::steady_clock::now();
			auto since = [&] { return std::chrono::steady_clock::now() - t; };
			CUresult r = api.alloc(&b.ptr, b.size);
			bool there = false;
			// Polled: a benchmark's measurement, 100 us apart, not a test's wait.
			while (r == CUDA_SUCCESS && since() < std::chrono::milliseconds(limit_ms)) {
				if ((there = on_device(b.ptr, b.size, dev)))
					break;
				std::this_thread::sleep_for(std::chrono::microseconds(100));
			}
			if (r == CUDA_SUCCESS)
				bufs[name] = b;
			out << (r ? "err " + std::to_string(r)
			     : there ? "ok " + std::to_string(std::chrono::nanoseconds(since()).count())
				     : std::string("bad"));
		} else if (cmd == "threads") {
			int rounds = 0;
			in >> rounds;
			std::atomic<int> bad{0};
			std::vector<std::thread> pool;
			for (int t = 0; t < std::stoi(name); t++)
				pool.emplace_back([&, t] {
					cuCtxSetCurrent(ctx);
					for (int r = 0; r < rounds; r++) {
						std::string tag = "t" + std::to_string(t) + "r" + std::to_string(r);
						std::size_t size = std::size_t(1 + (t + r) % 4) << 20;
						CUdeviceptr p = 0;
						auto want = pattern(tag, size);
						std::vector<std::uint32_t> got(want.size());
						if (api.alloc(&p, size) || cuMemcpyHtoD(p, want.data(), size) ||
						    cuMemcpyDtoH(got.data(), p, size) || got != want || api.free(p))
							bad++;
					}
				});
			for (auto &th : pool)
				th.join();
			out << (bad ? "bad " + std::to_string(bad.load()) : "ok");
		} else if (cmd == "busy") {
			auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::stod(name));
			auto *kernel = reinterpret_cast<CUfunction>(&bufs);	// the fake driver runs nothing
			CUresult r = CUDA_SUCCESS;
			while (r == CUDA_SUCCESS && std::chrono::steady_clock::now() < until) {
				r = cuLaunchKernel(kernel, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr);
				std::this_thread::sleep_for(std::chrono::milliseconds(2));
			}
			out << (r ? "err " + std::to_string(r) : "ok");
		} else if (cmd == "quit") {
			std::printf("ok\n");
			return 0;
		} else if (std::string reply; stream_command(cmd, name, in, bufs, reply)) {
			out << reply;
		} else {
			out << "err unknown command or buffer: " << line;
		}
		std::printf("%s\n", out.str().c_str());
	}
	return 0;
}
