# gpuoversub: the top-level build. `make`, `make check`, `make bench`,
# `make check-sanitize`, `make install DESTDIR=...`. See README.md.

BUILD ?= build
PREFIX ?= /usr/local
VERSION := 0.1
CC ?= gcc
CXX ?= g++

WARN := -Wall -Wextra -Werror
OPT := -O2 -g
ifeq ($(SANITIZE),1)
  OPT := -O1 -g -fno-omit-frame-pointer
  SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
endif

# cuda.h is only ever included (the driver is opened at run time).
CUDA_INC ?= /usr/local/cuda/include
CPPFLAGS += -MMD -MP -Iinclude -Ikmod/engine -isystem $(CUDA_INC)
CFLAGS_ENGINE := -std=gnu11 $(OPT) $(WARN) $(SAN) -fPIC -Wmissing-prototypes \
	-Wstrict-prototypes -Wshadow
CXXFLAGS_ALL := -std=c++20 $(OPT) $(WARN) $(SAN) -Wshadow -I.
LDFLAGS_ALL := $(SAN)
BOOST_TEST := -DBOOST_TEST_DYN_LINK
BOOST_TEST_LIB := -lboost_unit_test_framework

# The engine: portable C shared with the kernel module, plus the userspace OS layer.
ENGINE_SRC := $(wildcard kmod/engine/*.c) kmod/engine/user/os_user.c
ENGINE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/%.o)
ENGINE_LIB := $(BUILD)/lib/libgpuoversub-engine.a

# Userspace C++, one archive per component so each program links only what
# it uses: common/ (shared with the agent and the plugin), the daemon, the
# simulator.
COMMON_SRC := $(wildcard common/*/*.cpp)
COMMON_OBJ := $(COMMON_SRC:%.cpp=$(BUILD)/%.o)
COMMON_LIB := $(BUILD)/lib/libgpuoversub-common.a
DAEMON_SRC := $(filter-out %/main.cpp,$(wildcard daemon/*/*.cpp))
DAEMON_OBJ := $(DAEMON_SRC:%.cpp=$(BUILD)/%.o)
DAEMON_LIB := $(BUILD)/lib/libgpuoversub-daemon.a
SIM_SRC := $(filter-out %/main.cpp,$(wildcard sim/*.cpp))
SIM_OBJ := $(SIM_SRC:%.cpp=$(BUILD)/%.o)
SIM_LIB := $(BUILD)/lib/libgpuoversub-sim.a
LIBS := $(DAEMON_LIB) $(SIM_LIB) $(COMMON_LIB) $(ENGINE_LIB)
# The SPANK plugin's logic that needs no Slurm, for its unit tests.
SPANK_LOGIC_OBJ := $(patsubst %.cpp,$(BUILD)/%.o,spank/request.cpp spank/plugstack_args.cpp spank/step_env.cpp)
SYSLIBS := -lyaml -lhwloc -ldl -lpthread

SIM_BIN := $(BUILD)/bin/gpuoversub-sim
GPUD_BIN := $(BUILD)/sbin/gpuoversubd
CTL_BIN := $(BUILD)/bin/gpuoversubctl
PROGRAMS := $(SIM_BIN) $(GPUD_BIN) $(CTL_BIN)

UNIT_SRC := $(wildcard tests/unit/test_*.cpp)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.cpp=$(BUILD)/tests/%)
UNIT_SUPPORT_OBJ := $(patsubst %.cpp,$(BUILD)/%.o,$(filter-out $(UNIT_SRC),$(wildcard tests/unit/*.cpp)))

BENCH_BIN := $(BUILD)/bench/bench_engine $(BUILD)/bench/bench_roundtrip

# The agent, preloaded into jobs: position-independent, its own libstdc++,
# and nothing exported beyond the hook table and the public API.
AGENT_SRC := $(wildcard mpi-hooks/agent/*.cpp) common/proto/wire.cpp common/util/units.cpp common/kdev/device.cpp
AGENT_OBJ := $(AGENT_SRC:%.cpp=$(BUILD)/pic/%.o)
AGENT_LIB := $(BUILD)/lib/libgpuoversub.so
AGENT_MAP := $(BUILD)/mpi-hooks/agent.map
ifeq ($(SANITIZE),1)
  SO_LDFLAGS :=
else
  SO_LDFLAGS := -Wl,-z,defs -static-libstdc++ -static-libgcc
endif

# The SPANK plugin: hardened, its own libstdc++, only the SPANK symbols out.
SPANK_SRC := $(wildcard spank/*.cpp) $(COMMON_SRC)
SPANK_OBJ := $(SPANK_SRC:%.cpp=$(BUILD)/spank-pic/%.o)
SPANK_LIB := $(BUILD)/lib/spank_gpuoversub.so
HARDEN := -D_FORTIFY_SOURCE=2 -fstack-protector-strong
# Never sanitized: slurmstepd, which loads it, is not.
SPANK_CXXFLAGS := -std=c++20 -O2 -g $(WARN) -Wshadow -I. $(HARDEN) -fPIC -fvisibility=hidden \
	-DGOS_AGENT_PATH='"$(PREFIX)/lib/libgpuoversub.so"'

# The MPI rank hooks, against Debian's Open MPI: a PMPI library, hardened,
# exporting only the wrapped calls and the exchange.
MPICC ?= mpicc
MPI_CFLAGS := $(shell $(MPICC) --showme:compile 2>/dev/null) -DOMPI_SKIP_MPICXX
MPI_LIBS := $(shell $(MPICC) --showme:link 2>/dev/null)
MPI_LIB := $(BUILD)/lib/libgpuoversub_mpi.so
MPI_TEST_BIN := $(patsubst tests/mpi/%.c,$(BUILD)/tests/mpi/%,$(wildcard tests/mpi/*.c)) \
	$(patsubst examples/mpi/%.c,$(BUILD)/examples/mpi/%,$(wildcard examples/mpi/*.c))
ifeq ($(MPI_LIBS),)
  $(error Open MPI's mpicc is missing: apt-get install openmpi-bin libopenmpi-dev)
endif

# Test-only fake driver and the programs that run under the agent.
FAKECUDA_OBJ := $(patsubst %.cpp,$(BUILD)/pic/%.o,$(wildcard tests/fakecuda/*.cpp))
FAKECUDA_LIB := $(BUILD)/tests/fakecuda/libcuda.so.1
AGENT_TEST_BIN := $(patsubst tests/agent/%.cpp,$(BUILD)/tests/agent/%,$(wildcard tests/agent/*.cpp)) \
	$(BUILD)/tests/agent/libnccl-standin.so
EXAMPLE_BIN := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))

# libFuzzer targets (clang-14), each run for a bounded number of inputs
# from the example traces as seeds. FUZZ_RUNS=0 runs until interrupted.
FUZZ_RUNS ?= 20000
FUZZ_CXX ?= clang++-14
FUZZ_CC ?= clang-14
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_SRC := $(ENGINE_SRC) sim/trace.cpp sim/replay.cpp common/util/units.cpp \
	common/proto/wire.cpp common/config/config.cpp
FUZZ_BIN := $(patsubst tests/fuzz/%.cpp,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.cpp))

MAN_PAGES := $(wildcard man/*.[1-8])

.PHONY: all check check-sanitize bench install clean demo demo-sim fuzz check-gpu bench-gpu kmod kmod-check
all: $(ENGINE_LIB) $(PROGRAMS) $(BENCH_BIN) $(AGENT_LIB) $(SPANK_LIB) $(MPI_LIB)

$(BUILD)/kmod/%.o: kmod/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_ENGINE) -c $< -o $@

$(BUILD)/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS_ALL) $(BOOST_TEST) -c $< -o $@

$(BUILD)/pic/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS_ALL) -fPIC -fvisibility=hidden -c $< -o $@

# See the file's head: no sanitizers, always sibling calls.
$(BUILD)/pic/mpi-hooks/agent/dlsym_hook.o: CXXFLAGS_ALL := -std=c++20 -O2 -g $(WARN) -Wshadow \
	-foptimize-sibling-calls

$(AGENT_MAP): mpi-hooks/agent/hooks.def
	@mkdir -p $(@D)
	{ echo '{ global:'; sed -n 's/^GOS_HOOK([^,]*, *\([A-Za-z0-9_]*\),.*/\1;/p' $<; \
	  echo 'dlsym; gpuoversub_*; local: *; };'; } > $@

$(AGENT_LIB): $(AGENT_OBJ) $(AGENT_MAP)
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS_ALL) -shared -Wl,-soname,libgpuoversub.so -Wl,--version-script=$(AGENT_MAP) \
		$(SO_LDFLAGS) $(AGENT_OBJ) -o $@ -ldl -lpthread

