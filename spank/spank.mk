# The SPANK plugin, loaded by slurmstepd: hardened, never sanitized, its
# own C++ runtime, only the SPANK symbols out.
SPANK_SRC := $(wildcard spank/*.cpp) $(COMMON_SRC) $(MUNGE_SRC)
SPANK_OBJ := $(SPANK_SRC:%.cpp=$(UNSAN)/%.o)
SPANK_LIB := $(BUILD)/lib/spank_gpuoversub.so
# Its logic that needs no Slurm, for the unit tests.
SPANK_LOGIC_OBJ := $(patsubst %.cpp,$(BUILD)/%.o,spank/plugstack_args.cpp spank/step_env.cpp spank/shards.cpp)
# The agent's installed path is compiled in, so the plugin follows PREFIX.
SPANK_PREFIX_STAMP := $(BUILD)/spank/prefix-$(subst /,_,$(PREFIX))
$(UNSAN)/spank/plugin.o: $(SPANK_PREFIX_STAMP)
$(UNSAN)/spank/plugin.o: GOS_CPPFLAGS += -DGOS_AGENT_PATH='"$(PREFIX)/lib/libgpuoversub.so"'

$(SPANK_PREFIX_STAMP):
	@mkdir -p $(@D)
	rm -f $(@D)/prefix-* && touch $@

$(SPANK_LIB): SAN :=
$(SPANK_LIB): $(SPANK_OBJ) spank/spank.map
	@mkdir -p $(@D)
	$(CXX_LINK) $(SO_LDFLAGS) -Wl,--version-script=spank/spank.map -static-libstdc++ -static-libgcc \
		$(SPANK_OBJ) -o $@ -lyaml $(MUNGE_LIBS)

ALL += $(SPANK_LIB)

# The same plugin saying it was built for Slurm 21.08, a series no Debian
# release ships, so that the tests see it refuse to work under this Slurm
# (spank/series.cpp; tests/integration/slurm/other_series.bats).
SPANK_OTHER_DIR := $(BUILD)/tests/spank-other-series
SPANK_OTHER_LIB := $(SPANK_OTHER_DIR)/spank_gpuoversub.so
$(SPANK_OTHER_DIR)/series.o: SAN :=
$(SPANK_OTHER_DIR)/series.o: OPT := -O2 -g1
$(SPANK_OTHER_DIR)/series.o: spank/series.cpp
	@mkdir -p $(@D)
	$(CXX_COMPILE) -DGOS_SLURM_BUILT=0x150800 -c $< -o $@
$(SPANK_OTHER_LIB): SAN :=
$(SPANK_OTHER_LIB): $(filter-out $(UNSAN)/spank/series.o,$(SPANK_OBJ)) $(SPANK_OTHER_DIR)/series.o spank/spank.map
	$(CXX_LINK) $(SO_LDFLAGS) -Wl,--version-script=spank/spank.map -static-libstdc++ -static-libgcc \
		$(filter %.o,$^) -o $@ -lyaml $(MUNGE_LIBS)
CHECK_DEPS += $(SPANK_OTHER_LIB)

INSTALL_STEPS += install-spank
.PHONY: install-spank
install-spank: $(SPANK_LIB)
	install -d $(DESTDIR)$(PREFIX)/lib/slurm $(DESTDIR)$(PREFIX)/share/doc/gpuoversub
	install -m 0755 $(SPANK_LIB) $(DESTDIR)$(PREFIX)/lib/slurm/
	install -m 0644 config/plugstack.conf $(DESTDIR)$(PREFIX)/share/doc/gpuoversub/

# The Slurm tests with real accounting start a MariaDB and a slurmdbd.
ifeq ($(and $(shell command -v mariadbd),$(shell command -v slurmdbd),$(shell command -v mariadb-install-db)),)
  $(call skip,accounting,the Slurm accounting tests,no MariaDB or slurmdbd (apt-get install mariadb-server slurmdbd))
  SKIPPED_TESTS += tests/integration/slurm/accounting.bats
endif
