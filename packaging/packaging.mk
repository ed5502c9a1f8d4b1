# packaging/packaging.mk: install, DKMS, Debian packages, module signing and
# builds against other kernels. Included by the top-level Makefile, which
# provides TOP, KDIR, KVER, PREFIX, DESTDIR, BUILD and PYTHON.
#
#   make install [DESTDIR=] [PREFIX=/usr/local] [INSTALL_MOD_DIR=extra] [NOBUILD=1]
#   make install-boot       install + /etc/modules-load.d and /etc/modprobe.d
#   make uninstall          remove exactly what install put there (manifest)
#   make dkms-install       register, build and install via DKMS (alias: dkms)
#   make dkms-remove        remove every DKMS build of this version + its source
#   make deb                build/deb/tcp-cocktail-{dkms,tools,bpf}_*.deb
#   make sign KEY=k.pem CERT=c.pem [SIGN_MODULES="a.ko b.ko"]
#   make compat-check       build the modules against every header tree found
#   make pkgcheck           the slow packaging tests (DKMS, deb, compat)
#   make vm-install-check   install/modprobe/uninstall for real in the VM

INSTALL_MOD_DIR ?= extra
PKG_NAME        := tcp-cocktail
PKG_VERSION      = $(shell $(TOP)/packaging/version)
DKMS_SRC_ROOT   ?= /usr/src
DKMS_SRC         = $(DESTDIR)$(DKMS_SRC_ROOT)/$(PKG_NAME)-$(PKG_VERSION)
PKG_ENV          = TOP=$(TOP) DESTDIR=$(DESTDIR) PREFIX=$(PREFIX) KVER=$(KVER) \
		   INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) DEPMOD=$(DEPMOD) FORCE=$(FORCE)
DEPMOD          ?= auto
FORCE           ?= 0

.PHONY: install install-boot uninstall dkms dkms-install dkms-remove \
	dkms-source deb sign compat-check compat-headers pkgcheck vm-install-check

# NOBUILD=1: install what is already built (the VM suite uses it: the
# modules are built on the host before the VM boots).
INSTALL_DEPS := $(if $(NOBUILD),,modules daemon bpf)

install: $(INSTALL_DEPS)
	$(PKG_ENV) packaging/install-files install

install-boot: $(INSTALL_DEPS)
	$(PKG_ENV) packaging/install-files install --boot

uninstall:
	$(PKG_ENV) packaging/install-files uninstall

# The source tree DKMS builds from: Kbuild, kmod/ sources and dkms.conf with
# the version filled in (the probe's lines only when its source exists).
dkms-source:
	@test -n "$(PKG_VERSION)"
	TOP=$(TOP) packaging/dkms-source "$(DKMS_SRC)" "$(PKG_VERSION)"

dkms-install: dkms-source
	dkms status -m $(PKG_NAME) -v $(PKG_VERSION) | grep -q . || \
		dkms add -m $(PKG_NAME) -v $(PKG_VERSION)
	dkms build --force -m $(PKG_NAME) -v $(PKG_VERSION) -k $(KVER) --kernelsourcedir $(KDIR)
	dkms install --force -m $(PKG_NAME) -v $(PKG_VERSION) -k $(KVER) --kernelsourcedir $(KDIR)
	modinfo -k $(KVER) -F filename tcp_cocktail

dkms: dkms-install

dkms-remove:
	@if dkms status -m $(PKG_NAME) -v $(PKG_VERSION) | grep -q .; then \
		echo "dkms remove -m $(PKG_NAME) -v $(PKG_VERSION) --all"; \
		dkms remove -m $(PKG_NAME) -v $(PKG_VERSION) --all; \
	else \
		echo "dkms-remove: $(PKG_NAME)/$(PKG_VERSION) is not registered with DKMS"; \
	fi
	rm -rf "$(DKMS_SRC)"

deb:
	TOP=$(TOP) BUILD=$(BUILD) PKG_VERSION=$(PKG_VERSION) packaging/build-deb

# Sign modules for Secure Boot / module.sig_enforce with the kernel's sign-file.
SIGN_FILE    ?= $(KDIR)/scripts/sign-file
SIGN_HASH    ?= sha256
SIGN_MODULES ?=
sign: $(if $(SIGN_MODULES),,modules)
	@test -n "$(KEY)" -a -n "$(CERT)" || \
		{ echo "sign: usage: make sign KEY=signing_key.pem CERT=signing_cert.pem" >&2; exit 2; }
	@test -r "$(KEY)" || { echo "sign: cannot read KEY=$(KEY)" >&2; exit 2; }
	@test -r "$(CERT)" || { echo "sign: cannot read CERT=$(CERT)" >&2; exit 2; }
	@test -x "$(SIGN_FILE)" || { echo "sign: $(SIGN_FILE) not found (KDIR=$(KDIR))" >&2; exit 2; }
	@set -e; mods="$(or $(SIGN_MODULES),$(wildcard kmod/*.ko))"; \
	test -n "$$mods" || { echo "sign: no modules to sign" >&2; exit 2; }; \
	for m in $$mods; do \
		echo "sign-file $(SIGN_HASH) $(KEY) $(CERT) $$m"; \
		"$(SIGN_FILE)" $(SIGN_HASH) "$(KEY)" "$(CERT)" "$$m"; \
		echo "  signer: $$(modinfo -F signer "$$m")"; \
	done

compat-check:
	TOP=$(TOP) BUILD=$(BUILD) packaging/compat-check $(COMPAT_KDIRS)

# Header trees of the other Debian 12 kernels, unpacked under .cache/kernels
# (never installed under /usr/src: that would change dev/kdir's choice).
compat-headers:
	packaging/fetch-headers

pkgcheck: compat-headers
	$(PYTHON) -m pytest -q tests/packaging

# make install / modprobe / sysctl autoload / modules-load.d / uninstall for
# real inside the VM (one boot of its own: depmod there takes minutes).
vm-install-check: deps-if-missing all
	dev/vm-run tests/vm/run tests/vm-install
