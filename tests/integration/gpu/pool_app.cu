// Matrix row driver-pool (matrix.sh): an explicit stream-ordered
// pool as RAPIDS RMM keeps one, through the driver API. MIB of ballast
// comes from the pool and is held; meanwhile blocks are allocated, used and
// freed on two streams, a block freed on one stream being taken again on
// the other once an event orders the two, as the stream-ordered allocator
// allows. Prints "ok|bad ..." and the result line run.sh compares.
//   pool_app MIB
#include <cuda.h>

#include <vector>

#include "gpu_common.cuh"

#define CU(x)                                                                          \
	do {                                                                           \
		CUresult r_ = (x);                                                     \
		if (r_ != CUDA_SUCCESS) {                                              \
			const char *s_ = "unknown";                                    \
			cuGetErrorString(r_, &s_);                                     \
			std::printf("bad %s: %s\n", #x, s_);                           \
			std::exit(1);                                                  \
		}                                                                      \
	} while (0)

int main(int argc, char **argv)
{
	const size_t piece = 64 << 20, block = 4 << 20;
	size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
	CHECK(cudaFree(nullptr));	// the runtime makes the primary context current
	CUdevice dev;
	CU(cuCtxGetDevice(&dev));
	CUmemPoolProps props{};
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location = {CU_MEM_LOCATION_TYPE_DEVICE, dev};
	CUmemoryPool pool;
	CU(cuMemPoolCreate(&pool, &props));
	cuuint64_t keep = ~0ULL;	// RMM keeps what it has freed, as this does
	CU(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep));
	CUstream a, b;
	CU(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
	CU(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
	CUevent freed;
	CU(cuEventCreate(&freed, CU_EVENT_DISABLE_TIMING));
	dim3 grid(256), threads(256);
	auto on = [](CUstream s) { return reinterpret_cast<cudaStream_t>(s); };

	std::vector<CUdeviceptr> ballast((mib << 20) / piece);
	for (size_t i = 0; i < ballast.size(); i++) {
		CU(cuMemAllocFromPoolAsync(&ballast[i], piece, pool, a));
		fill<<<grid, threads, 0, on(a)>>>(reinterpret_cast<unsigned *>(ballast[i]), piece / 4, unsigned(i));
	}
	CU(cuStreamSynchronize(a));
	unsigned *sums;
	CHECK(cudaMallocManaged(&sums, 2 * sizeof *sums));
	sums[0] = sums[1] = 0;
	auto churn = [&](int rounds, int first) {
		for (int r = first; r < first + rounds; r++) {
			CUdeviceptr p, q;
			CU(cuMemAllocFromPoolAsync(&p, block, pool, a));
			fill<<<grid, threads, 0, on(a)>>>(reinterpret_cast<unsigned *>(p), block / 4, unsigned(r));
			digest<<<grid, threads, 0, on(a)>>>(reinterpret_cast<unsigned *>(p), block / 4, &sums[0]);
			CU(cuMemFreeAsync(p, a));
			CU(cuEventRecord(freed, a));
			CU(cuStreamWaitEvent(b, freed, 0));	// p's block may now serve b
			CU(cuMemAllocFromPoolAsync(&q, block, pool, b));
			fill<<<grid, threads, 0, on(b)>>>(reinterpret_cast<unsigned *>(q), block / 4, unsigned(~r));
			digest<<<grid, threads, 0, on(b)>>>(reinterpret_cast<unsigned *>(q), block / 4, &sums[0]);
			CU(cuMemFreeAsync(q, b));
		}
		CU(cuStreamSynchronize(a));
		CU(cuStreamSynchronize(b));
	};
	churn(100, 0);
	hold(1);
	churn(100, 100);	// while the other job presses
	hold(2);
	for (size_t i = 0; i < ballast.size(); i++) {
		check<<<grid, threads, 0, on(a)>>>(reinterpret_cast<const unsigned *>(ballast[i]), piece / 4, unsigned(i),
						    &sums[1]);
		CU(cuMemFreeAsync(ballast[i], a));
	}
	CU(cuStreamSynchronize(a));
	CU(cuMemPoolDestroy(pool));
	std::printf("%s pool ballast %zu x 64 MiB, %u bad words, 200 rounds on two streams\n", sums[1] ? "bad" : "ok",
		    ballast.size(), sums[1]);
	std::printf("result {\"checksum\": \"%08x\", \"curve\": []}\n", sums[0]);
	return sums[1] ? 1 : 0;
}
