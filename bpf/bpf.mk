# cocktail_bpf: the cocktail congestion control as a BPF struct_ops program
# and its control tool. Included by Makefile.
#
#   make bpf     build/bpf/cocktail.bpf.o and bpf/cocktail-bpf (the object
#                is embedded in the tool through a libbpf skeleton)
#
# vmlinux.h is generated from the BTF of the kernel the modules are built
# for (bpf/vmlinux-btf explains why that one); BPF_BTF_IMAGE overrides it.
BPF_BUILD      := $(BUILD)/bpf
BPF_CLANG      ?= clang
BPFTOOL        ?= bpftool
BPF_BTF_IMAGE  ?=
BPF_TOOL       := $(TOP)/bpf/cocktail-bpf
BPF_CFLAGS     := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror \
		  -I$(BPF_BUILD) -I$(TOP)/bpf

.PHONY: bpf
bpf: $(BPF_TOOL)

$(BPF_BUILD):
	mkdir -p $@

$(BPF_BUILD)/vmlinux.h: bpf/vmlinux-btf | $(BPF_BUILD)
	bpf/vmlinux-btf $(BPF_BTF_IMAGE) >$@.tmp
	mv $@.tmp $@

$(BPF_BUILD)/cocktail.bpf.o: bpf/cocktail.bpf.c bpf/cocktail_bpf.h \
		kmod/cocktail_policy.h kmod/cocktail_state.h kmod/cocktail_core.h \
		$(BPF_BUILD)/vmlinux.h
	$(BPF_CLANG) $(BPF_CFLAGS) -c bpf/cocktail.bpf.c -o $@

$(BPF_BUILD)/cocktail.skel.h: $(BPF_BUILD)/cocktail.bpf.o
	$(BPFTOOL) gen skeleton $< name cocktail_bpf >$@.tmp
	mv $@.tmp $@

$(BPF_TOOL): bpf/cocktail-bpf.c bpf/cocktail_bpf.h kmod/cocktail_policy.h \
		kmod/cocktail_state.h \
		$(BPF_BUILD)/cocktail.skel.h
	$(CC) $(CFLAGS) $(WFLAGS) -I$(BPF_BUILD) -Ibpf -o $@ bpf/cocktail-bpf.c \
		$(shell pkg-config --cflags --libs libbpf zlib)

.PHONY: clean-bpf
clean: clean-bpf
clean-bpf:
	rm -f $(BPF_TOOL)
