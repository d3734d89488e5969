// The Slurm release series the plugin was built for, and what it does when
// a Slurm of another series loads it. The plugin does not link libslurm: it
// calls the slurm_* and spank_* functions of the process that loads it, as
// the headers of its own series declared them. In another series every
// hook returns at once, having called nothing of libslurm but what these
// functions call (logging, spank_context and spank_option_register, whose
// declarations spank.h has kept unchanged from 22.05 to 26.05).
#pragma once

extern "C" {
#include <slurm/spank.h>
}

namespace gos::spank {

// True when the loading Slurm's release series (major.minor) is not the
// one the plugin was built for. Known once the plugin is loaded.
bool other_series();

// slurm_spank_init in another series: says so in slurmd's log (slurmd and
// slurmstepd), or, on a submit host, keeps `option` known so that a job
// that asks for it is refused with the reason. Returns 0: the node is not
// drained, and jobs run as if the plugin were absent.
int other_series_init(spank_t sp, const spank_option &option);

// slurm_spank_init_post_opt in another series: on a submit host, warns a
// user whose SLURM_GPU_MEM_OVERSUB asks for gpuoversub. Returns 0.
int other_series_post_opt();

} // namespace gos::spank
