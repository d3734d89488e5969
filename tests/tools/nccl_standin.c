/*
 * Stands in for a communication library in agent tests: built as
 * libnccl-standin.so, so the agent's caller check sees an NCCL-like
 * library allocating device memory, which must stay unevictable.
 */
#include <cuda.h>

static volatile int calls;

/* Not a tail call: the agent must see this library as the caller. */
__attribute__((visibility("default"))) int standin_alloc(CUdeviceptr *p, size_t size)
{
	int r = (int)cuMemAlloc(p, size);
	calls++;
	return r;
}

__attribute__((visibility("default"))) int standin_free(CUdeviceptr p)
{
	return (int)cuMemFree(p);
}
