# packaging/install.mk: "make install" for slurm-exporter-shim.
# Included by the top-level Makefile (include packaging/install.mk); every
# path is relative to the repository root, where make runs.
#
#   make install [DESTDIR=/tmp/root] [PREFIX=/usr] [SYSCONFDIR=/etc]
#                [UNITDIR=/lib/systemd/system]
#
# Installs:
#   $(BINDIR)/slurm-exporter-shim                     the program ($(BIN))
#   $(SYSCONFDIR)/slurm-exporter-shim/*.json          mappings/*.json (conffiles)
#   $(SYSCONFDIR)/default/slurm-exporter-shim         packaging/default/slurm-exporter-shim
#   $(UNITDIR)/slurm-exporter-shim.service            packaging/systemd/slurm-exporter-shim.service
#   $(MANDIR)/man1/slurm-exporter-shim.1.gz           docs/slurm-exporter-shim.1, gzip -9n
#   $(DOCDIR)/*.md                                    docs/*.md
#   $(DOCDIR)/alert-rules.yml                         docs/alert-rules.yml (Prometheus rule file)
#   $(DATADIR)/migrate-legacy-args                    packaging/migrate-legacy-args (postinst, %post)
#   $(DATADIR)/default.dist                           the defaults file as shipped (what
#                                                     migrate-legacy-args compares with)
#   $(DATADIR)/replace-file.sh                        packaging/replace-file.sh (0644: sourced by
#                                                     migrate-legacy-args and enable-slurmrestd,
#                                                     how they rewrite a file)
# and the optional slurmrestd unit (installed, not enabled; see docs/operations.md):
#   $(UNITDIR)/slurm-exporter-shim-slurmrestd.service packaging/systemd/slurm-exporter-shim-slurmrestd.service
#   $(SYSCONFDIR)/default/slurm-exporter-shim-slurmrestd  packaging/default/slurm-exporter-shim-slurmrestd
#   $(DATADIR)/run-slurmrestd                         packaging/run-slurmrestd (its ExecStart)
#   $(DATADIR)/enable-slurmrestd                      packaging/enable-slurmrestd (enables it and
#                                                     points the shim at it)
#
# UNITDIR defaults to $(PREFIX)/lib/systemd/system (/usr/lib/systemd/system,
# as on RHEL and Debian 13). Debian 12 (bookworm) still keeps units in
# /lib/systemd/system: packaging/debian/rules passes UNITDIR=/lib/systemd/system,
# and the RPM spec passes UNITDIR=%{_unitdir}.
#
# The unit runs /usr/bin/slurm-exporter-shim and reads
# /etc/default/slurm-exporter-shim whatever PREFIX and SYSCONFDIR are (the
# slurmrestd unit: /usr/share/slurm-exporter-shim/run-slurmrestd and
# /etc/default/slurm-exporter-shim-slurmrestd); with other values, adapt them
# with a drop-in (systemctl edit).

# Keep the including Makefile's default goal: a rule below must not become it
# when this file is included before the Makefile's first rule.
_shim_install_saved_goal := $(.DEFAULT_GOAL)

PREFIX     ?= /usr
SYSCONFDIR ?= /etc
DESTDIR    ?=
BIN        ?= slurm-exporter-shim
BUILD      ?= build
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/slurm-exporter-shim
UNITDIR    ?= $(PREFIX)/lib/systemd/system
DATADIR    ?= $(PREFIX)/share/slurm-exporter-shim
INSTALL    ?= install
GZIP_CMD   ?= gzip -9n

