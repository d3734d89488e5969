# The test-only CUDA driver, libcuda.so.1: host memory behind a simulated
# device, for every test, example and demo that runs without a GPU.
FAKECUDA_DIR := $(BUILD)/tests/fakecuda
FAKECUDA_LIB := $(FAKECUDA_DIR)/libcuda.so.1
FAKECUDA_OBJ := $(patsubst %.cpp,$(BUILD)/%.o,$(wildcard tests/fakecuda/*.cpp))

$(FAKECUDA_LIB): $(FAKECUDA_OBJ)
	@mkdir -p $(@D)
	$(CXX_LINK) $(SO_LDFLAGS) -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic $^ -o $@ -lpthread
	ln -sf libcuda.so.1 $(@D)/libcuda.so
