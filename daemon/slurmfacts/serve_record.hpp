// gpuoversub-slurm-facts --serve-record USER (serve_record.cpp).
#pragma once

#include <string>

namespace gos::slurmfacts {

// The record helper's side of one connection of gpuoversub-record.socket
// (systemd's Accept=yes: the connection is stdin and stdout); its exit
// status, as write_record's.
int serve_record(const char *user, std::string (*init)());

} // namespace gos::slurmfacts
