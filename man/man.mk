# The manual pages, each installed in the section its name ends with.
MAN_PAGES := $(wildcard man/*.[1-8])

INSTALL_STEPS += install-man
.PHONY: install-man
install-man:
	for page in $(MAN_PAGES); do \
		sec=$${page##*.}; \
		install -d $(DESTDIR)$(PREFIX)/share/man/man$$sec; \
		install -m 0644 $$page $(DESTDIR)$(PREFIX)/share/man/man$$sec/; \
	done
