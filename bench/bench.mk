# Benchmarks as ratios to same-run baselines: the engine, the agent-to-
# daemon round trip, the agent's added cost per allocate+free pair (as a
# ratio to one socket echo of the same run), the multi-lane
# eviction's speed-up on the fake driver's cost model, the lending
# backoff's churn damping (the simulator's churn trace and the daemon on
# the fake driver), the MPI hooks' overhead and the kernel module's
# allocation ioctl in its QEMU guest, and a 1,024-node run's job-wide
# record through a real Slurm; `make bench` writes bench/RESULTS.md.
BENCH_BIN := $(BUILD)/bench/bench_engine $(BUILD)/bench/bench_roundtrip

PROGRAMS += $(BENCH_BIN)
$(BENCH_BIN): %: %.o $(LIBS)

ALL += $(BENCH_BIN)
.PHONY: bench
bench: $(BENCH_BIN) $(GPUD_BIN) $(AGENT_LIB) $(TESTAPP) $(GOS_REGISTER) $(SIM_BIN) \
		$(SPANK_LIB) $(SLURM_FACTS_BIN) $(GOS_JOBWIDE_SEND) $(GOS_JOBWIDE_NODES) $(GOS_HOSTLIST) \
		$(if $(filter mpi,$(SKIPPED)),,$(MPI_LIB) $(BUILD)/bench/mpi_pingpong)
	$(BUILD)/bench/bench_engine --results bench/RESULTS.md
	$(BUILD)/bench/bench_roundtrip --results bench/RESULTS.md
	BUILD=$(BUILD) bench/bench_agent.sh bench/RESULTS.md
	BUILD=$(BUILD) bench/bench_evict.sh bench/RESULTS.md
	BUILD=$(BUILD) bench/bench_churn_sim.sh bench/RESULTS.md
	BUILD=$(BUILD) bench/bench_churn.sh bench/RESULTS.md
	BUILD=$(BUILD) bench/bench_kmod.sh bench/RESULTS.md
	BUILD=$(BUILD) bench/bench_jobwide.sh 1024 --results bench/RESULTS.md
	$(if $(filter mpi,$(SKIPPED)),@echo "gpuoversub: $(SKIP_NOTE.mpi)",BUILD=$(BUILD) bench/bench_mpi.sh bench/RESULTS.md)
