// SPDX-License-Identifier: GPL-2.0
/*
 * A planted warning: WARN() once at load, as a bug on any of the modules'
 * paths would.  Built and loaded only by `make vmcheck-planted`, after the
 * test has wrapped the kernel's log buffer.
 */
#include <linux/module.h>
#include <linux/bug.h>

static int __init planted_warn_init(void)
{
	WARN(1, "cocktail planted warning\n");
	return 0;
}

static void __exit planted_warn_exit(void)
{
}

module_init(planted_warn_init);
module_exit(planted_warn_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("tcp-cocktail test: a planted WARN");