# PREFIX is compiled in (the agent's path), so the objects depend on it.
$(BUILD)/spank-pic/%.o: %.cpp $(BUILD)/spank-pic/prefix-$(subst /,_,$(PREFIX))
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(SPANK_CXXFLAGS) -c $< -o $@

$(BUILD)/spank-pic/prefix-%:
	@mkdir -p $(@D)
	rm -f $(@D)/prefix-* && touch $@

$(SPANK_LIB): $(SPANK_OBJ) spank/spank.map
	@mkdir -p $(@D)
	$(CXX) -shared -Wl,--version-script=spank/spank.map -Wl,-z,relro,-z,now \
		-static-libstdc++ -static-libgcc $(SPANK_OBJ) -o $@ -lyaml

$(MPI_LIB): mpi-hooks/mpi/hooks.cpp mpi-hooks/mpi/hooks.map include/gpuoversub/gpuoversub_mpi.h include/gpuoversub/abi.h
	@mkdir -p $(@D)
	$(CXX) -std=c++20 $(OPT) $(WARN) -Wshadow $(SAN) -Iinclude $(MPI_CFLAGS) $(HARDEN) -fPIC -fvisibility=hidden -shared \
		-Wl,--version-script=mpi-hooks/mpi/hooks.map -Wl,-z,relro,-z,now $(SO_LDFLAGS) $< -o $@ $(MPI_LIBS) -ldl

