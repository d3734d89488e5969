# gpuoversubd and gpuoversubctl: the daemon's parts as a library (the unit
# tests link it too), the two programs, the policy and the systemd unit.
DAEMON_SRC := $(filter-out %/main.cpp,$(wildcard daemon/*/*.cpp))
DAEMON_OBJ := $(DAEMON_SRC:%.cpp=$(BUILD)/%.o)
DAEMON_LIB := $(BUILD)/lib/libgpuoversub-daemon.a
GPUD_BIN := $(BUILD)/sbin/gpuoversubd
CTL_BIN := $(BUILD)/bin/gpuoversubctl
# Every userspace library, in link order, for the tests and benchmarks;
# gpuoversubd links no simulator, gpuoversubctl does (its simulate command).
LIBS := $(DAEMON_LIB) $(SIM_LIB) $(COMMON_LIB) $(ENGINE_LIB)

ARCHIVES += $(DAEMON_LIB)
$(DAEMON_LIB): $(DAEMON_OBJ)

# gpuoversubd opens the job-wide channel's credentials with munged: it
# links the MUNGE wrapper, which the library leaves out.
$(GPUD_BIN): $(BUILD)/daemon/gpud/main.o $(DAEMON_LIB) $(COMMON_LIB) $(ENGINE_LIB) $(MUNGE_OBJ)
$(GPUD_BIN): SYSLIBS += $(MUNGE_LIBS)
$(CTL_BIN): $(BUILD)/daemon/ctl/main.o $(LIBS)
PROGRAMS += $(GPUD_BIN) $(CTL_BIN)

# The Slurm facts reader, the daemon's only user of libslurm: a program of
# its own, found beside gpuoversubd as ../libexec/gpuoversub/. Never
# sanitized: libslurm's leaks at exit would fail every reading.
SLURM_FACTS_BIN := $(BUILD)/libexec/gpuoversub/gpuoversub-slurm-facts
$(SLURM_FACTS_BIN): SAN :=
$(SLURM_FACTS_BIN): $(UNSAN)/daemon/slurmfacts/main.o $(UNSAN)/daemon/slurmfacts/write_record.o \
		$(UNSAN)/daemon/slurmfacts/serve_record.o \
		$(UNSAN)/common/util/user_name.o $(UNSAN)/common/report/admin_comment.o \
		$(UNSAN)/common/report/jobwide_record.o $(UNSAN)/common/report/report.o \
		$(UNSAN)/common/util/hostlist.o
	@mkdir -p $(@D)
	$(CXX_LINK) $^ -o $@ -lslurm

ALL += $(GPUD_BIN) $(CTL_BIN) $(SLURM_FACTS_BIN)
INSTALL_STEPS += install-daemon
.PHONY: install-daemon
install-daemon: $(GPUD_BIN) $(CTL_BIN) $(SLURM_FACTS_BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/share/doc/gpuoversub \
		$(DESTDIR)$(PREFIX)/libexec/gpuoversub $(DESTDIR)/etc/gpuoversub $(DESTDIR)/lib/systemd/system \
		$(DESTDIR)/usr/lib/sysusers.d $(DESTDIR)/lib/udev/rules.d
	install -m 0755 $(CTL_BIN) $(DESTDIR)$(PREFIX)/bin/
	install -m 0755 $(GPUD_BIN) $(DESTDIR)$(PREFIX)/sbin/
	install -m 0755 $(SLURM_FACTS_BIN) $(DESTDIR)$(PREFIX)/libexec/gpuoversub/
	install -m 0644 config/gpuoversub.yaml $(DESTDIR)$(PREFIX)/share/doc/gpuoversub/
	test -e $(DESTDIR)/etc/gpuoversub/gpuoversub.yaml || \
		install -m 0644 config/gpuoversub.yaml $(DESTDIR)/etc/gpuoversub/
	install -m 0644 config/gpuoversubd.service $(DESTDIR)/lib/systemd/system/
	install -m 0644 config/gpuoversub-record.socket config/gpuoversub-record@.service $(DESTDIR)/lib/systemd/system/
	install -m 0644 config/gpuoversub.sysusers $(DESTDIR)/usr/lib/sysusers.d/gpuoversub.conf
	install -m 0644 config/60-gpuoversub.rules $(DESTDIR)/lib/udev/rules.d/

# Each container runtime's integration (docs/containers.md), naming the
# agent where install-agent puts it. enroot reads its drop-in directories;
# the rest are for the admin to copy. The fstab, which a site may edit, is
# kept like the policy.
CONTAINERS_DIR = $(DESTDIR)$(PREFIX)/share/gpuoversub/containers
with_paths = sed -e 's|@LIBDIR@|$(PREFIX)/lib|g' -e 's|@DATADIR@|$(PREFIX)/share/gpuoversub|g' $(1) >$(2)
INSTALL_STEPS += install-containers
.PHONY: install-containers
install-containers:
	install -d $(DESTDIR)/etc/enroot/mounts.d $(DESTDIR)/etc/enroot/hooks.d $(CONTAINERS_DIR)
	test -e $(DESTDIR)/etc/enroot/mounts.d/90-gpuoversub.fstab || \
		$(call with_paths,config/containers/enroot.fstab,$(DESTDIR)/etc/enroot/mounts.d/90-gpuoversub.fstab)
	$(call with_paths,config/containers/enroot-hook.sh,$(DESTDIR)/etc/enroot/hooks.d/90-gpuoversub.sh)
	chmod 0755 $(DESTDIR)/etc/enroot/hooks.d/90-gpuoversub.sh
	$(call with_paths,config/containers/apptainer.conf,$(CONTAINERS_DIR)/apptainer.conf)
	$(call with_paths,config/containers/ch-run-gpuoversub,$(CONTAINERS_DIR)/ch-run-gpuoversub)
	chmod 0755 $(CONTAINERS_DIR)/ch-run-gpuoversub

# The exporter's textfile and the example alert rules are checked with
# Prometheus' own promtool.
ifeq ($(shell command -v promtool),)
  $(call skip,promtool,the exporter's promtool test,no promtool (apt-get install prometheus))
  SKIPPED_TESTS += tests/integration/daemon/exporter.bats
endif
