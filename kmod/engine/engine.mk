# The engine in userspace: its portable C, shared with the kernel module,
# and the userspace OS layer, as a static library with its headers.
ENGINE_SRC := $(wildcard kmod/engine/*.c) kmod/engine/user/os_user.c
ENGINE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/%.o)
ENGINE_LIB := $(BUILD)/lib/libgpuoversub-engine.a
# Kernel style: every function declared before it is defined.
$(ENGINE_OBJ): GOS_CFLAGS += -Wmissing-prototypes -Wstrict-prototypes

ARCHIVES += $(ENGINE_LIB)
$(ENGINE_LIB): $(ENGINE_OBJ)

ALL += $(ENGINE_LIB)
INSTALL_STEPS += install-engine
.PHONY: install-engine
install-engine: $(ENGINE_LIB)
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/gpuoversub/engine
	install -m 0644 $(ENGINE_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 0644 kmod/engine/gos_engine.h kmod/engine/gos_types.h \
		$(DESTDIR)$(PREFIX)/include/gpuoversub/engine/
