# oooprobed: userspace side of tcp_oooprobe (libmnl). Included by Makefile.
OOOPROBED_SRCS := daemon/oooprobed.c daemon/genl.c daemon/stats.c daemon/event.c
OOOPROBED_DEPS := $(OOOPROBED_SRCS) daemon/genl.h daemon/stats.h daemon/event.h \
		   kmod/uapi/tcp_oooprobe.h

DAEMONS += $(TOP)/daemon/oooprobed

$(TOP)/daemon/oooprobed: $(OOOPROBED_DEPS)
	$(CC) $(CFLAGS) $(WFLAGS) -Ikmod/uapi -Idaemon -o $@ $(OOOPROBED_SRCS) \
		$(shell pkg-config --cflags --libs libmnl) -lm

# Host unit test of the statistics, the event-number window and the event
# parser, built from the same sources as the daemon, so its rule sits next
# to theirs.
UNIT_BINS += $(BUILD)/unit/test_oooprobe_stats

$(BUILD)/unit/test_oooprobe_stats: tests/unit/test_oooprobe_stats.c daemon/stats.c daemon/stats.h \
		daemon/event.c daemon/event.h kmod/uapi/tcp_oooprobe.h | $(BUILD)/unit
	$(CC) $(CFLAGS) $(WFLAGS) -Ikmod/uapi -Idaemon -o $@ tests/unit/test_oooprobe_stats.c \
		daemon/stats.c daemon/event.c $(shell pkg-config --cflags --libs libmnl) -lm
