# The MPI side, against Open MPI's mpicc (optional): the rank hooks
# libgpuoversub_mpi.so, a PMPI library exporting only the wrapped calls and
# the exchange; the MPI test programs, the MPI example and the ping-pong
# benchmark. Without mpicc the rest builds and `make` says so.
MPICC ?= mpicc
MPI_CFLAGS := $(shell $(MPICC) --showme:compile 2>/dev/null)
MPI_LIBS := $(shell $(MPICC) --showme:link 2>/dev/null)
MPI_LIB := $(BUILD)/lib/libgpuoversub_mpi.so
MPI_FLOOR_OBJ := $(GLIBC_FLOOR_OBJ) $(if $(GLIBC_FLOOR_OBJ),$(BUILD)/common/compat/glibc_floor_dlsym.o)
MPI_HOOKED_BIN := $(BUILD)/tests/integration/mpi/gos_mpi_app $(BUILD)/examples/mpi/balance
# Programs that know nothing of gpuoversub: the tests preload the hooks.
MPI_PLAIN_BIN := $(BUILD)/tests/integration/mpi/mpi_plain $(BUILD)/bench/mpi_pingpong
# $ORIGIN/../.. up to $(BUILD), from the directory $(1) under it.
up_to_build = $(subst $(space),/,$(patsubst %,..,$(subst /, ,$(patsubst $(BUILD)/%,%,$(1)))))

ifeq ($(MPI_LIBS),)
  $(call skip,mpi,the MPI hooks (libgpuoversub_mpi.so) and their tests,$(MPICC) gives no Open MPI flags \
	(apt-get install openmpi-bin libopenmpi-dev; or set MPICC))
  SKIPPED_TESTS += tests/integration/mpi/%
else
$(BUILD)/mpi-hooks/mpi/hooks.o $(MPI_HOOKED_BIN:=.o) $(MPI_PLAIN_BIN:=.o): \
	GOS_CPPFLAGS += $(MPI_CFLAGS) -DOMPI_SKIP_MPICXX

$(MPI_LIB): $(BUILD)/mpi-hooks/mpi/hooks.o $(MPI_FLOOR_OBJ) mpi-hooks/mpi/hooks.map
	@mkdir -p $(@D)
	$(CXX_LINK) $(SO_LDFLAGS) $(SO_OWN_RUNTIME) -Wl,-soname,libgpuoversub_mpi.so \
		-Wl,--version-script=mpi-hooks/mpi/hooks.map $< $(MPI_FLOOR_OBJ) -o $@ $(MPI_LIBS) -ldl $(GLIBC_FLOOR_LIBS)

# The driver API from the fake driver, the hooks linked.
$(MPI_HOOKED_BIN): %: %.o $(FAKECUDA_LIB) $(MPI_LIB)
	$(C_LINK) $< -o $@ -L$(FAKECUDA_DIR) -lcuda -L$(BUILD)/lib -lgpuoversub_mpi \
		-Wl,-rpath,'$$ORIGIN/$(call up_to_build,$(@D))/lib' $(MPI_LIBS) -ldl

$(MPI_PLAIN_BIN): %: %.o
	$(C_LINK) $< -o $@ $(MPI_LIBS)

ALL += $(MPI_LIB)
CHECK_DEPS += $(MPI_HOOKED_BIN) $(MPI_PLAIN_BIN)
INSTALL_STEPS += install-mpi
.PHONY: install-mpi
install-mpi: $(MPI_LIB)
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/gpuoversub
	install -m 0755 $(MPI_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 0644 include/gpuoversub/gpuoversub_mpi.h $(DESTDIR)$(PREFIX)/include/gpuoversub/
endif
