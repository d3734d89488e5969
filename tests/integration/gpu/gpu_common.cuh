// What the CUDA programs of the GPU suite share: the error check, the pattern
// kernels, and the pause of a matrix row beside the holding job (the
// protocol of matrix.sh, as row_common.py has it for Python).
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <thread>

#define CHECK(x)                                                                       \
	do {                                                                           \
		cudaError_t e_ = (x);                                                  \
		if (e_ != cudaSuccess) {                                               \
			std::printf("error %s: %s\n", #x, cudaGetErrorString(e_));     \
			std::exit(1);                                                  \
		}                                                                      \
	} while (0)

__global__ void fill(unsigned *p, size_t n, unsigned seed)
{
	for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
		p[i] = seed ^ unsigned(i * 2654435761u);
}

__global__ void check(const unsigned *p, size_t n, unsigned seed, unsigned *bad)
{
	for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
		if (p[i] != (seed ^ unsigned(i * 2654435761u)))
			atomicAdd(bad, 1u);
}

// An order-free digest of what a buffer holds: the same data, the same
// digest, whatever the memory behind it.
__global__ void digest(const unsigned *p, size_t n, unsigned *out)
{
	for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
		atomicXor(out, p[i] * 2654435761u + unsigned(i));
}

static inline double seconds_since(std::chrono::steady_clock::time_point t)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Under run.sh (GOS_ROW_RELEASE=DIR): says "holding N" and waits until
// DIR/N exists, so that the other job can come and go at fixed points.
static inline void hold(int n)
{
	const char *dir = std::getenv("GOS_ROW_RELEASE");
	if (!dir || !*dir)
		return;
	std::printf("holding %d\n", n);
	std::fflush(stdout);
	std::string path = std::string(dir) + "/" + std::to_string(n);
	auto t = std::chrono::steady_clock::now();
	for (struct stat st; stat(path.c_str(), &st) != 0;) {
		if (seconds_since(t) > 600) {
			std::printf("bad: %s never appeared\n", path.c_str());
			std::exit(1);
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
}