# MPI test programs and the MPI example: the driver API from the fake
# driver, the hooks linked. mpi_plain is the program that knows nothing of
# gpuoversub: no hooks linked (the tests preload them).
MPI_PROGRAM_CC = $(CC) -std=gnu11 $(OPT) $(WARN) $(SAN) -Iinclude -isystem $(CUDA_INC) $(MPI_CFLAGS) $< -o $@
define MPI_PROGRAM
	@mkdir -p $(@D)
	$(MPI_PROGRAM_CC) -L$(BUILD)/tests/fakecuda -lcuda -L$(BUILD)/lib -lgpuoversub_mpi \
		-Wl,-rpath,'$$ORIGIN/../../lib' $(MPI_LIBS) -ldl
endef
$(BUILD)/tests/mpi/%: tests/mpi/%.c $(FAKECUDA_LIB) $(MPI_LIB)
	$(MPI_PROGRAM)
$(BUILD)/examples/mpi/%: examples/mpi/%.c $(FAKECUDA_LIB) $(MPI_LIB)
	$(MPI_PROGRAM)
$(BUILD)/tests/mpi/mpi_plain $(BUILD)/bench/mpi_pingpong: $(BUILD)/%: %.c
	@mkdir -p $(@D)
	$(MPI_PROGRAM_CC) $(MPI_LIBS)

$(FAKECUDA_LIB): $(FAKECUDA_OBJ)
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS_ALL) -shared -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic $^ -o $@ -lpthread
	ln -sf libcuda.so.1 $(@D)/libcuda.so

$(BUILD)/tests/agent/libnccl-standin.so: tests/agent/standin/nccl_standin.c $(FAKECUDA_LIB)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(OPT) $(WARN) $(SAN) -fPIC -shared -isystem $(CUDA_INC) $< -o $@ \
		-L$(BUILD)/tests/fakecuda -lcuda

$(BUILD)/tests/agent/%: $(BUILD)/tests/agent/%.o $(FAKECUDA_LIB)
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS_ALL) $< -o $@ -L$(BUILD)/tests/fakecuda -lcuda -ldl -lpthread

# Examples, built against the fake driver here; users build them against theirs.
$(BUILD)/examples/%: examples/%.c $(FAKECUDA_LIB)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(OPT) $(WARN) $(SAN) -Iinclude -isystem $(CUDA_INC) $< -o $@ \
		-L$(BUILD)/tests/fakecuda -lcuda -ldl

