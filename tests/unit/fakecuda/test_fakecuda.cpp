// The fake driver's models of what the real driver does on the paths the
// agent meets in frameworks: CUDA IPC refused on anything but cuMemAlloc
// memory, pools and their stream order, the virtual-memory API's mapping
// and access rules, stream capture, and batched discard. The fake (tests/fakecuda, opened
// here with dlopen) says beside each rule where it comes from.
#define BOOST_TEST_MODULE fakecuda
#include <boost/test/unit_test.hpp>

#include <cuda.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/agent/agent_harness.hpp"

namespace {

constexpr std::size_t MiB = 1 << 20;

void *driver_library()
{
	static void *lib = [] {
		setenv("FAKECUDA_MEMORY", "256M", 1);
		unsetenv("FAKECUDA_STATE");
		unsetenv("FAKECUDA_LOG");
		void *h = dlopen(gos_test::build_path("tests/fakecuda/libcuda.so.1").c_str(), RTLD_NOW | RTLD_LOCAL);
		if (!h)
			throw std::runtime_error(dlerror());
		return h;
	}();
	return lib;
}

template <class F>
F sym(const char *name)
{
	auto f = reinterpret_cast<F>(dlsym(driver_library(), name));
	if (!f)
		throw std::runtime_error(std::string("the fake driver lacks ") + name);
	return f;
}

#define FN(name) decltype(&::name) name = sym<decltype(&::name)>(#name)

// The fake driver's entry points, and a current context.
struct Driver {
	FN(cuInit);
	FN(cuDeviceGet);
	FN(cuDevicePrimaryCtxRetain);
	FN(cuCtxSetCurrent);
	FN(cuCtxSynchronize);
	FN(cuMemAlloc_v2);
	FN(cuMemAllocManaged);
	FN(cuMemFree_v2);
	FN(cuMemcpyHtoD_v2);
	FN(cuMemcpyDtoH_v2);
	FN(cuMemGetInfo_v2);
	FN(cuStreamCreate);
	FN(cuStreamDestroy_v2);
	FN(cuStreamSynchronize);
	FN(cuStreamBeginCapture_v2);
	FN(cuStreamEndCapture);
	FN(cuStreamIsCapturing);
	FN(cuThreadExchangeStreamCaptureMode);
	FN(cuGraphDestroy);
	FN(cuEventCreate);
	FN(cuEventRecord);
	FN(cuEventQuery);
	FN(cuEventDestroy_v2);
	FN(cuMemAllocAsync);
	FN(cuMemAllocFromPoolAsync);
	FN(cuMemFreeAsync);
	FN(cuMemPoolCreate);
	FN(cuMemPoolDestroy);
	FN(cuMemPoolSetAttribute);
	FN(cuMemCreate);
	FN(cuMemRelease);
	FN(cuMemAddressReserve);
	FN(cuMemAddressFree);
	FN(cuMemMap);
	FN(cuMemUnmap);
	FN(cuMemSetAccess);
	FN(cuIpcGetMemHandle);
	FN(cuIpcOpenMemHandle_v2);
	FN(cuIpcCloseMemHandle);
	FN(cuMemPrefetchAsync_v2);
	FN(cuMemDiscardAndPrefetchBatchAsync);
	void (*residency)(CUdeviceptr, size_t, unsigned long long *, unsigned long long *) =
		sym<void (*)(CUdeviceptr, size_t, unsigned long long *, unsigned long long *)>("fakecuda_residency");
	int (*pause)(CUstream, int) = sym<int (*)(CUstream, int)>("fakecuda_stream_pause");

