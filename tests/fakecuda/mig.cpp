#include "mig.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fakecuda {
namespace {

MigInstance instances[max_slots];
int ninstances;
int nphysical;
int visible_slot = -1;	// the MIG device CUDA_VISIBLE_DEVICES names; -2: one it names is unknown

[[noreturn]] void bad(const char *value, const char *why)
{
	std::fprintf(stderr, "fakecuda: FAKECUDA_MIG='%s': %s (DEV:SIZE[,SIZE|-...][;DEV:...])\n", value, why);
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
		if (mig_enabled(static_cast<int>(parent)))
			bad(value, "a device is named twice");
		p = end + 1;
		for (int index = 0;; index++) {
			if (index == max_mig_per_gpu)
				bad(value, "more instances than a GPU has");
			if (*p == '-') {
				p++;
			} else {
				std::uint64_t bytes = size_of(p, &end);
				if (end == p || !bytes)
					bad(value, "a SIZE is not a number of bytes (K, M or G)");
				if (nphysical + ninstances == max_slots)
					bad(value, "more devices and instances than the fake holds");
				instances[ninstances] = {static_cast<int>(parent), index, static_cast<unsigned>(index + 7),
							 bytes, nphysical + ninstances};
				ninstances++;
				p = end;
			}
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
		if (std::strlen(id) == n && std::strncmp(id, mig, n) == 0)
			visible_slot = instances[i].slot;
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

int slot_count() { return nphysical + ninstances; }

int physical_count() { return nphysical; }

const MigInstance *mig_at(int parent, int index)
{
	for (int i = 0; i < ninstances; i++)
		if (instances[i].parent == parent && instances[i].index == index)
			return &instances[i];
	return nullptr;
}

const MigInstance *mig_in_slot(int slot)
{
	int i = slot - nphysical;
	return i >= 0 && i < ninstances ? &instances[i] : nullptr;
}

bool mig_enabled(int parent)
{
	for (int i = 0; i < ninstances; i++)
		if (instances[i].parent == parent)
			return true;
	return false;
}

void gpu_uuid(int parent, char *out, std::size_t len)
{
	std::snprintf(out, len, "GPU-fa4ec0de-0000-4000-8000-0000000000%02x", parent);
}

void mig_uuid(const MigInstance &m, char *out, std::size_t len)
{
	std::snprintf(out, len, "MIG-fa4ec0de-00%02x-4000-8000-0000000000%02x", m.parent, m.gpu_instance);
}

int cuda_slot(int ordinal) { return visible_slot >= 0 ? visible_slot : ordinal; }

int cuda_count() { return visible_slot == -1 ? nphysical : visible_slot >= 0 ? 1 : 0; }

} // namespace fakecuda
