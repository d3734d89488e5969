// Matrix row threads-streams (matrix.sh): host threads, each with
// a stream of its own, allocate, fill, check and free buffers of varied
// sizes at once (cudaMalloc/cudaFree and cudaMallocAsync/cudaFreeAsync in
// turn) while MIB of ballast is held, evicted and returned. Prints
// "ok|bad ..." and the result line run.sh compares.
//   stream_churn MIB [THREADS] [ROUNDS]
#include <atomic>
#include <vector>

#include "gpu_common.cuh"

int main(int argc, char **argv)
{
	const size_t piece = 64 << 20;
	size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
	int nthreads = argc > 2 ? std::atoi(argv[2]) : 8, rounds = argc > 3 ? std::atoi(argv[3]) : 100;
	dim3 grid(128), threads(256);
	std::vector<unsigned *> ballast((mib << 20) / piece);
	for (size_t i = 0; i < ballast.size(); i++) {
		CHECK(cudaMalloc(&ballast[i], piece));
		fill<<<grid, threads>>>(ballast[i], piece / 4, unsigned(i));
	}
	unsigned *sums;	// [0] digest, [1] bad words
	CHECK(cudaMallocManaged(&sums, 2 * sizeof *sums));
	sums[0] = sums[1] = 0;
	CHECK(cudaDeviceSynchronize());
	std::atomic<int> failed{0};
	auto churn = [&](int first) {
		std::vector<std::thread> pool;
		for (int t = 0; t < nthreads; t++)
			pool.emplace_back([&, t] {
				cudaStream_t s;
				if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
					failed++;
					return;
				}
				for (int r = first; r < first + rounds; r++) {
					size_t bytes = size_t(1 + (t + r) % 8) << 20;
					unsigned seed = unsigned(t * 100003 + r), *p = nullptr;
					bool async = r % 2;
					cudaError_t e = async ? cudaMallocAsync(&p, bytes, s) : cudaMalloc(&p, bytes);
					if (e != cudaSuccess) {
						failed++;
						continue;
					}
					fill<<<grid, threads, 0, s>>>(p, bytes / 4, seed);
					check<<<grid, threads, 0, s>>>(p, bytes / 4, seed, &sums[1]);
					digest<<<grid, threads, 0, s>>>(p, bytes / 4, &sums[0]);
					e = async ? cudaFreeAsync(p, s) : cudaFree(p);
					failed += e != cudaSuccess;
				}
				failed += cudaStreamSynchronize(s) != cudaSuccess || cudaStreamDestroy(s) != cudaSuccess;
			});
		for (auto &th : pool)
			th.join();
	};
	churn(0);
	hold(1);
	churn(rounds);	// while the other job presses
	hold(2);
	for (size_t i = 0; i < ballast.size(); i++)
		check<<<grid, threads>>>(ballast[i], piece / 4, unsigned(i), &sums[1]);
	CHECK(cudaDeviceSynchronize());
	bool ok = !sums[1] && !failed;
	std::printf("%s %d threads x %d rounds, %d failed calls, %u bad words, ballast %zu x 64 MiB\n", ok ? "ok" : "bad",
		    nthreads, 2 * rounds, failed.load(), sums[1], ballast.size());
	std::printf("result {\"checksum\": \"%08x\", \"curve\": []}\n", sums[0]);
	return ok ? 0 : 1;
}
