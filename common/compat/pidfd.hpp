// pidfd_open and pidfd_send_signal, whichever glibc Debian ships: glibc
// 2.36 (Debian 12) declares them in <sys/pidfd.h> without extern "C", so a
// C++ caller links against mangled names that do not exist (fixed in
// 2.37). The system calls themselves exist since Linux 5.3.
#pragma once

#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

namespace gos::compat {

inline int pidfd_open(pid_t pid)
{
	return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

inline int pidfd_send_signal(int pidfd, int sig)
{
	return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}

} // namespace gos::compat