	CUcontext ctx{};
	Driver()
	{
		CUdevice dev;
		if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx))
			throw std::runtime_error("the fake driver has no device");
	}

	std::size_t used()
	{
		std::size_t free = 0, total = 0;
		cuMemGetInfo_v2(&free, &total);
		return total - free;
	}

	CUresult put(CUdeviceptr p, std::uint32_t value, std::size_t bytes)
	{
		std::vector<std::uint32_t> v(bytes / 4, value);
		return cuMemcpyHtoD_v2(p, v.data(), bytes);
	}

	// The first word at p, or ~0 if it cannot be read.
	std::uint32_t get(CUdeviceptr p)
	{
		std::uint32_t v = ~0u;
		return cuMemcpyDtoH_v2(&v, p, sizeof v) ? ~0u : v;
	}

	CUmemoryPool pool(cuuint64_t release_threshold)
	{
		CUmemPoolProps props{};
		props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
		props.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
		CUmemoryPool p{};
		BOOST_REQUIRE_EQUAL(cuMemPoolCreate(&p, &props), CUDA_SUCCESS);
		BOOST_REQUIRE_EQUAL(cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &release_threshold),
				    CUDA_SUCCESS);
		return p;
	}

	CUstream stream()
	{
		CUstream s{};
		BOOST_REQUIRE_EQUAL(cuStreamCreate(&s, 0), CUDA_SUCCESS);
		return s;
	}

	CUmemGenericAllocationHandle physical(std::size_t bytes, CUmemLocationType where = CU_MEM_LOCATION_TYPE_DEVICE)
	{
		CUmemAllocationProp prop{};
		prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
		prop.location = {where, 0};
		CUmemGenericAllocationHandle h{};
		BOOST_REQUIRE_EQUAL(cuMemCreate(&h, bytes, &prop, 0), CUDA_SUCCESS);
		return h;
	}

	CUresult access(CUdeviceptr p, std::size_t bytes, CUmemAccess_flags flags)
	{
		CUmemAccessDesc d{{CU_MEM_LOCATION_TYPE_DEVICE, 0}, flags};
		return cuMemSetAccess(p, bytes, &d, 1);
	}
};

} // namespace

