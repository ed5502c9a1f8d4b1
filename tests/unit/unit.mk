# Host unit tests of the cocktail policy arithmetic (kmod/cocktail_policy.h).
UNIT_BINS += $(BUILD)/unit/test_policy

$(BUILD)/unit/test_policy: tests/unit/test_policy.c tests/unit/check.h kmod/cocktail_policy.h | $(BUILD)/unit
	$(CC) $(CFLAGS) $(WFLAGS) -Ikmod -o $@ $<

# Host unit tests of the probe's sequence range set (kmod/ooo_ranges.h).
UNIT_BINS += $(BUILD)/unit/test_ooo_ranges

$(BUILD)/unit/test_ooo_ranges: tests/unit/test_ooo_ranges.c tests/unit/check.h kmod/ooo_ranges.h | $(BUILD)/unit
	$(CC) $(CFLAGS) $(WFLAGS) -Ikmod -o $@ $<
