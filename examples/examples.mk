# The examples, built against the fake driver here (users build them
# against theirs), and `make demo`: a private Slurm, two competing jobs and
# their reports (root). The MPI example is built with the MPI side.
EXAMPLE_BIN := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))

$(EXAMPLE_BIN): %: %.o $(FAKECUDA_LIB)
	$(C_LINK) $< -o $@ -L$(FAKECUDA_DIR) -lcuda -ldl

CHECK_DEPS += $(EXAMPLE_BIN)
.PHONY: demo
demo: all $(FAKECUDA_LIB) $(TESTAPP)
	BUILD=$(BUILD) examples/demo/demo.sh
