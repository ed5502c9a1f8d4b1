// SPDX-License-Identifier: GPL-2.0
/*
 * A planted buffer overrun: one byte is written just past an object of
 * the module's own slab cache, then the object is freed.  With the test
 * VM's slub_debug=FZPU the byte lands in the object's right redzone and
 * SLUB reports "Right Redzone overwritten" when the object is freed (and
 * taints the kernel with B); a KASAN kernel reports the write itself.
 * Without either the byte lands in the next, unused object of this
 * private cache and nothing is reported, so the run's failure shows the
 * checker is on.  Built and loaded only by `make vmcheck-planted`.
 */
#include <linux/module.h>
#include <linux/slab.h>

#define PLANTED_SIZE 64		/* bytes: the object the overrun follows */

static struct kmem_cache *planted_cache;
/* the index written; a variable so the compiler cannot see the overrun */
static unsigned int planted_index = PLANTED_SIZE;
module_param(planted_index, uint, 0444);
MODULE_PARM_DESC(planted_index, "byte written past the object's start");

/* keeps the cache from being merged with another of the same size */
static void planted_ctor(void *obj)
{
}

static int __init planted_redzone_init(void)
{
	u8 *obj;

	planted_cache = kmem_cache_create("cocktail_planted_redzone",
					  PLANTED_SIZE, 0, 0, planted_ctor);
	if (!planted_cache)
		return -ENOMEM;
	obj = kmem_cache_alloc(planted_cache, GFP_KERNEL);
	if (!obj) {
		kmem_cache_destroy(planted_cache);
		return -ENOMEM;
	}
	/* the planted bug: one byte past the end */
	WRITE_ONCE(obj[planted_index], 0x5a);
	kmem_cache_free(planted_cache, obj);
	return 0;
}

static void __exit planted_redzone_exit(void)
{
	kmem_cache_destroy(planted_cache);
}

module_init(planted_redzone_init);
module_exit(planted_redzone_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("tcp-cocktail test: a planted slab redzone overrun");