SHIM_MAPPINGS := $(sort $(wildcard mappings/*.json))
SHIM_DOCS     := $(sort $(wildcard docs/*.md)) docs/alert-rules.yml
SHIM_MANPAGE  := docs/slurm-exporter-shim.1
SHIM_UNIT     := packaging/systemd/slurm-exporter-shim.service
SHIM_DEFAULTS := packaging/default/slurm-exporter-shim
SHIM_MIGRATE  := packaging/migrate-legacy-args
SHIM_REPLACE  := packaging/replace-file.sh
SHIM_REST_UNIT     := packaging/systemd/slurm-exporter-shim-slurmrestd.service
SHIM_REST_DEFAULTS := packaging/default/slurm-exporter-shim-slurmrestd
SHIM_REST_SCRIPTS  := packaging/run-slurmrestd packaging/enable-slurmrestd

# gzip -n: no file name or time stamp in the header, so the result is
# reproducible.
$(BUILD)/man/slurm-exporter-shim.1.gz: $(SHIM_MANPAGE)
	@mkdir -p $(dir $@)
	$(GZIP_CMD) -c $< > $@.tmp && mv -f $@.tmp $@

install: $(BIN) $(BUILD)/man/slurm-exporter-shim.1.gz
	$(INSTALL) -D -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/slurm-exporter-shim
	$(INSTALL) -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/slurm-exporter-shim
	@test -n "$(SHIM_MAPPINGS)" || echo "install: warning: no mappings/*.json to install" >&2
	@set -e; for f in $(SHIM_MAPPINGS); do \
	  echo "$(INSTALL) -D -m 0644 $$f $(DESTDIR)$(SYSCONFDIR)/slurm-exporter-shim/$${f##*/}"; \
	  $(INSTALL) -D -m 0644 $$f $(DESTDIR)$(SYSCONFDIR)/slurm-exporter-shim/$${f##*/}; \
	done
	$(INSTALL) -D -m 0644 $(SHIM_DEFAULTS) $(DESTDIR)$(SYSCONFDIR)/default/slurm-exporter-shim
	$(INSTALL) -D -m 0644 $(SHIM_DEFAULTS) $(DESTDIR)$(DATADIR)/default.dist
	$(INSTALL) -D -m 0755 $(SHIM_MIGRATE) $(DESTDIR)$(DATADIR)/migrate-legacy-args
	$(INSTALL) -D -m 0644 $(SHIM_REPLACE) $(DESTDIR)$(DATADIR)/replace-file.sh
	$(INSTALL) -D -m 0644 $(SHIM_UNIT) $(DESTDIR)$(UNITDIR)/slurm-exporter-shim.service
	$(INSTALL) -D -m 0644 $(SHIM_REST_UNIT) $(DESTDIR)$(UNITDIR)/slurm-exporter-shim-slurmrestd.service
	$(INSTALL) -D -m 0644 $(SHIM_REST_DEFAULTS) $(DESTDIR)$(SYSCONFDIR)/default/slurm-exporter-shim-slurmrestd
	@set -e; for f in $(SHIM_REST_SCRIPTS); do \
	  echo "$(INSTALL) -D -m 0755 $$f $(DESTDIR)$(DATADIR)/$${f##*/}"; \
	  $(INSTALL) -D -m 0755 $$f $(DESTDIR)$(DATADIR)/$${f##*/}; \
	done
	$(INSTALL) -D -m 0644 $(BUILD)/man/slurm-exporter-shim.1.gz $(DESTDIR)$(MANDIR)/man1/slurm-exporter-shim.1.gz
	@set -e; for f in $(SHIM_DOCS); do \
	  echo "$(INSTALL) -D -m 0644 $$f $(DESTDIR)$(DOCDIR)/$${f##*/}"; \
	  $(INSTALL) -D -m 0644 $$f $(DESTDIR)$(DOCDIR)/$${f##*/}; \
	done

# Removes what install put in place (not the directories, not local edits
# of anything but these files).
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/slurm-exporter-shim
	rm -f $(foreach f,$(SHIM_MAPPINGS),$(DESTDIR)$(SYSCONFDIR)/slurm-exporter-shim/$(notdir $(f)))
	rm -f $(DESTDIR)$(SYSCONFDIR)/default/slurm-exporter-shim
	rm -f $(DESTDIR)$(DATADIR)/default.dist $(DESTDIR)$(DATADIR)/migrate-legacy-args $(DESTDIR)$(DATADIR)/replace-file.sh
	rm -f $(DESTDIR)$(UNITDIR)/slurm-exporter-shim.service
	rm -f $(DESTDIR)$(UNITDIR)/slurm-exporter-shim-slurmrestd.service
	rm -f $(DESTDIR)$(SYSCONFDIR)/default/slurm-exporter-shim-slurmrestd
	rm -f $(foreach f,$(SHIM_REST_SCRIPTS),$(DESTDIR)$(DATADIR)/$(notdir $(f)))
	rm -f $(DESTDIR)$(MANDIR)/man1/slurm-exporter-shim.1.gz
	rm -f $(foreach f,$(SHIM_DOCS),$(DESTDIR)$(DOCDIR)/$(notdir $(f)))

.PHONY: install uninstall

.DEFAULT_GOAL := $(_shim_install_saved_goal)
