# libFuzzer targets (clang, optional) on the frame decoder, the job-wide
# channel's codec, the daemon's request handlers, the policy loader, the
# trace decoder and the engine API, each run for FUZZ_RUNS
# inputs from its seed corpus (FUZZ_RUNS=0: until interrupted). They build
# with their own compiler and flags, not the caller's.
FUZZ_RUNS ?= 20000
# The clang is the release's: packaging/debian-packages names clang-$CLANG
# for each Debian release (14 on 12, 19 on 13, 21 on testing), and
# `deps.sh --value CLANG` reads it. FUZZ_CLANG=N takes another; on a
# system the list does not know, plain clang++.
ifeq ($(origin FUZZ_CLANG),undefined)
  FUZZ_CLANG := $(shell packaging/deps.sh --value CLANG 2>/dev/null)
endif
FUZZ_CXX ?= clang++$(if $(FUZZ_CLANG),-$(FUZZ_CLANG))
FUZZ_CC ?= clang$(if $(FUZZ_CLANG),-$(FUZZ_CLANG))
# -O0 by default: make check's brief runs take 9 s more than at -O1 (13 s
# against 5 s for 3,000 inputs each), and the build saves more than that,
# 271 CPU-s against 379 for the 81 compiles and links (g++ 12 host, clang
# 14, idle, 2026-11-29), in every release CI builds. A long run wants
# FUZZ_OPT=-O1: about 3 times the inputs per second.
FUZZ_OPT ?= -O0
FUZZ_FLAGS := -g1 $(FUZZ_OPT) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(WARN)
# Where they build: make check-sanitize passes the plain build's, since
# the fuzzers carry their own sanitizers and a second copy would be the
# same (tests/tests.mk); tests/fuzz/run.sh finds them by it.
FUZZ_DIR ?= $(BUILD)/fuzz
export FUZZ_DIR
FUZZ_SRC := $(ENGINE_SRC) sim/trace.cpp sim/replay.cpp common/util/units.cpp \
	common/proto/wire.cpp common/proto/requests.cpp common/config/config.cpp common/config/oversub.cpp common/config/shape.cpp \
	common/util/regular_file.cpp common/util/held_dir.cpp common/jobwide/frame.cpp
FUZZ_OBJ := $(patsubst %,$(FUZZ_DIR)/%.o,$(basename $(FUZZ_SRC)))
FUZZ_BIN := $(patsubst tests/fuzz/%.cpp,$(FUZZ_DIR)/%,$(wildcard tests/fuzz/fuzz_*.cpp))

$(FUZZ_DIR)/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(GOS_CPPFLAGS) -std=gnu11 $(FUZZ_FLAGS) -c $< -o $@

$(FUZZ_DIR)/%.o: %.cpp
	@mkdir -p $(@D)
	$(FUZZ_CXX) $(GOS_CPPFLAGS) -std=c++20 $(FUZZ_FLAGS) -c $< -o $@

$(FUZZ_BIN): $(FUZZ_DIR)/%: $(FUZZ_DIR)/tests/fuzz/%.o $(FUZZ_OBJ)
	$(FUZZ_CXX) $(FUZZ_FLAGS) $^ -o $@ -lyaml -lpthread $(FUZZ_LIBS)

# fuzz_handlers drives the daemon itself: its parts but the socket server,
# and the rest of common/, built with the fuzzers' flags too.
FUZZ_HANDLERS_SRC := $(filter-out %/main.cpp %/server.cpp %/connection.cpp,$(wildcard daemon/gpud/*.cpp)) \
	$(filter-out $(FUZZ_SRC),$(COMMON_SRC))
$(FUZZ_DIR)/fuzz_handlers: $(patsubst %,$(FUZZ_DIR)/%.o,$(basename $(FUZZ_HANDLERS_SRC)))
$(FUZZ_DIR)/fuzz_handlers: FUZZ_LIBS := -lhwloc -ldl

# The fuzzers' own sanitizers check the calls fortify would.
$(FUZZ_DIR)/%.o: FORTIFY :=

.PHONY: fuzz
ifeq ($(shell command -v $(FUZZ_CXX)),)
  $(call skip,fuzz,the libFuzzer targets,no $(FUZZ_CXX) (apt-get install $(or $(strip $(filter %clang-$(FUZZ_CLANG) %clang-rt-$(FUZZ_CLANG)-dev,$(shell packaging/deps.sh --list check 2>/dev/null))),clang with its libclang-rt)))
fuzz:
	@echo "make fuzz: $(SKIP_NOTE.fuzz)"; exit 1
else
  UNIT_TESTS += tests/fuzz/fuzz.bats
  CHECK_DEPS += $(FUZZ_BIN)
fuzz: $(FUZZ_BIN)
	FUZZ_RUNS=$(FUZZ_RUNS) BUILD=$(BUILD) tests/fuzz/run.sh
endif
