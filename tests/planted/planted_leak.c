// SPDX-License-Identifier: GPL-2.0
/*
 * A planted leak: one object of its own slab cache is allocated at load
 * and never freed, so destroying the cache at unload leaves an object
 * behind.  SLUB then reports "Objects remaining in cocktail_planted_leak
 * on __kmem_cache_shutdown()" and kmem_cache_destroy() warns, which is
 * what a leak of the probe's flows or ranges (each from a cache of its
 * own) looks like.  A second leak is for kmemleak on the debug kernel: a
 * kmalloc() object whose only pointer is dropped at load (on a kernel
 * without kmemleak it just stays allocated in the throw-away VM).  Built
 * and loaded only by `make vmcheck-planted` and `make vmcheck-debug`.
 */
#include <linux/module.h>
#include <linux/slab.h>

static struct kmem_cache *planted_cache;
static void *planted_obj;

/*
 * A constructor keeps the cache from being merged with another of the
 * same size (an alias's destroy only drops a reference and reports
 * nothing), as the probe's caches are kept apart.
 */
static void planted_ctor(void *obj)
{
}

#define PLANTED_KMALLOC 128	/* bytes of the kmemleak object */

static int __init planted_leak_init(void)
{
	u8 *lost = kmalloc(PLANTED_KMALLOC, GFP_KERNEL);

	/* the planted kmemleak bug: the object's only pointer goes away */
	if (lost)
		WRITE_ONCE(lost[0], 0x5a);
	planted_cache = kmem_cache_create("cocktail_planted_leak", 64, 0, 0,
					  planted_ctor);
	if (!planted_cache)
		return -ENOMEM;
	planted_obj = kmem_cache_alloc(planted_cache, GFP_KERNEL);
	if (!planted_obj) {
		kmem_cache_destroy(planted_cache);
		return -ENOMEM;
	}
	return 0;
}

static void __exit planted_leak_exit(void)
{
	/* the planted bug: planted_obj is not freed */
	kmem_cache_destroy(planted_cache);
}

module_init(planted_leak_init);
module_exit(planted_leak_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("tcp-cocktail test: a planted slab leak");