BOOST_AUTO_TEST_CASE(ipc_exports_only_cuMemAlloc_memory_and_shares_it_with_another_process)
{
	Driver d;
	CUdeviceptr plain{}, managed{}, pooled{};
	CUipcMemHandle h{};
	BOOST_REQUIRE_EQUAL(d.cuMemAlloc_v2(&plain, 4 * MiB), CUDA_SUCCESS);
	BOOST_REQUIRE_EQUAL(d.put(plain, 7, 4 * MiB), CUDA_SUCCESS);
	BOOST_REQUIRE_EQUAL(d.cuMemAllocManaged(&managed, 4 * MiB, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
	BOOST_TEST(d.cuIpcGetMemHandle(&h, managed) == CUDA_ERROR_INVALID_VALUE);
	BOOST_TEST(d.cuIpcGetMemHandle(&h, plain + 4096) == CUDA_ERROR_INVALID_VALUE);	// not the base
	CUmemoryPool pool = d.pool(0);
	BOOST_REQUIRE_EQUAL(d.cuMemAllocFromPoolAsync(&pooled, 2 * MiB, pool, nullptr), CUDA_SUCCESS);
	BOOST_TEST(d.cuIpcGetMemHandle(&h, pooled) == CUDA_ERROR_INVALID_VALUE);
	BOOST_REQUIRE_EQUAL(d.cuIpcGetMemHandle(&h, plain), CUDA_SUCCESS);
	BOOST_TEST(d.get(plain) == 7u);	// the export kept the data

	pid_t child = fork();
	if (child == 0) {	// the importer writes through its own mapping
		CUdeviceptr there{};
		bool ok = d.cuIpcOpenMemHandle_v2(&there, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_SUCCESS &&
			  d.get(there) == 7u && d.put(there, 9, 4 * MiB) == CUDA_SUCCESS &&
			  d.cuMemFree_v2(there) == CUDA_ERROR_INVALID_VALUE && d.cuIpcCloseMemHandle(there) == CUDA_SUCCESS;
		_exit(ok ? 0 : 1);
	}
	int status = -1;
	BOOST_REQUIRE_EQUAL(waitpid(child, &status, 0), child);
	BOOST_TEST(status == 0);
	BOOST_TEST(d.get(plain) == 9u);
	BOOST_TEST(d.get(plain + 4 * MiB - 4) == 9u);
	for (CUdeviceptr p : {plain, managed, pooled})
		BOOST_TEST(d.cuMemFree_v2(p) == CUDA_SUCCESS);
	BOOST_TEST(d.cuMemPoolDestroy(pool) == CUDA_SUCCESS);
}

BOOST_AUTO_TEST_CASE(a_block_freed_on_a_stream_is_reused_only_in_its_order)
{
	Driver d;
	std::size_t start = d.used();
	CUmemoryPool pool = d.pool(~0ULL);	// keeps what is freed, as RMM sets it
	CUstream s1 = d.stream(), s2 = d.stream();
	CUdeviceptr a{}, b{}, c{}, e{};
	BOOST_REQUIRE_EQUAL(d.cuMemAllocFromPoolAsync(&a, 4 * MiB, pool, s1), CUDA_SUCCESS);
	BOOST_REQUIRE_EQUAL(d.pause(s1, 1), CUDA_SUCCESS);	// s1's work from now on is pending
	BOOST_REQUIRE_EQUAL(d.cuMemFreeAsync(a, s1), CUDA_SUCCESS);
	CUevent freed{};
	BOOST_REQUIRE_EQUAL(d.cuEventCreate(&freed, 0), CUDA_SUCCESS);
	BOOST_REQUIRE_EQUAL(d.cuEventRecord(freed, s1), CUDA_SUCCESS);
	BOOST_TEST(d.cuEventQuery(freed) == CUDA_ERROR_NOT_READY);
	BOOST_REQUIRE_EQUAL(d.cuMemAllocFromPoolAsync(&b, 4 * MiB, pool, s2), CUDA_SUCCESS);
	BOOST_TEST(b != a);	// s1 has not reached the free
	BOOST_REQUIRE_EQUAL(d.cuMemAllocFromPoolAsync(&c, 4 * MiB, pool, s1), CUDA_SUCCESS);
	BOOST_TEST(c == a);	// later in s1's own order: safe
	BOOST_REQUIRE_EQUAL(d.cuMemFreeAsync(c, s1), CUDA_SUCCESS);
	BOOST_REQUIRE_EQUAL(d.pause(s1, 0), CUDA_SUCCESS);
	BOOST_TEST(d.cuEventQuery(freed) == CUDA_SUCCESS);
	BOOST_REQUIRE_EQUAL(d.cuMemAllocFromPoolAsync(&e, 4 * MiB, pool, s2), CUDA_SUCCESS);
	BOOST_TEST(e == a);	// reached: any stream may have it
	std::size_t before = d.used();
	BOOST_REQUIRE_EQUAL(d.cuMemFreeAsync(e, s2), CUDA_SUCCESS);
	BOOST_REQUIRE_EQUAL(d.cuStreamSynchronize(s2), CUDA_SUCCESS);
	BOOST_TEST(d.used() == before);	// kept: the threshold is the pool's all
	BOOST_REQUIRE_EQUAL(d.cuMemFreeAsync(b, s2), CUDA_SUCCESS);
	BOOST_TEST(d.cuMemPoolDestroy(pool) == CUDA_SUCCESS);
	BOOST_TEST(d.used() == start);	// a destroyed pool keeps nothing
	d.cuEventDestroy_v2(freed);
	d.cuStreamDestroy_v2(s1);
	d.cuStreamDestroy_v2(s2);
}

BOOST_AUTO_TEST_CASE(a_pool_gives_back_beyond_its_threshold_at_synchronization)
{
	Driver d;
	std::size_t before = d.used();
	CUdeviceptr p{}, q{};
	BOOST_REQUIRE_EQUAL(d.cuMemAllocAsync(&p, 8 * MiB, nullptr), CUDA_SUCCESS);	// the default pool
	BOOST_TEST(d.used() == before + 8 * MiB);
	BOOST_REQUIRE_EQUAL(d.cuMemFreeAsync(p, nullptr), CUDA_SUCCESS);
	BOOST_TEST(d.used() == before + 8 * MiB);	// held until a synchronization
	BOOST_REQUIRE_EQUAL(d.cuStreamSynchronize(nullptr), CUDA_SUCCESS);
	BOOST_TEST(d.used() == before);	// threshold 0 by default
	CUmemoryPool pool = d.pool(0);
	BOOST_REQUIRE_EQUAL(d.cuMemAllocFromPoolAsync(&q, 2 * MiB, pool, nullptr), CUDA_SUCCESS);
	BOOST_REQUIRE_EQUAL(d.cuMemPoolDestroy(pool), CUDA_SUCCESS);
	BOOST_TEST(d.put(q, 3, 2 * MiB) == CUDA_SUCCESS);	// outlives its destroyed pool
	BOOST_TEST(d.get(q) == 3u);
	BOOST_REQUIRE_EQUAL(d.cuMemFreeAsync(q, nullptr), CUDA_SUCCESS);
	BOOST_TEST(d.used() == before);
}

BOOST_AUTO_TEST_CASE(vmm_ranges_fault_unless_mapped_and_accessible)
{
	Driver d;
	std::size_t before = d.used();
	CUdeviceptr va{};
	BOOST_REQUIRE_EQUAL(d.cuMemAddressReserve(&va, 8 * MiB, 0, 0, 0), CUDA_SUCCESS);
	CUmemGenericAllocationHandle h = d.physical(4 * MiB);
	BOOST_TEST(d.used() == before + 4 * MiB);	// device memory from cuMemCreate on
	BOOST_TEST(d.put(va, 1, 4 * MiB) == CUDA_ERROR_INVALID_VALUE);	// unmapped
	BOOST_TEST(d.cuMemMap(va, 4 * MiB, 2 * MiB, h, 0) == CUDA_ERROR_INVALID_VALUE);	// offset must be 0
	BOOST_TEST(d.cuMemMap(va + 4096, 2 * MiB, 0, h, 0) == CUDA_ERROR_INVALID_VALUE);	// unaligned
	BOOST_REQUIRE_EQUAL(d.cuMemMap(va, 4 * MiB, 0, h, 0), CUDA_SUCCESS);
	BOOST_TEST(d.cuMemMap(va + 2 * MiB, 2 * MiB, 0, h, 0) == CUDA_ERROR_INVALID_VALUE);	// already mapped
	BOOST_TEST(d.put(va, 1, 4 * MiB) == CUDA_ERROR_INVALID_VALUE);	// mapped, no access yet
	BOOST_REQUIRE_EQUAL(d.access(va, 4 * MiB, CU_MEM_ACCESS_FLAGS_PROT_READWRITE), CUDA_SUCCESS);
	BOOST_REQUIRE_EQUAL(d.put(va, 5, 4 * MiB), CUDA_SUCCESS);
	BOOST_TEST(d.put(va, 5, 6 * MiB) == CUDA_ERROR_INVALID_VALUE);	// runs into the unmapped rest
	BOOST_TEST(d.access(va, 6 * MiB, CU_MEM_ACCESS_FLAGS_PROT_READ) == CUDA_ERROR_INVALID_VALUE);
	BOOST_REQUIRE_EQUAL(d.access(va, 4 * MiB, CU_MEM_ACCESS_FLAGS_PROT_READ), CUDA_SUCCESS);
	BOOST_TEST(d.get(va) == 5u);
	BOOST_TEST(d.put(va, 6, 4 * MiB) == CUDA_ERROR_INVALID_VALUE);	// read only
	BOOST_TEST(d.cuMemUnmap(va, 2 * MiB) == CUDA_ERROR_INVALID_VALUE);	// part of a mapping
	BOOST_REQUIRE_EQUAL(d.cuMemRelease(h), CUDA_SUCCESS);
	BOOST_TEST(d.used() == before + 4 * MiB);	// still mapped: still there
	BOOST_TEST(d.cuMemAddressFree(va, 8 * MiB) == CUDA_ERROR_INVALID_VALUE);	// the fake's own rule
	BOOST_REQUIRE_EQUAL(d.cuMemUnmap(va, 4 * MiB), CUDA_SUCCESS);
	BOOST_TEST(d.used() == before);	// released and unmapped: gone
	BOOST_TEST(d.get(va) == ~0u);
	BOOST_TEST(d.cuMemAddressFree(va, 8 * MiB) == CUDA_SUCCESS);
}

BOOST_AUTO_TEST_CASE(a_handle_keeps_its_data_across_mappings_and_host_handles_cost_the_device_nothing)
{
	Driver d;
	std::size_t before = d.used();
	CUdeviceptr va{};
	BOOST_REQUIRE_EQUAL(d.cuMemAddressReserve(&va, 8 * MiB, 0, 0, 0), CUDA_SUCCESS);
	CUmemGenericAllocationHandle h = d.physical(2 * MiB);
	CUmemGenericAllocationHandle host = d.physical(2 * MiB, CU_MEM_LOCATION_TYPE_HOST);
	BOOST_TEST(d.used() == before + 2 * MiB);
	for (CUdeviceptr at : {va, va + 4 * MiB}) {	// the same handle at two addresses
		BOOST_REQUIRE_EQUAL(d.cuMemMap(at, 2 * MiB, 0, h, 0), CUDA_SUCCESS);
		BOOST_REQUIRE_EQUAL(d.access(at, 2 * MiB, CU_MEM_ACCESS_FLAGS_PROT_READWRITE), CUDA_SUCCESS);
	}
	BOOST_REQUIRE_EQUAL(d.put(va, 11, 2 * MiB), CUDA_SUCCESS);
	BOOST_TEST(d.get(va + 4 * MiB) == 11u);
	BOOST_REQUIRE_EQUAL(d.cuMemUnmap(va, 2 * MiB), CUDA_SUCCESS);
	BOOST_REQUIRE_EQUAL(d.cuMemMap(va + 2 * MiB, 2 * MiB, 0, host, 0), CUDA_SUCCESS);
	BOOST_TEST(d.cuMemUnmap(va + 2 * MiB, 6 * MiB) == CUDA_ERROR_INVALID_VALUE);	// runs past them
	BOOST_REQUIRE_EQUAL(d.cuMemUnmap(va + 2 * MiB, 4 * MiB), CUDA_SUCCESS);	// two whole mappings
	BOOST_REQUIRE_EQUAL(d.cuMemMap(va, 2 * MiB, 0, h, 0), CUDA_SUCCESS);
	BOOST_TEST(d.get(va) == ~0u);	// a new mapping has no access
	BOOST_REQUIRE_EQUAL(d.access(va, 2 * MiB, CU_MEM_ACCESS_FLAGS_PROT_READ), CUDA_SUCCESS);
	BOOST_TEST(d.get(va) == 11u);
	BOOST_REQUIRE_EQUAL(d.cuMemUnmap(va, 2 * MiB), CUDA_SUCCESS);
	for (auto handle : {h, host})
		BOOST_TEST(d.cuMemRelease(handle) == CUDA_SUCCESS);
	BOOST_TEST(d.cuMemRelease(h) == CUDA_ERROR_INVALID_VALUE);
	BOOST_TEST(d.used() == before);
	BOOST_TEST(d.cuMemAddressFree(va, 8 * MiB) == CUDA_SUCCESS);
}

BOOST_AUTO_TEST_CASE(capture_forbids_unsafe_calls_and_owns_its_allocations)
{
	Driver d;
	CUstream s = d.stream();
	CUgraph g{};
	CUdeviceptr p{}, q{}, plain{};
	CUstreamCaptureStatus st{};
	BOOST_TEST(d.cuStreamBeginCapture_v2(CU_STREAM_LEGACY, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_ERROR_INVALID_VALUE);
	BOOST_REQUIRE_EQUAL(d.cuMemAlloc_v2(&plain, MiB), CUDA_SUCCESS);

	// Stream-ordered allocation in capture: the graph's.
	BOOST_REQUIRE_EQUAL(d.cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	BOOST_TEST(d.cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_ERROR_INVALID_VALUE);
	BOOST_REQUIRE_EQUAL(d.cuMemAllocAsync(&p, MiB, s), CUDA_SUCCESS);
	BOOST_TEST(d.cuMemFreeAsync(plain, s) == CUDA_ERROR_INVALID_VALUE);	// no graph allocation
	CUevent e{};
	BOOST_REQUIRE_EQUAL(d.cuEventCreate(&e, 0), CUDA_SUCCESS);
	BOOST_REQUIRE_EQUAL(d.cuEventRecord(e, s), CUDA_SUCCESS);
	BOOST_TEST(d.cuEventQuery(e) == CUDA_ERROR_CAPTURED_EVENT);
	BOOST_REQUIRE_EQUAL(d.cuMemFreeAsync(p, s), CUDA_SUCCESS);
	CUresult other_thread = CUDA_SUCCESS;
	std::thread([&] { other_thread = d.cuStreamEndCapture(s, &g); }).join();
	BOOST_TEST(other_thread == CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
	BOOST_REQUIRE_EQUAL(d.cuStreamEndCapture(s, &g), CUDA_SUCCESS);
	BOOST_TEST(g != nullptr);
	d.cuGraphDestroy(g);

	// A synchronous allocation in this thread's global capture invalidates it.
	BOOST_REQUIRE_EQUAL(d.cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	BOOST_TEST(d.cuMemAlloc_v2(&q, MiB) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	BOOST_REQUIRE_EQUAL(d.cuStreamIsCapturing(s, &st), CUDA_SUCCESS);
	BOOST_TEST(st == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	BOOST_TEST(d.cuStreamEndCapture(s, &g) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	BOOST_TEST(g == nullptr);

	// Another thread's global capture forbids this thread's unsafe calls
	// unless it is in thread-local or relaxed mode.
	BOOST_REQUIRE_EQUAL(d.cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	CUresult global = CUDA_SUCCESS, relaxed = CUDA_ERROR_UNKNOWN;
	std::thread([&] {
		d.cuCtxSetCurrent(d.ctx);
		CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
		CUdeviceptr x{};
		d.cuThreadExchangeStreamCaptureMode(&mode);
		relaxed = d.cuMemAlloc_v2(&x, MiB);
		if (!relaxed)
			d.cuMemFree_v2(x);
		d.cuThreadExchangeStreamCaptureMode(&mode);
		global = d.cuMemAllocManaged(&x, MiB, CU_MEM_ATTACH_GLOBAL);
	}).join();
	BOOST_TEST(relaxed == CUDA_SUCCESS);
	BOOST_TEST(global == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	BOOST_TEST(d.cuStreamEndCapture(s, &g) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

	// A relaxed capture forbids nothing; synchronizing its stream is still wrong.
	BOOST_REQUIRE_EQUAL(d.cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
	BOOST_REQUIRE_EQUAL(d.cuMemAlloc_v2(&q, MiB), CUDA_SUCCESS);
	BOOST_TEST(d.cuStreamSynchronize(s) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	BOOST_TEST(d.cuStreamEndCapture(s, &g) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	for (CUdeviceptr x : {q, plain})
		BOOST_TEST(d.cuMemFree_v2(x) == CUDA_SUCCESS);
	d.cuEventDestroy_v2(e);
	d.cuStreamDestroy_v2(s);
}

BOOST_AUTO_TEST_CASE(a_discard_moves_managed_memory_without_its_contents_unless_refused)
{
	Driver d;
	CUstream s = d.stream();
	CUdeviceptr m = 0, plain = 0;
	BOOST_REQUIRE_EQUAL(d.cuMemAllocManaged(&m, 4 * MiB, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
	BOOST_REQUIRE_EQUAL(d.put(m, 0x1234, 4 * MiB), CUDA_SUCCESS);
	CUmemLocation gpu{CU_MEM_LOCATION_TYPE_DEVICE, 0}, host{CU_MEM_LOCATION_TYPE_HOST, 0};
	BOOST_REQUIRE_EQUAL(d.cuMemPrefetchAsync_v2(m, 4 * MiB, gpu, 0, s), CUDA_SUCCESS);
	CUdeviceptr ranges[] = {m + 2 * MiB};
	size_t sizes[] = {2 * MiB}, index = 0;
	BOOST_TEST(d.cuMemDiscardAndPrefetchBatchAsync(ranges, sizes, 1, &host, &index, 1, 0, s) == CUDA_SUCCESS);
	unsigned long long on_device = 0, on_host = 0;
	d.residency(m, 4 * MiB, &on_device, &on_host);
	BOOST_TEST(on_device == 2 * MiB);
	BOOST_TEST(on_host == 2 * MiB);
	BOOST_TEST(d.get(m) == 0x1234u);		// the rest kept its data
	BOOST_TEST(d.get(m + 2 * MiB) != 0x1234u);	// the discarded range did not
	// Documented: flags must be 0, the legacy stream is refused, and only
	// managed memory is discarded.
	BOOST_TEST(d.cuMemDiscardAndPrefetchBatchAsync(ranges, sizes, 1, &host, &index, 1, 1, s) ==
		   CUDA_ERROR_INVALID_VALUE);
	BOOST_TEST(d.cuMemDiscardAndPrefetchBatchAsync(ranges, sizes, 1, &host, &index, 1, 0, CU_STREAM_LEGACY) ==
		   CUDA_ERROR_INVALID_VALUE);
	BOOST_REQUIRE_EQUAL(d.cuMemAlloc_v2(&plain, 2 * MiB), CUDA_SUCCESS);
	CUdeviceptr device_range[] = {plain};
	BOOST_TEST(d.cuMemDiscardAndPrefetchBatchAsync(device_range, sizes, 1, &host, &index, 1, 0, s) ==
		   CUDA_ERROR_INVALID_VALUE);
	// A driver that refuses it leaves everything where it was.
	setenv("FAKECUDA_NO_DISCARD", "1", 1);
	ranges[0] = m;
	BOOST_TEST(d.cuMemDiscardAndPrefetchBatchAsync(ranges, sizes, 1, &host, &index, 1, 0, s) ==
		   CUDA_ERROR_NOT_SUPPORTED);
	unsetenv("FAKECUDA_NO_DISCARD");
	BOOST_TEST(d.get(m) == 0x1234u);
	d.residency(m, 4 * MiB, &on_device, &on_host);
	BOOST_TEST(on_device == 2 * MiB);
	d.cuMemFree_v2(plain);
	d.cuMemFree_v2(m);
	d.cuStreamDestroy_v2(s);
}
