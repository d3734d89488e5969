# The test-only CUDA driver, libcuda.so.1: host memory behind a simulated
# device, for every test, example and demo that runs without a GPU.
FAKECUDA_DIR := $(BUILD)/tests/fakecuda
FAKECUDA_LIB := $(FAKECUDA_DIR)/libcuda.so.1
FAKECUDA_OBJ := $(patsubst %.cpp,$(BUILD)/%.o,$(filter-out %/nvml.cpp,$(wildcard tests/fakecuda/*.cpp)))
# Its NVML, per-process usage over the same state, in a directory of its
# own: only what is pointed there (a test's gpuoversubd) loads it.
FAKENVML_LIB := $(FAKECUDA_DIR)/nvml/libnvidia-ml.so.1

# Like a real driver, which the container runtimes bind into images, it
# loads whatever the image's glibc and C++ runtime (glibc_floor.cpp).
$(FAKECUDA_LIB): $(FAKECUDA_OBJ) $(GLIBC_FLOOR_OBJ)
	@mkdir -p $(@D)
	$(CXX_LINK) $(SO_LDFLAGS) $(SO_OWN_RUNTIME) -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic $^ -o $@ -lpthread $(GLIBC_FLOOR_LIBS)
	ln -sf libcuda.so.1 $(@D)/libcuda.so

$(FAKENVML_LIB): $(patsubst %,$(BUILD)/tests/fakecuda/%.o,nvml device_state mig)
	@mkdir -p $(@D)
	$(CXX_LINK) $(SO_LDFLAGS) -Wl,-soname,libnvidia-ml.so.1 $^ -o $@ -lpthread
