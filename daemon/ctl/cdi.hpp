// `gpuoversubctl cdi`: the node's CDI spec (Container Device Interface),
// through which OCI runtimes (podman, containerd, Docker, CRI-O) and
// Apptainer 1.5 and later bind the agent, the MPI hooks and the daemon's
// socket into a container and set its LD_PRELOAD and GPUOVERSUB_SOCKET.
// See gpuoversubctl(1) and docs/containers.md.
#pragma once

namespace gos::ctl {

// argv[0] is "cdi". Returns the exit status: 0, 1 (a file cannot be read
// or written) or 2 (a bad option), each failure said on stderr.
int cdi_main(int argc, char **argv);

} // namespace gos::ctl
