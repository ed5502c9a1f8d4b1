# Host unit tests of the cocktail policy arithmetic (kmod/cocktail_policy.h).
UNIT_BINS += $(BUILD)/unit/test_policy

$(BUILD)/unit/test_policy: tests/unit/test_policy.c tests/unit/check.h kmod/cocktail_policy.h | $(BUILD)/unit
	$(CC) $(CFLAGS) $(WFLAGS) -Ikmod -o $@ $<

# Host unit tests of the probe's sequence range set (kmod/ooo_ranges.h).
UNIT_BINS += $(BUILD)/unit/test_ooo_ranges

$(BUILD)/unit/test_ooo_ranges: tests/unit/test_ooo_ranges.c tests/unit/check.h kmod/ooo_ranges.h | $(BUILD)/unit
	$(CC) $(CFLAGS) $(WFLAGS) -Ikmod -o $@ $<

# Host unit tests of CUBIC and HyStart++ (the growth section of
# kmod/cocktail_policy.h) against tests/unit/growth_ref.h, the RFCs'
# equations in floating point (tests/unit/growth_ref.py).
UNIT_BINS += $(BUILD)/unit/test_growth

$(BUILD)/unit/test_growth: tests/unit/test_growth.c tests/unit/check.h tests/unit/growth_ref.h kmod/cocktail_policy.h | $(BUILD)/unit
	$(CC) $(CFLAGS) $(WFLAGS) -Ikmod -o $@ $< -lm
