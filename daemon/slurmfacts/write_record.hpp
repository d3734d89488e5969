// gpuoversub-slurm-facts --write-record JOB START (write_record.cpp).
#pragma once

#include <string>

#include "common/compat/slurm.hpp"

namespace gos::slurmfacts {

// Reads the record on stdin and writes it into the accounting record of
// job's run that started at START; its exit status. init readies libslurm
// (slurm_init) once the arguments and the record are checked, or says why
// it cannot; READ, when given, is called once the record is read.
int write_record(const char *job, const char *start, std::string (*init)(), void (*read)() = nullptr);

} // namespace gos::slurmfacts
