# Code the daemon, ctl, the agent and the SPANK plugin share, as a static
# library for the programs (the shared objects take the objects they need).
# The MUNGE wrapper stays out of it, as an object of its own, so that only
# what uses it links libmunge (not the plugin, the agent or the GPU bundle).
MUNGE_SRC := common/util/munge.cpp
MUNGE_OBJ := $(BUILD)/common/util/munge.o
MUNGE_LIBS := -lmunge
COMMON_SRC := $(filter-out $(MUNGE_SRC),$(wildcard common/*/*.cpp))
COMMON_OBJ := $(COMMON_SRC:%.cpp=$(BUILD)/%.o)
COMMON_LIB := $(BUILD)/lib/libgpuoversub-common.a

ARCHIVES += $(COMMON_LIB)
$(COMMON_LIB): $(COMMON_OBJ)
