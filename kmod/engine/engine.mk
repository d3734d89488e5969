# The engine in userspace: its portable C, shared with the kernel module,
# and the userspace OS layer, as a static library with its headers.
include kmod/engine/sources.mk
# An engine file the list lacks fails here, not as undefined symbols in the module.
ENGINE_UNLISTED := $(filter-out $(GOS_ENGINE_SOURCES),$(notdir $(wildcard kmod/engine/*.c)))
ifneq ($(ENGINE_UNLISTED),)
  $(error kmod/engine/sources.mk does not list $(ENGINE_UNLISTED))
endif
ENGINE_SRC := $(addprefix kmod/engine/,$(GOS_ENGINE_SOURCES)) kmod/engine/user/os_user.c
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
