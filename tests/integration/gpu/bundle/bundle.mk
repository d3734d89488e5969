# `make gpu-bundle`: the GPU suite as one tarball for a GPU node that has
# only the driver and Python (docs/gpu-bundle.md): the daemon, ctl, agent,
# test tools and the suite's scripts, its CUDA programs built here for
# GPU_BUNDLE_ARCHES, and the shared libraries the binaries need beyond
# glibc. The test-only fake driver travels too, for the self-check alone.
NVCC ?= /usr/local/cuda/bin/nvcc
GPU_BUNDLE := $(BUILD)/gpuoversub-gpu-bundle.tar.gz
GPU_BUNDLE_ARCHES := 80 90
GPU_BUNDLE_CUDA := $(BUILD)/gpu-bundle/cuda
GPU_BUNDLE_PROGRAMS := $(addprefix $(GPU_BUNDLE_CUDA)/,gpu_bench pool_app stream_churn lanes_bench)
GPU_BUNDLE_SRC := $(wildcard tests/integration/gpu/bundle/*.sh tests/integration/gpu/*.sh tests/integration/gpu/*.py) \
	tests/integration/wait.bash bench/relief.bash

# Where nvcc cannot build, the bundle is skipped and the reason named. No
# nvcc is a missing part (the CUDA toolkit): `make check` refuses without
# it unless allowed. An nvcc that this release's gcc and glibc are too new
# for (CUDA 13.0 on Debian testing) is the release's: bundle.bats runs and
# skips, saying why (NVCC_HOST_CACHE: nvcc-host.sh's answer, kept).
NVCC_HOST_CACHE := $(BUILD)/gpu-bundle/nvcc-host
NVCC_UNUSABLE := $(shell tests/integration/gpu/nvcc-host.sh $(NVCC) $(NVCC_HOST_CACHE))
ifneq ($(NVCC_UNUSABLE),)
  ifeq ($(shell test -x $(NVCC) && echo yes),)
    $(call skip,gpu-bundle,make gpu-bundle and its self-check,$(NVCC_UNUSABLE) (set NVCC=))
    SKIPPED_TESTS += tests/integration/gpu/bundle.bats
  else
    $(call lacks,gpu-bundle,make gpu-bundle and its self-check,$(NVCC_UNUSABLE); build the bundle on Debian 12 or 13)
  endif
endif

# Machine code for each architecture and PTX of the last, which newer GPUs
# compile at load; C++ runtime inside, so only glibc and the driver remain.
$(GPU_BUNDLE_CUDA)/%: tests/integration/gpu/%.cu tests/integration/gpu/gpu_common.cuh
	@mkdir -p $(@D)
	$(NVCC) -O2 -Werror all-warnings $(foreach a,$(GPU_BUNDLE_ARCHES),-gencode arch=compute_$(a),code=sm_$(a)) \
		-gencode arch=compute_$(lastword $(GPU_BUNDLE_ARCHES)),code=compute_$(lastword $(GPU_BUNDLE_ARCHES)) \
		-Xcompiler -static-libstdc++,-static-libgcc -o $@ $< $(NVCC_LIBS)
$(GPU_BUNDLE_CUDA)/pool_app: NVCC_LIBS := -L$(dir $(NVCC))../lib64/stubs -lcuda

.PHONY: gpu-bundle
ifeq ($(NVCC_UNUSABLE),)
gpu-bundle: $(GPU_BUNDLE)
else
gpu-bundle:
	@echo "make gpu-bundle: $(NVCC_UNUSABLE); build the bundle where nvcc works (Debian 12 or 13)" >&2; exit 1
endif
$(GPU_BUNDLE): $(GPUD_BIN) $(CTL_BIN) $(AGENT_LIB) $(TEST_TOOLS) $(FAKECUDA_LIB) $(GPU_BUNDLE_PROGRAMS) $(GPU_BUNDLE_SRC)
	tests/integration/gpu/bundle/make_bundle.sh $(BUILD) "$(GPU_BUNDLE_ARCHES)" $@

# The bundle is a release artifact for nodes without the sanitizers'
# runtime: `make check` builds and tests it, the sanitizer suite neither.
ifeq ($(SANITIZE),1)
  SKIPPED_TESTS += tests/integration/gpu/bundle.bats
else
  CHECK_DEPS += $(if $(NVCC_UNUSABLE),,$(GPU_BUNDLE))
endif
