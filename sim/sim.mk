# The simulator: its library (the unit tests and fuzzers use it),
# gpuoversub-sim, the example traces, and the policy comparison.
SIM_SRC := $(filter-out %/main.cpp,$(wildcard sim/*.cpp))
SIM_OBJ := $(SIM_SRC:%.cpp=$(BUILD)/%.o)
SIM_LIB := $(BUILD)/lib/libgpuoversub-sim.a
SIM_BIN := $(BUILD)/bin/gpuoversub-sim

ARCHIVES += $(SIM_LIB)
$(SIM_LIB): $(SIM_OBJ)

PROGRAMS += $(SIM_BIN)
$(SIM_BIN): $(BUILD)/sim/main.o $(SIM_LIB) $(COMMON_LIB) $(ENGINE_LIB)

ALL += $(SIM_BIN)
INSTALL_STEPS += install-sim
.PHONY: install-sim demo-sim
install-sim: $(SIM_BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/gpuoversub/traces
	install -m 0755 $(SIM_BIN) $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 examples/traces/*.csv $(DESTDIR)$(PREFIX)/share/gpuoversub/traces/

demo-sim: $(SIM_BIN)
	$(SIM_BIN) examples/traces/rodinia-pair.csv
	$(SIM_BIN) examples/traces/pagedos-150.csv
	$(SIM_BIN) examples/traces/mixed-8.csv
	$(SIM_BIN) --policies gpuoversub,gpuoversub-undamped,gpuswap examples/traces/churn-200ms.csv
