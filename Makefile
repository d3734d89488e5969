# gpuoversub's build: the settings and flags every component shares, then
# one fragment per component (its sources, products, install and tests).
# `make`, `make check`, `make install DESTDIR=...`: see README.md.
MAKEFLAGS += --no-builtin-rules
.DEFAULT_GOAL := all
# Parallel by default, one job per core; a -j on the command line wins, and
# sub-makes share the top one's jobs.
ifeq ($(MAKELEVEL),0)
  MAKEFLAGS += -j$(shell nproc)
endif

BUILD ?= build
SAN_BUILD ?= build-san
PREFIX ?= /usr/local
VERSION := 0.1
# cuda.h is only ever included (the driver is opened at run time).
CUDA_INC ?= /usr/local/cuda/include

# Our flags come first; the caller's CPPFLAGS, CFLAGS, CXXFLAGS and LDFLAGS
# (dpkg-buildflags, say) follow and so win. The kernel module and the
# libFuzzer targets, built by other compilers' rules, take none of them.
WARN := -Wall -Wextra -Werror
# -g1: line tables and functions, enough for backtraces and sanitizer
# reports, at three quarters of -g's compile time (measured on
# daemon/gpud and the daemon tests with g++ 12); `make CXXFLAGS=-g` for
# a debugger's locals. Debian's and the RPM's flags come last and keep -g.
OPT := -O2 -g1
ifeq ($(SANITIZE),1)
  OPT := -O1 -g1 -fno-omit-frame-pointer
  SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
endif
# Hardened everywhere; a caller that sets its own fortify level keeps it.
FORTIFY := $(if $(findstring _FORTIFY_SOURCE,$(CPPFLAGS)),,-D_FORTIFY_SOURCE=2)
GOS_CPPFLAGS = -MMD -MP -I. -Iinclude -Ikmod/engine -isystem $(CUDA_INC) $(FORTIFY)
GOS_CFLAGS = -std=gnu11 $(OPT) $(WARN) $(SAN) -Wshadow -fPIC -fstack-protector-strong
# C++ exports nothing unless it says so: the shared objects decide by
# attribute and version script what leaves them.
GOS_CXXFLAGS = -std=c++20 $(OPT) $(WARN) $(SAN) -Wshadow -fPIC -fvisibility=hidden -fstack-protector-strong
GOS_LDFLAGS = $(SAN)
# Shared objects loaded into other programs: full RELRO; outside sanitizer
# builds, no undefined symbols and a C++ runtime of their own.
SO_LDFLAGS := -shared -Wl,-z,relro,-z,now
ifneq ($(SANITIZE),1)
  SO_OWN_RUNTIME := -Wl,-z,defs -static-libstdc++ -static-libgcc
  # What is preloaded into tasks, in containers too, needs glibc 2.28 at
  # most: common/compat/glibc_floor.cpp, with the libraries that held the
  # old versions before 2.34. (Not under the sanitizers, whose runtime
  # interposes the same calls.)
  GLIBC_FLOOR_OBJ := $(BUILD)/common/compat/glibc_floor.o
  GLIBC_FLOOR_LIBS := -Wl,--push-state,--no-as-needed -l:libpthread.so.0 -l:libdl.so.2 -Wl,--pop-state
endif
# Flags a file must keep whatever the caller passes (see dlsym_hook.o).
PINNED_CXXFLAGS :=

C_COMPILE = $(CC) $(GOS_CPPFLAGS) $(CPPFLAGS) $(GOS_CFLAGS) $(CFLAGS)
CXX_COMPILE = $(CXX) $(GOS_CPPFLAGS) $(CPPFLAGS) $(GOS_CXXFLAGS) $(CXXFLAGS) $(PINNED_CXXFLAGS)
C_LINK = $(CC) $(GOS_LDFLAGS) $(LDFLAGS)
CXX_LINK = $(CXX) $(GOS_LDFLAGS) $(LDFLAGS)
SYSLIBS := -lyaml -lhwloc -ldl -lpthread

