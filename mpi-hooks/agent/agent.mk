# The agent, preloaded into jobs: libgpuoversub.so exports nothing beyond
# the hook table, dlsym and the public API (gpuoversub.h).
AGENT_SRC := $(wildcard mpi-hooks/agent/*.cpp) $(wildcard common/proto/*.cpp) common/util/units.cpp common/kdev/device.cpp
AGENT_OBJ := $(patsubst %.cpp,$(BUILD)/%.o,$(filter-out %/dlsym_hook.cpp,$(AGENT_SRC))) \
	$(UNSAN)/mpi-hooks/agent/dlsym_hook.o $(GLIBC_FLOOR_OBJ)
AGENT_LIB := $(BUILD)/lib/libgpuoversub.so
AGENT_MAP := $(BUILD)/mpi-hooks/agent.map
# See the file's head: never sanitized, and optimized whatever the caller
# asks, so that dlsym reaches glibc by a tail call.
$(UNSAN)/mpi-hooks/agent/dlsym_hook.o: PINNED_CXXFLAGS := -O2 -foptimize-sibling-calls

$(AGENT_MAP): mpi-hooks/agent/hooks.def
	@mkdir -p $(@D)
	{ echo '{ global:'; sed -n 's/^GOS_HOOK([^,]*, *\([A-Za-z0-9_]*\),.*/\1;/p' $<; \
	  echo 'dlsym; gpuoversub_*; local: *; };'; } > $@

$(AGENT_LIB): $(AGENT_OBJ) $(AGENT_MAP)
	@mkdir -p $(@D)
	$(CXX_LINK) $(SO_LDFLAGS) $(SO_OWN_RUNTIME) -Wl,-soname,libgpuoversub.so \
		-Wl,--version-script=$(AGENT_MAP) $(AGENT_OBJ) -o $@ -ldl -lpthread $(GLIBC_FLOOR_LIBS)

ALL += $(AGENT_LIB)
INSTALL_STEPS += install-agent
.PHONY: install-agent
install-agent: $(AGENT_LIB)
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/gpuoversub
	install -m 0755 $(AGENT_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 0644 include/gpuoversub/abi.h include/gpuoversub/requests.def include/gpuoversub/tenant_stats.def include/gpuoversub/gpuoversub.h \
		$(DESTDIR)$(PREFIX)/include/gpuoversub/

# The batch planner is pure and tested on its own.
$(BUILD)/tests/unit/agent/test_runs: $(BUILD)/mpi-hooks/agent/runs.o
