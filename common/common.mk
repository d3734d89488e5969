# Code the daemon, ctl, the agent and the SPANK plugin share, as a static
# library for the programs (the shared objects take the objects they need).
# The MUNGE wrapper and the part sealer stay out of it, as objects of their
# own, so that only what uses them links libmunge (the daemon, the plugin
# and test tools; not ctl, the agent or the GPU bundle).
MUNGE_SRC := common/util/munge.cpp common/jobwide/seal.cpp
MUNGE_OBJ := $(MUNGE_SRC:%.cpp=$(BUILD)/%.o)
MUNGE_LIBS := -lmunge
# The glibc floor goes only into the preloaded libraries (Makefile).
COMMON_SRC := $(filter-out $(MUNGE_SRC) common/compat/glibc_floor%,$(wildcard common/*/*.cpp))
COMMON_OBJ := $(COMMON_SRC:%.cpp=$(BUILD)/%.o)
COMMON_LIB := $(BUILD)/lib/libgpuoversub-common.a

ARCHIVES += $(COMMON_LIB)
$(COMMON_LIB): $(COMMON_OBJ)