$(ENGINE_LIB): $(ENGINE_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(COMMON_LIB): $(COMMON_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(DAEMON_LIB): $(DAEMON_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(SIM_LIB): $(SIM_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(SIM_BIN): $(BUILD)/sim/main.o $(LIBS)
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS_ALL) $^ -o $@ $(SYSLIBS)

$(GPUD_BIN): $(BUILD)/daemon/gpud/main.o $(LIBS)
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS_ALL) $^ -o $@ $(SYSLIBS)

$(CTL_BIN): $(BUILD)/daemon/ctl/main.o $(LIBS)
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS_ALL) $^ -o $@ $(SYSLIBS)

$(BUILD)/tests/test_%: $(BUILD)/tests/unit/test_%.o $(UNIT_SUPPORT_OBJ) $(SPANK_LOGIC_OBJ) $(LIBS)
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS_ALL) $^ -o $@ $(BOOST_TEST_LIB) $(SYSLIBS)

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIBS)
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS_ALL) $^ -o $@ $(SYSLIBS)

# Every test that needs no GPU; the last line is "N passed, N failed".
check: all $(UNIT_BIN) $(FUZZ_BIN) $(FAKECUDA_LIB) $(AGENT_TEST_BIN) $(EXAMPLE_BIN) $(MPI_TEST_BIN) \
		$(BUILD)/tests/gpu/gos_register
	@tests/run-tests.sh $(BUILD) $(UNIT_BIN) tests/cli/*.bats tests/mpi/*.bats tests/slurm/*.bats tests/kmod/*.bats

check-sanitize:
	$(MAKE) BUILD=build-san SANITIZE=1 check

# The kernel module, against Debian's headers (or KDIR): Kbuild writes beside
# its sources, so it builds from a copy in $(BUILD)/kmod-vm/module.
kmod:
	BUILD=$(BUILD) tests/kmod/build-module.sh $(BUILD) "$$(tests/kmod/headers.sh)"

# checkpatch --strict and sparse over the module and the engine.
kmod-check:
	BUILD=$(BUILD) tests/kmod/check-style.sh

bench: $(BENCH_BIN) $(GPUD_BIN) $(AGENT_LIB) $(MPI_LIB) $(BUILD)/tests/agent/gos_testapp $(BUILD)/tests/gpu/gos_register \
		$(BUILD)/bench/mpi_pingpong
	$(BUILD)/bench/bench_engine --results bench/RESULTS.md
	$(BUILD)/bench/bench_roundtrip --results bench/RESULTS.md
	BUILD=$(BUILD) bench/bench_agent.sh bench/RESULTS.md
	BUILD=$(BUILD) bench/bench_mpi.sh bench/RESULTS.md

# On a machine with an NVIDIA GPU (root): the agent under real programs.
GPU_SUITE_DEPS := all $(BUILD)/tests/agent/gos_testapp $(BUILD)/tests/gpu/gos_register
$(BUILD)/tests/gpu/gos_register: $(BUILD)/tests/gpu/gos_register.o $(LIBS)
	@mkdir -p $(@D)
	$(CXX) $(LDFLAGS_ALL) $^ -o $@ $(SYSLIBS)

check-gpu: $(GPU_SUITE_DEPS)
	BUILD=$(BUILD) tests/gpu/run.sh

bench-gpu: $(GPU_SUITE_DEPS)
	BUILD=$(BUILD) tests/gpu/run.sh --bench

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/lib \
		$(DESTDIR)$(PREFIX)/include/gpuoversub/engine $(DESTDIR)$(PREFIX)/share/gpuoversub/traces \
		$(DESTDIR)$(PREFIX)/share/doc/gpuoversub $(DESTDIR)/etc/gpuoversub $(DESTDIR)/lib/systemd/system
	install -m 0755 $(SIM_BIN) $(CTL_BIN) $(DESTDIR)$(PREFIX)/bin/
	install -m 0755 $(GPUD_BIN) $(DESTDIR)$(PREFIX)/sbin/
	install -m 0644 $(ENGINE_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 0755 $(AGENT_LIB) $(MPI_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -d $(DESTDIR)$(PREFIX)/lib/slurm
	install -m 0755 $(SPANK_LIB) $(DESTDIR)$(PREFIX)/lib/slurm/
	install -m 0644 config/plugstack.conf $(DESTDIR)$(PREFIX)/share/doc/gpuoversub/
	install -m 0644 include/gpuoversub/abi.h include/gpuoversub/tenant_stats.def include/gpuoversub/gpuoversub.h \
		include/gpuoversub/gpuoversub_mpi.h $(DESTDIR)$(PREFIX)/include/gpuoversub/
	install -m 0644 kmod/engine/gos_engine.h kmod/engine/gos_types.h \
		$(DESTDIR)$(PREFIX)/include/gpuoversub/engine/
	install -m 0644 examples/traces/*.csv $(DESTDIR)$(PREFIX)/share/gpuoversub/traces/
	install -m 0644 config/gpuoversub.yaml $(DESTDIR)$(PREFIX)/share/doc/gpuoversub/
	test -e $(DESTDIR)/etc/gpuoversub/gpuoversub.yaml || \
		install -m 0644 config/gpuoversub.yaml $(DESTDIR)/etc/gpuoversub/
	install -m 0644 config/gpuoversubd.service $(DESTDIR)/lib/systemd/system/
	# The module's sources for DKMS: dkms add/build/install gpuoversub/$(VERSION)
	install -d $(DESTDIR)/usr/src/gpuoversub-$(VERSION)/kmod/engine/kernel \
		$(DESTDIR)/usr/src/gpuoversub-$(VERSION)/include/gpuoversub
	install -m 0644 config/dkms.conf $(DESTDIR)/usr/src/gpuoversub-$(VERSION)/
	install -m 0644 kmod/Kbuild kmod/*.c kmod/*.h $(DESTDIR)/usr/src/gpuoversub-$(VERSION)/kmod/
	install -m 0644 kmod/engine/*.c kmod/engine/*.h $(DESTDIR)/usr/src/gpuoversub-$(VERSION)/kmod/engine/
	install -m 0644 kmod/engine/kernel/*.c $(DESTDIR)/usr/src/gpuoversub-$(VERSION)/kmod/engine/kernel/
	install -m 0644 include/gpuoversub/abi.h include/gpuoversub/tenant_stats.def \
		$(DESTDIR)/usr/src/gpuoversub-$(VERSION)/include/gpuoversub/
	for page in $(MAN_PAGES); do \
		sec=$${page##*.}; \
		install -d $(DESTDIR)$(PREFIX)/share/man/man$$sec; \
		install -m 0644 $$page $(DESTDIR)$(PREFIX)/share/man/man$$sec/; \
	done

$(BUILD)/fuzz/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) -MMD -MP -Iinclude -Ikmod/engine -std=gnu11 $(FUZZ_FLAGS) -Wall -Wextra -Werror -c $< -o $@

$(BUILD)/fuzz/%.o: %.cpp
	@mkdir -p $(@D)
	$(FUZZ_CXX) -MMD -MP -Iinclude -Ikmod/engine -I. -std=c++20 $(FUZZ_FLAGS) -Wall -Wextra -Werror -c $< -o $@

$(BUILD)/fuzz/fuzz_%: $(BUILD)/fuzz/tests/fuzz/fuzz_%.o $(patsubst %.c,$(BUILD)/fuzz/%.o,$(patsubst %.cpp,$(BUILD)/fuzz/%.o,$(FUZZ_SRC)))
	$(FUZZ_CXX) $(FUZZ_FLAGS) $^ -o $@ -lyaml -lpthread

fuzz: $(FUZZ_BIN)
	FUZZ_RUNS=$(FUZZ_RUNS) BUILD=$(BUILD) tests/fuzz/run.sh

# The main job: a private Slurm, two competing jobs, their reports (root).
demo: all $(FAKECUDA_LIB) $(BUILD)/tests/agent/gos_testapp
	BUILD=$(BUILD) examples/demo/demo.sh

# The policy comparison on the example traces.
demo-sim: $(SIM_BIN)
	$(SIM_BIN) examples/traces/rodinia-pair.csv
	$(SIM_BIN) examples/traces/pagedos-150.csv
	$(SIM_BIN) examples/traces/mixed-8.csv

clean:
	rm -rf build build-san

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# Keep object files that pattern rules chain through.
.SECONDARY:
