// Eviction and return as the agent's executor does them with 1, 2, 4 and 8
// lanes, against pinned cudaMemcpy device-to-host and host-to-device in the
// same run: a managed buffer of MIB, advised whole first (the driver
// serializes advice against migrations), then cut into as many disjoint
// ranges as lanes, each prefetched by its own thread on its own stream.
// Prints one line per lane count and direction, and the pinned baselines:
//   lanes N evict GB/s return GB/s
//   pinned d2h GB/s h2d GB/s
// Usage: lanes_bench MIB
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "gpu_common.cuh"

namespace {

// Moves all of m to `to` with `lanes` threads; GB/s, best of three.
double move(char *m, size_t bytes, int lanes, bool evict, const std::vector<cudaStream_t> &streams)
{
	cudaMemLocation dev{cudaMemLocationTypeDevice, 0}, host{cudaMemLocationTypeHost, 0};
	cudaMemLocation to = evict ? host : dev, from = evict ? dev : host;
	double best = 0;
	for (int rep = 0; rep < 3; rep++) {
		// Start where the move starts from, the data written there.
		CHECK(cudaMemAdvise(m, bytes, cudaMemAdviseSetPreferredLocation, from));
		CHECK(cudaMemPrefetchAsync(m, bytes, from, 0, streams[0]));
		CHECK(cudaStreamSynchronize(streams[0]));
		if (evict) {
			fill<<<1024, 256, 0, streams[0]>>>(reinterpret_cast<unsigned *>(m), bytes / 4, 7);
			CHECK(cudaStreamSynchronize(streams[0]));
		}
		auto t = std::chrono::steady_clock::now();
		CHECK(cudaMemAdvise(m, bytes, cudaMemAdviseSetPreferredLocation, to));
		if (evict)
			CHECK(cudaMemAdvise(m, bytes, cudaMemAdviseSetAccessedBy, dev));
		size_t share = (bytes / lanes + (2 << 20) - 1) / (2 << 20) * (2 << 20);
		std::vector<std::thread> threads;
		for (int l = 0; l < lanes; l++)
			threads.emplace_back([&, l] {
				size_t off = std::min(bytes, l * share), len = std::min(share, bytes - off);
				if (len)
					CHECK(cudaMemPrefetchAsync(m + off, len, to, 0, streams[l]));
				CHECK(cudaStreamSynchronize(streams[l]));
			});
		for (auto &th : threads)
			th.join();
		best = std::max(best, bytes / seconds_since(t) / 1e9);
	}
	return best;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 2) {
		std::fprintf(stderr, "usage: lanes_bench MIB\n");
		return 2;
	}
	size_t bytes = size_t(std::atoll(argv[1])) << 20;
	std::vector<cudaStream_t> streams(8);
	for (auto &s : streams)
		CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	char *m, *d, *h;
	CHECK(cudaMallocManaged(&m, bytes));
	for (int lanes : {1, 2, 4, 8}) {
		double evict = move(m, bytes, lanes, true, streams);
		double ret = move(m, bytes, lanes, false, streams);
		std::printf("lanes %d evict %.1f return %.1f\n", lanes, evict, ret);
	}
	CHECK(cudaFree(m));
	CHECK(cudaMalloc(&d, bytes));
	CHECK(cudaMallocHost(&h, bytes));
	double d2h = 0, h2d = 0;
	for (int rep = 0; rep < 3; rep++) {
		auto t = std::chrono::steady_clock::now();
		CHECK(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, streams[0]));
		CHECK(cudaStreamSynchronize(streams[0]));
		d2h = std::max(d2h, bytes / seconds_since(t) / 1e9);
		t = std::chrono::steady_clock::now();
		CHECK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, streams[0]));
		CHECK(cudaStreamSynchronize(streams[0]));
		h2d = std::max(h2d, bytes / seconds_since(t) / 1e9);
	}
	std::printf("pinned d2h %.1f h2d %.1f\n", d2h, h2d);
	return 0;
}
