// The plugin's identity for Slurm's loader, the release series it was built
// for, and its refusal to work under another series (series.hpp).
//
// Slurm's loader (plugin.c, _verify_syms) refuses a SPANK plugin whose
// plugin_version has another major.minor than its own. From plugstack.conf,
// a "required" plugin it refuses stops slurmd from starting, fails every
// job launch (slurmstepd; the node drains) and every sbatch, salloc and
// srun; an "optional" one is dropped, with Slurm's "Incompatible Slurm
// plugin" line (at info level only in 26.05). So when the loading Slurm is
// of another series, the plugin claims that series in plugin_version,
// before the loader reads it, and then turns itself off with a line that
// says what to install.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#pragma GCC visibility push(default)
extern "C" {
#include <slurm/slurm_version.h>
#include <slurm/spank.h>
// SPANK_PLUGIN(gpuoversub, 1), but plugin_version is written at load time;
// declared first, as C++ gives const globals internal linkage.
extern const char plugin_name[], plugin_type[];
extern unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
const char plugin_name[] = "gpuoversub";
const char plugin_type[] = "spank";
// The test of the refusal builds the plugin with another series here.
#ifndef GOS_SLURM_BUILT
#define GOS_SLURM_BUILT SLURM_VERSION_NUMBER
#endif
unsigned int plugin_version = GOS_SLURM_BUILT;
const unsigned int spank_plugin_version = 1;
}
#pragma GCC visibility pop

#include "spank/series.hpp"

namespace {

// SLURM_VERSION_NUMBER is major << 16 | minor << 8 | micro.
constexpr unsigned long series_of(unsigned long v)
{
	return v >> 8 & 0xffff;
}

// "spank_gpuoversub: built for Slurm 22.05", whole in the file, so that
// strings(1) tells an admin which package this is.
struct Text {
	char s[48]{};
};

constexpr Text built_text(unsigned long v)
{
	Text t;
	std::size_t n = 0;
	for (char c : std::string_view("spank_gpuoversub: built for Slurm "))
		t.s[n++] = c;
	unsigned major = v >> 16 & 0xff, minor = v >> 8 & 0xff;
	if (major >= 100)
		t.s[n++] = static_cast<char>('0' + major / 100);
	if (major >= 10)
		t.s[n++] = static_cast<char>('0' + major / 10 % 10);
	t.s[n++] = static_cast<char>('0' + major % 10);
	t.s[n++] = '.';
	t.s[n++] = static_cast<char>('0' + minor / 10 % 10);
	t.s[n++] = static_cast<char>('0' + minor % 10);
	return t;
}

[[gnu::used]] const Text built_for = built_text(GOS_SLURM_BUILT);

// The release (as SLURM_VERSION_NUMBER, micro 0) whose libslurm has API
// number `api`: slurm_api_version() >> 16, META's API_CURRENT, one per
// release since 17.02 (31), and from 23.11 (40) a release every May and
// November. 0: unknown.
constexpr unsigned long release_of_api(unsigned long api)
{
	constexpr unsigned long before_23_11[] = {0x110200, 0x110b00, 0x120800, 0x130500, 0x140200,
						  0x140b00, 0x150800, 0x160500, 0x170200};
	if (api < 31)
		return 0;
	if (api < 40)
		return before_23_11[api - 31];
	unsigned long n = api - 40;
	return (23 + (n + 1) / 2) << 16 | (n % 2 ? 5 : 11) << 8;
}
static_assert(release_of_api(38) == SLURM_VERSION_NUM(22, 5, 0) && release_of_api(42) == SLURM_VERSION_NUM(24, 11, 0) &&
	      release_of_api(45) == SLURM_VERSION_NUM(26, 5, 0));

unsigned long loaded = 0;	// the loading Slurm's release, as release_of_api; 0: unknown
bool other = false;

// Runs as dlopen returns, before the loader reads plugin_version. libslurm
// has no call that returns its release; slurm_api_version (long (void) in
// every series) returns its API number. A process without it (no Slurm),
// or an API number of no known release, leaves the plugin as it was built.
__attribute__((constructor)) void compare_series()
{
	auto api = reinterpret_cast<long (*)()>(dlsym(RTLD_DEFAULT, "slurm_api_version"));
	if (!api)
		return;
	loaded = release_of_api(static_cast<unsigned long>(api()) >> 16);
	if (!loaded || series_of(loaded) == series_of(GOS_SLURM_BUILT))
		return;
	other = true;
	plugin_version = static_cast<unsigned int>(loaded);
}

// "spank_gpuoversub: built for Slurm 22.05, loaded by Slurm 24.11: install
// ...": what every line about it starts with.
std::string why()
{
	char series[16];
	std::snprintf(series, sizeof series, "%lu.%02lu", loaded >> 16 & 0xff, loaded >> 8 & 0xff);
	return std::string(built_for.s) + ", loaded by Slurm " + series +
	       ": install the slurm-spank-gpuoversub package built for Slurm " + series +
	       " (or rebuild gpuoversub against this Slurm's headers)";
}

spank_option refusing_option;

int refuse_option(int, const char *, int)
{
	slurm_error("%s; until then --gpu-mem-oversub is refused: submit without it to run the job without gpuoversub",
		    why().c_str());
	return -1;
}

} // namespace

namespace gos::spank {

bool other_series()
{
	return other;
}

int other_series_init(spank_t sp, const spank_option &option)
{
	switch (spank_context()) {
	case S_CTX_SLURMD:
		slurm_error("%s; gpuoversub is off on this node: its jobs run without it", why().c_str());
		break;
	case S_CTX_REMOTE:
		slurm_error("%s; gpuoversub is off for this job, which runs without it", why().c_str());
		break;
	case S_CTX_ALLOCATOR:
	case S_CTX_LOCAL:
		// Known, so that asking for it is refused with the reason, not
		// by sbatch's "unrecognized option"; a job without it is let be.
		refusing_option = option;
		refusing_option.cb = refuse_option;
		if (spank_option_register(sp, &refusing_option) != ESPANK_SUCCESS)
			slurm_error("%s", why().c_str());
		break;
	default:
		break;
	}
	return 0;
}

int other_series_post_opt()
{
	const char *env = std::getenv("SLURM_GPU_MEM_OVERSUB");
	if ((spank_context() == S_CTX_ALLOCATOR || spank_context() == S_CTX_LOCAL) && env && *env)
		slurm_spank_log("%s; SLURM_GPU_MEM_OVERSUB is not checked here, and a node with the same mismatch "
				"runs the job without gpuoversub",
				why().c_str());
	return 0;
}

} // namespace gos::spank
