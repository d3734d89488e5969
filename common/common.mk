# Code the daemon, ctl, the agent and the SPANK plugin share, as a static
# library for the programs (the shared objects take the objects they need).
COMMON_SRC := $(wildcard common/*/*.cpp)
COMMON_OBJ := $(COMMON_SRC:%.cpp=$(BUILD)/%.o)
COMMON_LIB := $(BUILD)/lib/libgpuoversub-common.a

ARCHIVES += $(COMMON_LIB)
$(COMMON_LIB): $(COMMON_OBJ)
