# tcp-cocktail top-level Makefile. `make help` lists the targets.
#
#   make            modules + daemon + the BPF build (bpf/)
#   make check      host unit tests + packaging tests + every VM suite (one VM boot),
#                   the install suite, the module's suites on 6.12 and the
#                   planted bugs the checks must catch (and, when a debug
#                   kernel is cached, every VM suite on it: make vmcheck-debug)
#   make demo       the main job: the default restart against every baseline
#
# KDIR picks the kernel build tree (default: the headers of the test VM's
# kernel); W=1 works as in Kbuild.

SHELL    := /bin/bash
# bpftool, modprobe, ip, tc and dkms live in /usr/sbin and /sbin, which a
# non-root user's PATH on Debian (and a CI runner's) may lack.
export PATH := $(PATH):/usr/local/sbin:/usr/sbin:/sbin
TOP      := $(CURDIR)
KDIR     ?= $(shell $(TOP)/dev/kdir)
KVER     := $(shell $(TOP)/dev/kver $(KDIR) 2>/dev/null)
PYTHON   := $(TOP)/.venv/bin/python
BUILD    := $(TOP)/build
CC       ?= cc
CFLAGS   ?= -O2 -g
WFLAGS   := -Wall -Wextra -Werror=implicit-function-declaration
PREFIX   ?= /usr/local
DESTDIR  ?=
export KDIR KVER

.PHONY: all modules daemon unit vmcheck vmcheck-parity vmcheck-kernel vmcheck-planted \
	vmcheck-debug vmcheck-debug-if-cached check \
	demo clean deps deps-if-missing help

all: modules daemon bpf

help:
	@sed -n 's/^#   //p' Makefile

modules:
	$(MAKE) -C $(KDIR) M=$(TOP) modules

# Makefile fragments next to what they build add to these variables and targets:
#   DAEMONS     userspace programs built by `make daemon`
#   UNIT_BINS   host C unit-test binaries run by `make unit`
#   install/uninstall/dkms/deb/...  packaging/packaging.mk
#   bench, bench-quick               bench/bench.mk
-include daemon/daemon.mk
-include tests/unit/unit.mk
-include packaging/packaging.mk
-include bpf/bpf.mk
-include bench/bench.mk

daemon: $(DAEMONS)

$(BUILD)/unit:
	mkdir -p $@

# Host unit tests: C tests first (each prints its own "N passed, N failed"),
# then the Python tests under tests/unit with pytest (the daemon is built
# first: the packaging tests verify its unit file, whose ExecStart must exist).
unit: deps-if-missing $(UNIT_BINS) daemon
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done
	$(PYTHON) -m pytest -q tests/unit

# Every VM suite in one boot; results land in the checkout.
# VM_TESTS narrows the run, e.g. make vmcheck VM_TESTS=tests/vm/test_cocktail_module.py
VM_TESTS ?=
vmcheck: deps-if-missing all
	dev/vm-run tests/vm/run $(VM_TESTS)

# The wire suite with every test on both builds: make check's run leaves
# the tests of the logic the builds share (marked core_on_module and
# ssai_on_module in tests/vm/test_cocktail_wire.py) to the module, so that
# make check stays within CI's time on a slow 2-core host; this is the full
# comparison, about 10 minutes more under TCG.
vmcheck-parity: deps-if-missing all
	dev/vm-run env COCKTAIL_PARITY=1 tests/vm/run \
		$(or $(VM_TESTS),tests/vm/test_cocktail_wire.py)

# The same VM suites for the cocktail module on the newest kernel series
# Debian 12 offers (6.12: SO_MAX_PACING_RATE is written without the socket
# lock there), with the modules built against its headers; dev/vm-kernel
# installs its image when missing. The wire cases run on both builds there
# too: the same BPF object, built against 6.1's BTF, registers on 6.12.
VM_KERNEL_TESTS ?= tests/vm/test_cocktail_module.py \
	tests/vm/test_cocktail_wire.py::test_iw \
	tests/vm/test_cocktail_wire.py::test_pace_rate \
	tests/vm/test_cocktail_wire.py::test_pace_end_leaves_application_cap \
	tests/vm/test_cocktail_bpf.py::test_parameters_as_the_module \
	tests/vm/test_cocktail_bpf.py::test_load_errors_are_one_sentence \
	tests/vm/test_cocktail_bpf.py::test_verifier_headroom
vmcheck-kernel: deps-if-missing bpf
	dev/vm-kernel --series 6.12 $(VM_KERNEL_TESTS)

# The kernel log and skip checks must catch planted bugs: throw-away
# modules (tests/planted) leak a slab object, overrun one (slub_debug's
# redzone) and WARN after the log buffer wrapped, and a test skips; the VM
# run must fail each for its reason, which tests/planted/verify.py checks
# in the run's JUnit XML.
vmcheck-planted: deps-if-missing
	$(MAKE) -C $(KDIR) M=$(TOP)/tests/planted modules
	rm -f $(BUILD)/vm/planted.xml
	-dev/vm-run tests/vm/run tests/planted --junitxml=$(BUILD)/vm/planted.xml
	$(PYTHON) tests/planted/verify.py $(BUILD)/vm/planted.xml

# Every VM suite on the debug kernel (dev/debug-kernel builds it from
# Debian's 6.1 source with KASAN, kmemleak, lockdep and UBSAN, about half an
# hour on 2 cores, cached in .cache/debug-kernel), a kmemleak scan at the
# end of the run, then the planted bugs, which KASAN and kmemleak must
# report too. `make check` runs it only when a cached build exists and KVM
# works.
VM_DEBUG_TESTS ?=
vmcheck-debug: deps-if-missing all
	dev/debug-kernel
	dev/vm-kernel --debug $(VM_DEBUG_TESTS)
	rm -f $(BUILD)/vm/planted-debug.xml
	-dev/vm-kernel --debug tests/planted --junitxml=$(BUILD)/vm/planted-debug.xml
	$(PYTHON) tests/planted/verify.py --debug $(BUILD)/vm/planted-debug.xml

# Under TCG the debug kernel runs the suites about 5x slower than the stock
# one (hours for all of them), so make check runs them only with KVM.
vmcheck-debug-if-cached:
	@if ! dev/debug-kernel --cached >/dev/null; then \
		echo "make check: no cached debug kernel, vmcheck-debug not run" \
			"(dev/debug-kernel builds one, about half an hour on 2 cores)"; \
	elif [[ "$$(cat .cache/kvm-$(KVER) 2>/dev/null)" != yes ]]; then \
		echo "make check: no usable KVM, vmcheck-debug not run (under" \
			"TCG it takes hours: run make vmcheck-debug on its own)"; \
	else \
		$(MAKE) vmcheck-debug; \
	fi

# The slow packaging tests (DKMS cycle, deb + lintian + dpkg -i, builds
# against every Debian 12 kernel header set) run here too, before the VM;
# the install suite (make install, modprobe, modules-load.d, uninstall) gets
# a VM boot of its own after the others.
check: unit pkgcheck vmcheck vm-install-check vmcheck-kernel vmcheck-planted \
	vmcheck-debug-if-cached

demo: deps-if-missing all
	bench/run demo

deps:
	dev/deps

deps-if-missing:
	@dev/deps --check || dev/deps

clean:
	-$(MAKE) -C $(KDIR) M=$(TOP) clean
	-$(MAKE) -C $(KDIR) M=$(TOP)/tests/planted clean
	rm -rf $(BUILD) $(DAEMONS)
