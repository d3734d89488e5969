#include "mig.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fakecuda {
namespace {

MigDevice instances[max_slots];	// MIG devices (compute instances)
int ninstances;
int nphysical;
int ngpu_instances;
bool mig_on[max_slots];
int visible_slot = -1;	// the MIG device CUDA_VISIBLE_DEVICES names; -2: one it names is unknown
int visible_ci = -1;

[[noreturn]] void bad(const char *value, const char *why)
{
	std::fprintf(stderr, "fakecuda: FAKECUDA_MIG='%s': %s (DEV:GI[,GI...][;DEV:...], a GI SIZE, SIZE/N or -)\n", value, why);
	std::exit(2);
}

std::uint64_t size_of(const char *s, char **end)
{
	std::uint64_t n = std::strtoull(s, end, 10);
	switch (**end) {
	case 'K': case 'k': n <<= 10; ++*end; break;
	case 'M': case 'm': n <<= 20; ++*end; break;
	case 'G': case 'g': n <<= 30; ++*end; break;
	default: break;
	}
	return n;
}

void parse(const char *value)
{
	const char *p = value;
	while (*p) {
		char *end;
		long parent = std::strtol(p, &end, 10);
		if (end == p || *end != ':' || parent < 0 || parent >= nphysical)
			bad(value, "DEV is not one of the fake's devices");
		if (mig_on[parent])
			bad(value, "a device is named twice");
		mig_on[parent] = true;
		p = end + 1;
		for (int index = 0;;) {
			if (*p == '-') {
				p++;
				index++;
			} else {
				std::uint64_t bytes = size_of(p, &end);
				if (end == p || !bytes)
					bad(value, "a SIZE is not a number of bytes (K, M or G)");
				p = end;
				long cis = 1;
				if (*p == '/') {
					cis = std::strtol(p + 1, &end, 10);
					if (end == p + 1 || cis < 1)
						bad(value, "N compute instances must be 1 or more");
					p = end;
				}
				if (nphysical + ngpu_instances == max_slots)
					bad(value, "more devices and instances than the fake holds");
				int slot = nphysical + ngpu_instances++;
				auto gi = static_cast<unsigned>(index + 7);	// the driver's, not the index
				for (long ci = 0; ci < cis; ci++, index++) {
					if (index >= max_mig_per_gpu)
						bad(value, "more MIG devices than a GPU has");
					instances[ninstances++] = {static_cast<int>(parent), index, gi,
								   static_cast<unsigned>(ci), bytes, slot};
				}
			}
			if (index > max_mig_per_gpu)
				bad(value, "more MIG devices than a GPU has");
			if (*p != ',')
				break;
			p++;
		}
		if (*p == ';')
			p++;
		else if (*p)
			bad(value, "unexpected text");
	}
}

// CUDA_VISIBLE_DEVICES' first MIG entry, if it has one.
void find_visible()
{
	const char *list = std::getenv("CUDA_VISIBLE_DEVICES");
	const char *mig = list ? std::strstr(list, "MIG-") : nullptr;
	if (!mig)
		return;
	std::size_t n = std::strcspn(mig, ",");
	visible_slot = -2;
	for (int i = 0; i < ninstances; i++) {
		char id[64];
		mig_uuid(instances[i], id, sizeof id);
		if (std::strlen(id) == n && std::strncmp(id, mig, n) == 0) {
			visible_slot = instances[i].slot;	// its GPU instance's memory
			visible_ci = static_cast<int>(instances[i].compute_instance);
		}
	}
}

} // namespace

void mig_init(int devices)
{
	nphysical = devices;
	if (const char *v = std::getenv("FAKECUDA_MIG"); v && *v)
		parse(v);
	find_visible();
}

int slot_count() { return nphysical + ngpu_instances; }

int physical_count() { return nphysical; }

const MigDevice *mig_at(int parent, int index)
{
	for (int i = 0; i < ninstances; i++)
		if (instances[i].parent == parent && instances[i].index == index)
			return &instances[i];
	return nullptr;
}

const MigDevice *mig_in_slot(int slot)
{
	for (int i = 0; i < ninstances; i++)
		if (instances[i].slot == slot)
			return &instances[i];
	return nullptr;
}

bool mig_enabled(int parent) { return parent >= 0 && parent < max_slots && mig_on[parent]; }

void gpu_uuid(int parent, char *out, std::size_t len)
{
	std::snprintf(out, len, "GPU-fa4ec0de-0000-4000-8000-0000000000%02x", parent);
}

void mig_uuid(const MigDevice &m, char *out, std::size_t len)
{
	std::snprintf(out, len, "MIG-fa4ec0de-00%02x-4%03x-8000-0000000000%02x", m.parent, m.compute_instance & 0xfff,
		      m.gpu_instance & 0xff);
}

int cuda_slot(int ordinal) { return visible_slot >= 0 ? visible_slot : ordinal; }

int visible_compute_instance() { return visible_ci; }

int cuda_count() { return visible_slot == -1 ? nphysical : visible_slot >= 0 ? 1 : 0; }

} // namespace fakecuda
