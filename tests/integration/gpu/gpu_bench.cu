// On-GPU programs for tests/integration/gpu/run.sh, through the CUDA runtime (so the
// agent is reached through cuGetProcAddress). Each mode prints one line.
//   bandwidth MIB     streaming kernel over a cudaMalloc buffer: GB/s
//   bandwidth-reused MIB  the same over a buffer allocated after a
//                     cudaMalloc+cudaFree of its size, which the agent's
//                     reserve (GPUOVERSUB_RESERVE) serves: GB/s, and that
//                     allocation's microseconds (small if the reserve served it)
//   alloc MIB N       median microseconds of cudaMalloc+cudaFree
//   alloc-parts MIB N median microseconds of each step of the agent's fast
//                     path without the agent: managed alloc, advise, prefetch
//   evict-chunks MIB  GB/s evicting random 2 MiB chunks as the agent does:
//                     one advise+prefetch call per chunk, or one batched
//                     prefetch call, each with one wait at the end
//   evict MIB         GB/s of advise+prefetch to host (the agent's eviction)
//                     and of pinned device-to-host cudaMemcpy
//   integrity MIB SEC fill buffers by kernel, hold SEC seconds, check: ok|bad
//   victim MIB SEC    passes over the buffer per second
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "gpu_common.cuh"

__global__ void scale(float4 *p, size_t n)
{
	for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
		float4 v = p[i];
		p[i] = make_float4(v.x * 1.0001f, v.y * 1.0001f, v.z * 1.0001f, v.w * 1.0001f);
	}
}

