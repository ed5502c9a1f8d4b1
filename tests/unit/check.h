/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host unit tests' checks: CHECK_EQ(got, want) and CHECK(cond) count a
 * pass or print the failed expression with its file and line; a test's
 * main() ends with CHECK_SUMMARY(), which prints "N passed, N failed" (the
 * line make unit and CI read) and returns the exit status.
 */
#ifndef TESTS_UNIT_CHECK_H
#define TESTS_UNIT_CHECK_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

static unsigned int passed, failed;

#define CHECK_EQ(got, want) check_eq((uint64_t)(got), (uint64_t)(want), \
				     #got, __FILE__, __LINE__)
#define CHECK(cond) CHECK_EQ(!!(cond), 1)

static void check_eq(uint64_t got, uint64_t want, const char *expr,
		     const char *file, int line)
{
	if (got == want) {
		passed++;
		return;
	}
	failed++;
	printf("FAIL %s:%d: %s = %" PRIu64 ", want %" PRIu64 "\n",
	       file, line, expr, got, want);
}

#define CHECK_SUMMARY() ({					\
	printf("%u passed, %u failed\n", passed, failed);	\
	failed ? 1 : 0;						\
})

#endif
