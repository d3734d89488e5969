# The kernel module, against Debian's headers (or KDIR), with the kernel's
# own flags: `make kmod` builds it in $(BUILD)/kmod-vm/module (Kbuild
# writes beside its sources), `make kmod-check` runs checkpatch --strict
# and sparse, `make install` ships its sources for DKMS. Its QEMU tests
# (tests/integration/kmod) need QEMU, busybox-static and the headers.
.PHONY: kmod kmod-check install-dkms
kmod:
	kmod/scripts/build-module.sh $(BUILD) "$$(kmod/scripts/headers.sh)"

kmod-check:
	BUILD=$(BUILD) kmod/scripts/check-style.sh

KMOD_TESTS_MISSING := $(shell tests/integration/kmod/missing.sh)
ifneq ($(KMOD_TESTS_MISSING),)
  $(call skip,kmod,the kernel module's QEMU tests,missing $(KMOD_TESTS_MISSING) (apt-get install them; or set KDIR))
  SKIPPED_TESTS += tests/integration/kmod/%
endif

DKMS_DIR = $(DESTDIR)/usr/src/gpuoversub-$(VERSION)
INSTALL_STEPS += install-dkms
install-dkms:
	install -d $(DKMS_DIR)/kmod/engine/kernel $(DKMS_DIR)/include/gpuoversub
	install -m 0644 config/dkms.conf $(DKMS_DIR)/
	install -m 0644 kmod/Kbuild kmod/*.c kmod/*.h $(DKMS_DIR)/kmod/
	install -m 0644 kmod/engine/*.c kmod/engine/*.h kmod/engine/sources.mk $(DKMS_DIR)/kmod/engine/
	install -m 0644 kmod/engine/kernel/*.c $(DKMS_DIR)/kmod/engine/kernel/
	install -m 0644 include/gpuoversub/abi.h include/gpuoversub/tenant_stats.def $(DKMS_DIR)/include/gpuoversub/