// GPU_BENCH_MANAGED=1: plain UVM, every buffer from cudaMallocManaged.
template <class T>
static cudaError_t buffer(T **p, size_t bytes)
{
	static const bool managed = std::getenv("GPU_BENCH_MANAGED") && *std::getenv("GPU_BENCH_MANAGED") == '1';
	return managed ? cudaMallocManaged(p, bytes) : cudaMalloc(p, bytes);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		std::fprintf(stderr, "usage: gpu_bench bandwidth|bandwidth-reused|alloc|evict|integrity|victim MIB [N|SEC]\n");
		return 2;
	}
	const char *mode = argv[1];
	size_t bytes = size_t(std::atoll(argv[2])) << 20;
	int sms = 0;
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	dim3 grid(sms * 8), block(256);
	if (!std::strcmp(mode, "bandwidth") || !std::strcmp(mode, "bandwidth-reused")) {
		float4 *p;
		const bool reused = !std::strcmp(mode, "bandwidth-reused");
		if (reused) {
			CHECK(cudaMalloc(&p, bytes));
			CHECK(cudaFree(p));
		}
		auto allocated = std::chrono::steady_clock::now();
		CHECK(cudaMalloc(&p, bytes));
		const double alloc_us = seconds_since(allocated) * 1e6;
		CHECK(cudaMemset(p, 0, bytes));
		scale<<<grid, block>>>(p, bytes / 16);
		CHECK(cudaDeviceSynchronize());
		auto t = std::chrono::steady_clock::now();
		const int reps = 50;
		for (int i = 0; i < reps; i++)
			scale<<<grid, block>>>(p, bytes / 16);
		CHECK(cudaDeviceSynchronize());
		std::printf("bandwidth %.1f GB/s", 2.0 * bytes * reps / seconds_since(t) / 1e9);
		if (reused)
			std::printf(" allocated in %.1f us", alloc_us);
		std::printf("\n");
	} else if (!std::strcmp(mode, "alloc")) {
		int n = argc > 3 ? std::atoi(argv[3]) : 200;
		std::vector<double> us;
		void *warm;
		CHECK(cudaMalloc(&warm, 1 << 20));
		for (int i = 0; i < n; i++) {
			void *p;
			auto t = std::chrono::steady_clock::now();
			CHECK(cudaMalloc(&p, bytes));
			us.push_back(seconds_since(t) * 1e6);
			CHECK(cudaFree(p));
		}
		std::nth_element(us.begin(), us.begin() + n / 2, us.end());
		std::printf("alloc %.1f us\n", us[n / 2]);
	} else if (!std::strcmp(mode, "alloc-parts")) {
		int n = argc > 3 ? std::atoi(argv[3]) : 200;
		std::vector<double> alloc, advise, prefetch;
		cudaStream_t s;
		CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
		cudaMemLocation dev{cudaMemLocationTypeDevice, 0};
		for (int i = 0; i < n; i++) {
			void *p;
			auto t = std::chrono::steady_clock::now();
			CHECK(cudaMallocManaged(&p, bytes));
			alloc.push_back(seconds_since(t) * 1e6);
			t = std::chrono::steady_clock::now();
			CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, dev));
			advise.push_back(seconds_since(t) * 1e6);
			t = std::chrono::steady_clock::now();
			CHECK(cudaMemPrefetchAsync(p, bytes, dev, 0, s));
			prefetch.push_back(seconds_since(t) * 1e6);
			CHECK(cudaStreamSynchronize(s));
			CHECK(cudaFree(p));
		}
		auto median = [n](std::vector<double> &v) {
			std::nth_element(v.begin(), v.begin() + n / 2, v.end());
			return v[n / 2];
		};
		std::printf("alloc-parts managed %.1f us advise %.1f us prefetch %.1f us\n", median(alloc),
			    median(advise), median(prefetch));
	} else if (!std::strcmp(mode, "evict-chunks")) {
		const size_t chunk = 2 << 20, n = bytes / chunk;
		char *m;
		cudaStream_t s;
		CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
		CHECK(cudaMallocManaged(&m, bytes));
		cudaMemLocation dev{cudaMemLocationTypeDevice, 0}, host{cudaMemLocationTypeHost, 0};
		std::vector<size_t> order(n);
		for (size_t i = 0; i < n; i++)
			order[i] = (i * 2654435761u) % n;	// a fixed scattered order
		std::sort(order.begin(), order.end());
		order.erase(std::unique(order.begin(), order.end()), order.end());
		std::vector<void *> ptrs;
		std::vector<size_t> sizes(order.size(), chunk);
		for (size_t i : order)
			ptrs.push_back(m + i * chunk);
		std::vector<size_t> shuffled(ptrs.size());
		for (size_t i = 0; i < ptrs.size(); i++)
			shuffled[i] = (i * 7919) % ptrs.size();
		double each = 0, batched = 0;
		for (int variant = 0; variant < 2; variant++) {
			CHECK(cudaMemAdvise(m, bytes, cudaMemAdviseSetPreferredLocation, dev));
			CHECK(cudaMemPrefetchAsync(m, bytes, dev, 0, s));
			fill<<<grid, block, 0, s>>>(reinterpret_cast<unsigned *>(m), bytes / 4, 7);
			CHECK(cudaStreamSynchronize(s));
			auto t = std::chrono::steady_clock::now();
			for (size_t k : shuffled) {
				CHECK(cudaMemAdvise(ptrs[k], chunk, cudaMemAdviseSetPreferredLocation, host));
				CHECK(cudaMemAdvise(ptrs[k], chunk, cudaMemAdviseSetAccessedBy, dev));
				if (variant == 0)
					CHECK(cudaMemPrefetchAsync(ptrs[k], chunk, host, 0, s));
			}
			if (variant == 1) {
				size_t idx = 0;
				CHECK(cudaMemPrefetchBatchAsync(ptrs.data(), sizes.data(), ptrs.size(), &host, &idx, 1, 0, s));
			}
			CHECK(cudaStreamSynchronize(s));
			(variant ? batched : each) = double(ptrs.size() * chunk) / seconds_since(t) / 1e9;
		}
		std::printf("evict-chunks %zu x 2 MiB: per-call %.1f GB/s batched %.1f GB/s\n", ptrs.size(), each, batched);
	} else if (!std::strcmp(mode, "evict")) {
		char *m, *d, *h;
		cudaStream_t s;
		CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
		CHECK(cudaMallocManaged(&m, bytes));
		CHECK(cudaMalloc(&d, bytes));
		CHECK(cudaMallocHost(&h, bytes));
		cudaMemLocation dev{cudaMemLocationTypeDevice, 0}, host{cudaMemLocationTypeHost, 0};
		double managed = 0, pinned = 0;
		for (int rep = 0; rep < 3; rep++) {
			CHECK(cudaMemAdvise(m, bytes, cudaMemAdviseSetPreferredLocation, dev));
			CHECK(cudaMemPrefetchAsync(m, bytes, dev, 0, s));
			fill<<<grid, block, 0, s>>>(reinterpret_cast<unsigned *>(m), bytes / 4, 7);
			CHECK(cudaStreamSynchronize(s));
			auto t = std::chrono::steady_clock::now();
			CHECK(cudaMemAdvise(m, bytes, cudaMemAdviseSetPreferredLocation, host));
			CHECK(cudaMemAdvise(m, bytes, cudaMemAdviseSetAccessedBy, dev));
			CHECK(cudaMemPrefetchAsync(m, bytes, host, 0, s));
			CHECK(cudaStreamSynchronize(s));
			managed = std::max(managed, bytes / seconds_since(t) / 1e9);
			t = std::chrono::steady_clock::now();
			CHECK(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s));
			CHECK(cudaStreamSynchronize(s));
			pinned = std::max(pinned, bytes / seconds_since(t) / 1e9);
		}
		std::printf("evict %.1f GB/s pinned %.1f GB/s\n", managed, pinned);
	} else if (!std::strcmp(mode, "integrity") || !std::strcmp(mode, "victim")) {
		double secs = argc > 3 ? std::atof(argv[3]) : 5;
		const size_t piece = 64 << 20;
		std::vector<unsigned *> bufs(bytes / piece);
		for (size_t i = 0; i < bufs.size(); i++) {
			CHECK(buffer(&bufs[i], piece));
			fill<<<grid, block>>>(bufs[i], piece / 4, unsigned(i));
		}
		CHECK(cudaDeviceSynchronize());
		auto t = std::chrono::steady_clock::now();
		long passes = 0;
		if (std::strcmp(mode, "victim")) {	// what run.sh waits for before it starts the next job
			std::printf("holding %zu MiB\n", bufs.size() * piece >> 20);
			std::fflush(stdout);
		}
		if (!std::strcmp(mode, "victim")) {
			for (; seconds_since(t) < secs; passes++) {
				for (auto *b : bufs)
					scale<<<grid, block>>>(reinterpret_cast<float4 *>(b), piece / 16);
				CHECK(cudaDeviceSynchronize());
			}
			std::printf("victim %.2f passes/s\n", passes / seconds_since(t));
			return 0;
		}
		std::this_thread::sleep_for(std::chrono::duration<double>(secs));
		unsigned *bad;
		CHECK(cudaMallocManaged(&bad, sizeof *bad));
		*bad = 0;
		for (size_t i = 0; i < bufs.size(); i++)
			check<<<grid, block>>>(bufs[i], piece / 4, unsigned(i), bad);
		CHECK(cudaDeviceSynchronize());
		std::printf(*bad ? "bad %u\n" : "ok\n", *bad);
		return *bad ? 1 : 0;
	} else {
		std::fprintf(stderr, "gpu_bench: unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
