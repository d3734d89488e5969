// The libslurm API as gpuoversub uses it, whichever Slurm Debian ships:
// 22.05 (Debian 12), 24.11 (13), 26.05 (testing). The differences live
// here alone, chosen by slurm_version.h; callers include this, never
// <slurm/slurm.h> itself (spank.h is the plugin's and has not changed).
//
//   24.11 (since 23.11): List and ListIterator are list_t * and
//     list_itr_t *; hostlist_t is the struct, handled by pointer;
//     slurm_get_errno and slurm_seterrno are gone (libslurm sets errno,
//     as 22.05's slurm_get_errno already returned it); every program must
//     call slurm_init first (the plugin inside slurmd/slurmstepd need not).
//   26.05: slurm_load_job takes a slurm_step_id_t (its uint32 wrappers
//     are C11 _Generic macros C++ cannot use), job_desc_msg_t carries
//     step_id in place of job_id, and slurm_free_ctl_conf is
//     slurm_free_conf.
#pragma once

#include <cerrno>
#include <cstdint>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

namespace gos::slurm {

// libslurm's list and iterator handles, as its own functions return them.
using List = decltype(slurm_list_create(nullptr));
using ListIterator = decltype(slurm_list_iterator_create(nullptr));

// The error of the libslurm call that just failed.
inline int last_errno()
{
	return errno;
}

// One job's record (every part of a heterogeneous job), as slurm_load_job.
inline int load_job(job_info_msg_t **msg, std::uint32_t job, std::uint16_t show_flags)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
	slurm_step_id_t id{};
	id.job_id = job;
	id.step_het_comp = NO_VAL;
	id.step_id = NO_VAL;
	return slurm_load_job(msg, id, show_flags);
#else
	return slurm_load_job(msg, job, show_flags);
#endif
}

// Names the job an update (slurm_update_job) is for.
inline void set_job_id(job_desc_msg_t &desc, std::uint32_t job)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
	desc.step_id.job_id = job;
#else
	desc.job_id = job;
#endif
}

inline void free_conf(slurm_conf_t *conf)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
	slurm_free_conf(conf);
#else
	slurm_free_ctl_conf(conf);
#endif
}

} // namespace gos::slurm
