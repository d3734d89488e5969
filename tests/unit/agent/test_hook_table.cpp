// The hook table (mpi-hooks/agent/hooks.def) against the CUDA headers the
// build uses: every hooked symbol must exist in cuda.h with the signature
// its hook has. A mismatch fails the compilation of this file, which
// `make check` builds; the cases check what the compiler cannot.
#define BOOST_TEST_MODULE hook_table
#include <boost/test/unit_test.hpp>

#define __CUDA_API_VERSION_INTERNAL	// every variant declared as itself
#include <cuda.h>

#include <cstring>
#include <set>
#include <string>
#include <type_traits>

#define GOS_HOOK(api, symbol, since, until, stream, params) \
	static_assert(std::is_same_v<decltype(&::symbol), CUresult(*) params>, \
		      #symbol " in hooks.def does not have cuda.h's signature");
#include "mpi-hooks/agent/hooks.def"
#undef GOS_HOOK

namespace {

struct Row {
	const char *api, *symbol;
	int since, until;
	const char *stream;
};

const Row rows[] = {
#define GOS_HOOK(api, symbol, since, until, stream, params) {#api, #symbol, since, until, #stream},
#include "mpi-hooks/agent/hooks.def"
#undef GOS_HOOK
};

} // namespace

BOOST_AUTO_TEST_CASE(every_symbol_is_a_variant_of_its_api_name)
{
	for (const Row &r : rows) {
		BOOST_TEST_CONTEXT(r.symbol)
		{
			BOOST_TEST(std::strncmp(r.api, r.symbol, std::strlen(r.api)) == 0);
			BOOST_TEST(r.since < r.until);
			BOOST_TEST(r.since <= CUDA_VERSION);
			std::string stream = r.stream;
			BOOST_TEST((stream == "any" || stream == "legacy" || stream == "per_thread"));
			BOOST_TEST((stream == "per_thread") == (std::strstr(r.symbol, "_ptsz") != nullptr));
		}
	}
}

BOOST_AUTO_TEST_CASE(no_api_name_resolves_to_two_hooks)
{
	// For one (name, version, stream flavour) exactly one row may answer,
	// or cuGetProcAddress would depend on the table's order.
	for (const Row &a : rows)
		for (const Row &b : rows) {
			if (&a == &b || std::strcmp(a.api, b.api))
				continue;
			bool overlap = a.since < b.until && b.since < a.until;
			bool same_stream = !std::strcmp(a.stream, b.stream) || !std::strcmp(a.stream, "any") ||
					   !std::strcmp(b.stream, "any");
			BOOST_TEST_CONTEXT(a.symbol << " and " << b.symbol) BOOST_TEST(!(overlap && same_stream));
		}
}

BOOST_AUTO_TEST_CASE(the_allocation_family_of_the_issue_is_all_there)
{
	std::set<std::string> have;
	for (const Row &r : rows)
		have.insert(r.symbol);
	for (const char *want : {"cuMemAlloc_v2", "cuMemAllocPitch_v2", "cuMemFree_v2", "cuMemAllocManaged",
				 "cuMemAllocAsync", "cuMemAllocFromPoolAsync", "cuMemFreeAsync", "cuMemCreate",
				 "cuMemMap", "cuMemUnmap", "cuMemRelease", "cuMemGetInfo_v2", "cuGetProcAddress",
				 "cuGetProcAddress_v2"})
		BOOST_TEST(have.count(want) == 1u, want);
}