# Code that must run without the sanitizer runtime (slurmstepd loads the
# SPANK plugin; the agent's dlsym runs before ASan is up) is never
# sanitized: in a sanitizer build it has a tree of its own.
ifeq ($(SANITIZE),1)
  UNSAN := $(BUILD)/unsan
  $(UNSAN)/%.o: SAN :=
  $(UNSAN)/%.o: OPT := -O2 -g1
  $(UNSAN)/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX_COMPILE) -c $< -o $@
else
  UNSAN := $(BUILD)
endif

$(BUILD)/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX_COMPILE) -c $< -o $@

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(C_COMPILE) -c $< -o $@

# The dependency step: `make demo` and `make check` first install the Debian
# packages they need and the machine lacks (packaging/deps.sh), before the
# fragments below look for them. GOS_NO_INSTALL=1 turns it off; sub-makes
# and `make -n` skip it.
DEPS_USES := $(sort $(filter demo check,$(MAKECMDGOALS:check-sanitize=check)))
ifneq ($(DEPS_USES),)
  ifeq ($(GOS_DEPS_DONE)$(findstring n,$(filter-out -%,$(firstword $(MAKEFLAGS)))),)
    ifneq ($(shell CUDA_INC=$(CUDA_INC) GOS_DEPS_FOR="make $(MAKECMDGOALS)" packaging/deps.sh $(DEPS_USES) >&2 || echo failed),)
      $(error the dependency step failed (see above))
    endif
    export GOS_DEPS_DONE := 1
  endif
endif

# Optional features (MPI, fuzzing, the module's QEMU tests): a fragment
# that finds what one needs missing calls `skip` with the reason. `make`
# builds the rest and says what it skipped; `make check` refuses to run
# without a feature's tests unless GOS_ALLOW_SKIP names it (or is `all`).
SKIPPED :=
comma := ,
space := $(subst ,, )
# $(call skip,FEATURE,WHAT IS SKIPPED,WHY)
skip = $(eval SKIPPED += $(1))$(eval SKIP_NOTE.$(1) := $(2) skipped: $(3))
# A feature this release cannot have, whatever is installed (nvcc and
# Debian testing's gcc and glibc): `make` says so, and `make check` runs
# its tests, which skip and name the reason in the test output.
# $(call lacks,FEATURE,WHAT IS SKIPPED,WHY)
LACKS :=
lacks = $(eval LACKS += $(1))$(eval SKIP_NOTE.$(1) := $(2) skipped on this release: $(3))
allowed_skips = $(subst $(comma), ,$(GOS_ALLOW_SKIP))

# Each fragment adds to these: its static libraries and C++ programs (each
# names its prerequisites; the recipes are below), what `make` builds,
# `make install` runs, `make check` needs built, and the tests it runs,
# unit ones first.
ARCHIVES :=
PROGRAMS :=
ALL :=
INSTALL_STEPS :=
CHECK_DEPS :=
UNIT_TESTS :=
INTEGRATION_TESTS :=

include kmod/engine/engine.mk
include common/common.mk
include sim/sim.mk
include daemon/daemon.mk
include mpi-hooks/agent/agent.mk
include spank/spank.mk
include tests/fakecuda/fakecuda.mk
include tests/tools/tools.mk
include mpi-hooks/mpi/mpi.mk
include kmod/kmod.mk
include examples/examples.mk
include bench/bench.mk
include tests/fuzz/fuzz.mk
include tests/integration/gpu/bundle/bundle.mk
include man/man.mk
# Last: its check rule's prerequisites are the CHECK_DEPS every fragment
# above adds to (fuzz.mk's fuzz targets were left out when it came after).
include tests/tests.mk

$(ARCHIVES):
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(PROGRAMS):
	@mkdir -p $(@D)
	$(CXX_LINK) $^ -o $@ $(SYSLIBS)

.PHONY: all install clean features
all: $(ALL) features

features:
	@$(foreach f,$(SKIPPED) $(LACKS),echo "gpuoversub: $(SKIP_NOTE.$(f))";)

install: $(INSTALL_STEPS) features

clean:
	rm -rf $(BUILD) $(SAN_BUILD)

# (Not in the container tests' image, a Debian root with /etc/*.d.)
-include $(shell find $(BUILD) -path $(BUILD)/images -prune -o -name '*.d' -type f -print 2>/dev/null)
