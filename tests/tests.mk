# The tests: Boost.Test programs and bats files, unit ones (in process,
# tests/unit/<component>) before integration ones (real daemons, programs,
# Slurm, MPI, QEMU: tests/integration/<component>). `make check` runs every
# test that needs no GPU and ends with "N passed, N failed";
# `make check-gpu` and `make bench-gpu` run the GPU suite.
UNIT_SRC := $(wildcard tests/unit/*/test_*.cpp)
INTEGRATION_SRC := $(wildcard tests/integration/*/test_*.cpp)
UNIT_BIN := $(UNIT_SRC:%.cpp=$(BUILD)/%)
INTEGRATION_BIN := $(INTEGRATION_SRC:%.cpp=$(BUILD)/%)
# Harnesses, linked into every test program.
TEST_SUPPORT_OBJ := $(patsubst %.cpp,$(BUILD)/%.o,$(filter-out $(UNIT_SRC) $(INTEGRATION_SRC), \
	$(wildcard tests/unit/*/*.cpp tests/integration/*/*.cpp)))
TEST_OBJ := $(UNIT_BIN:=.o) $(INTEGRATION_BIN:=.o) $(TEST_SUPPORT_OBJ)
$(TEST_OBJ): GOS_CPPFLAGS += -DBOOST_TEST_DYN_LINK
# The test programs' own code needs no -O2 (the code under test, from the
# libraries, has it): -O1 compiles them in two thirds of the time. Under
# the sanitizers, -O0: half the time of -O1 (test_report_golden.o, g++ 12:
# 60 s at -O1, 32 s at -O0), where the libraries keep -O1. _FORTIFY_SOURCE
# needs optimisation, and ASan checks those calls itself.
ifeq ($(SANITIZE),1)
  $(TEST_OBJ): OPT := $(subst -O1,-O0,$(OPT))
  $(TEST_OBJ): FORTIFY :=
else
  $(TEST_OBJ): OPT := $(subst -O2,-O1,$(OPT))
endif

$(UNIT_BIN) $(INTEGRATION_BIN): %: %.o $(TEST_SUPPORT_OBJ) $(SPANK_LOGIC_OBJ) $(LIBS)
	$(CXX_LINK) $^ -o $@ -lboost_unit_test_framework $(SYSLIBS)

UNIT_TESTS += $(UNIT_BIN) $(wildcard tests/unit/*/*.bats)
INTEGRATION_TESTS += $(INTEGRATION_BIN) $(wildcard tests/integration/*/*.bats)
CHECK_DEPS += $(UNIT_BIN) $(INTEGRATION_BIN) $(FAKECUDA_LIB) $(FAKENVML_LIB) $(TEST_TOOLS)
# The multi-node Slurm (tests/integration/multinode) makes its nodes'
# namespaces with ip and nsenter.
ifeq ($(and $(shell command -v ip),$(shell command -v nsenter),$(shell command -v unshare)),)
  $(call skip,multinode,the multi-node Slurm tests,no ip or nsenter (apt-get install iproute2 util-linux))
  SKIPPED_TESTS += tests/integration/multinode/multinode.bats
endif
# Jobs in containers (tests/integration/containers): ch-run runs the image
# that debootstrap makes.
ifeq ($(and $(shell command -v ch-run),$(shell command -v debootstrap)),)
  $(call skip,containers,the container tests,no ch-run or debootstrap (apt-get install charliecloud-runtime debootstrap))
  SKIPPED_TESTS += tests/integration/containers/charliecloud.bats
endif
# Features that cannot be tested here (see `skip`), unless allowed.
unallowed_skips = $(if $(filter all,$(allowed_skips)),,$(filter-out $(allowed_skips),$(SKIPPED)))

.PHONY: check check-build check-build-tools check-features check-sanitize check-sanitize-build check-gpu bench-gpu check-service
# What `make check` runs, built and not run; check-build-tools: the same
# without the Boost.Test programs and the fuzzers, what the Slurm, SPANK, MPI and
# multi-node suites need (CI on Debian testing, .ci/release.sh).
check-build: all $(CHECK_DEPS)
check-build-tools: all $(filter-out $(UNIT_BIN) $(INTEGRATION_BIN) $(FUZZ_BIN),$(CHECK_DEPS))

check: check-features all $(CHECK_DEPS)
	@tests/run-tests.sh $(BUILD) $(filter-out $(SKIPPED_TESTS),$(UNIT_TESTS) $(INTEGRATION_TESTS))

check-features: features
	$(if $(unallowed_skips),@echo "$(skip_refusal)"; exit 1)
skip_refusal = make check: the tests of $(strip $(unallowed_skips)) cannot run here (see above): install what they \
	need, or set GOS_ALLOW_SKIP=$(subst $(space),$(comma),$(strip $(unallowed_skips))) to run the rest

# check-sanitize-build: what check-sanitize runs, built and not run, but
# the fuzzers: they are the plain build's (FUZZ_DIR), so CI can build it
# beside the plain build and its suite without two makes writing one
# file. The recipe names $(MAKE) itself, so that the sub-make shares the
# jobserver.
check-sanitize check-sanitize-build:
	$(MAKE) BUILD=$(SAN_BUILD) SANITIZE=1 FUZZ_DIR=$(BUILD)/fuzz $(if $(filter %-build,$@),FUZZ_BIN=) $(@:check-sanitize%=check%)

# gpuoversubd as its unit runs it, under a booted systemd in QEMU (root):
# a Debian root made with debootstrap, or GOS_SERVICE_ROOT's (used up).
check-service: all $(TEST_TOOLS) $(FAKECUDA_LIB)
	BUILD=$(BUILD) tests/service/run.sh $(GOS_SERVICE_ROOT)

# On a machine with an NVIDIA GPU (root): the agent under real programs.
check-gpu: all $(TEST_TOOLS)
	BUILD=$(BUILD) tests/integration/gpu/run.sh

bench-gpu: all $(TEST_TOOLS)
	BUILD=$(BUILD) tests/integration/gpu/run.sh --bench
