# Host unit tests of the cocktail policy arithmetic (kmod/cocktail_policy.h).
UNIT_BINS += $(BUILD)/unit/test_policy

$(BUILD)/unit/test_policy: tests/unit/test_policy.c kmod/cocktail_policy.h | $(BUILD)/unit
	$(CC) $(CFLAGS) $(WFLAGS) -Ikmod -o $@ $<
