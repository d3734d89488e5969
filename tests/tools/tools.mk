# Stand-ins for what surrounds gpuoversub, for the tests, the QEMU guest,
# the GPU suite, the demo and the benchmarks: gos_register plays the SPANK
# plugin, gos_testapp a CUDA application (driven line by line), and
# libnccl-standin.so, beside it, a communication library; gos_flood a
# hostile neighbour flooding the daemon's socket; gos_hostlist the hostlist
# code, to check against scontrol; gos_munge the MUNGE wrapper, against the Slurm tests' munged; gos_record_request
# gpuoversubd's request to the record helper; gos_jobwide_send a node's
# sealed part, to its daemon as the epilog sends it or straight to a door;
# gos_jobwide_nodes many nodes' parts at once to a door, for the benchmark.
GOS_REGISTER := $(BUILD)/tests/tools/gos_register
GOS_FLOOD := $(BUILD)/tests/tools/gos_flood
TESTAPP := $(BUILD)/tests/tools/gos_testapp
NCCL_STANDIN := $(BUILD)/tests/tools/libnccl-standin.so
GOS_HOSTLIST := $(BUILD)/tests/tools/gos_hostlist
GOS_RECORD_REQUEST := $(BUILD)/tests/tools/gos_record_request
GOS_MUNGE := $(BUILD)/tests/tools/gos_munge
GOS_JOBWIDE_SEND := $(BUILD)/tests/tools/gos_jobwide_send
GOS_JOBWIDE_NODES := $(BUILD)/tests/tools/gos_jobwide_nodes

# Static, so that the QEMU guest runs it as it is; never sanitized.
$(GOS_REGISTER): SAN :=
$(GOS_REGISTER): tests/tools/gos_register.c
	@mkdir -p $(@D)
	$(C_COMPILE) $(LDFLAGS) -static $< -o $@

# Never sanitized either: it runs as a neighbour, and floods.
$(GOS_FLOOD): SAN :=
$(GOS_FLOOD): tests/tools/gos_flood.c
	@mkdir -p $(@D)
	$(C_COMPILE) $(LDFLAGS) $< -o $@

# Its own C++ runtime (outside sanitizer builds), so that the GPU bundle
# runs it on a node whose libstdc++ is older than ours.
$(TESTAPP): $(BUILD)/tests/tools/gos_testapp.o $(BUILD)/tests/tools/testapp_streams.o $(FAKECUDA_LIB) $(NCCL_STANDIN)
	$(CXX_LINK) $(filter %.o,$^) -o $@ -L$(FAKECUDA_DIR) -lcuda -ldl -lpthread \
		$(if $(filter 1,$(SANITIZE)),,-static-libstdc++ -static-libgcc)

$(NCCL_STANDIN): $(BUILD)/tests/tools/nccl_standin.o $(FAKECUDA_LIB)
	$(C_LINK) $(SO_LDFLAGS) $< -o $@ -L$(FAKECUDA_DIR) -lcuda

$(GOS_HOSTLIST): $(BUILD)/tests/tools/gos_hostlist.o $(COMMON_LIB)
	$(CXX_LINK) $^ -o $@

$(GOS_RECORD_REQUEST): $(BUILD)/tests/tools/gos_record_request.o $(BUILD)/daemon/gpud/record_helper.o
	$(CXX_LINK) $^ -o $@

$(GOS_MUNGE): $(BUILD)/tests/tools/gos_munge.o $(MUNGE_OBJ) $(LIBS)
	$(CXX_LINK) $^ -o $@ $(MUNGE_LIBS)

$(GOS_JOBWIDE_SEND): $(BUILD)/tests/tools/gos_jobwide_send.o $(MUNGE_OBJ) $(LIBS)
	$(CXX_LINK) $^ -o $@ $(MUNGE_LIBS) $(SYSLIBS)

$(GOS_JOBWIDE_NODES): $(BUILD)/tests/tools/gos_jobwide_nodes.o $(MUNGE_OBJ) $(LIBS)
	$(CXX_LINK) $^ -o $@ $(MUNGE_LIBS) $(SYSLIBS)

TEST_TOOLS := $(GOS_REGISTER) $(GOS_FLOOD) $(TESTAPP) $(NCCL_STANDIN) $(GOS_HOSTLIST) $(GOS_MUNGE) $(GOS_RECORD_REQUEST) \
	$(GOS_JOBWIDE_SEND) $(GOS_JOBWIDE_NODES)
