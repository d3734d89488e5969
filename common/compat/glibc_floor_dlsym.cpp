// dlsym under the glibc floor (glibc_floor.cpp), for the MPI hooks only:
// the agent defines dlsym itself (mpi-hooks/agent/dlsym_hook.cpp).
#include <cstdint>	// defines __GLIBC__ where it is glibc
#if defined(__x86_64__) && defined(__GLIBC__)
#include "common/compat/glibc_floor.hpp"

GOS_FLOOR_JUMP(dlsym, "dlsym@GLIBC_2.2.5");
#endif
