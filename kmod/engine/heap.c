// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Binary max-heap of tenants by their scratch key. Built fresh for each
 * decision from the GPU's tenants; every chunk moved re-sifts the top, which
 * gives the O(chunks moved * log tenants) bound.
 */
#include "internal.h"

static struct gos_tenant *at(struct gos_vec *heap, u32 i)
{
	return heap->v[i];
}

static void swap(struct gos_vec *heap, u32 a, u32 b)
{
	void *tmp = heap->v[a];

	heap->v[a] = heap->v[b];
	heap->v[b] = tmp;
}

static void sift_down(struct gos_vec *heap, u32 i)
{
	for (;;) {
		u32 l = 2 * i + 1, r = l + 1, m = i;

		if (l < heap->len && at(heap, l)->key > at(heap, m)->key)
			m = l;
		if (r < heap->len && at(heap, r)->key > at(heap, m)->key)
			m = r;
		if (m == i)
			return;
		swap(heap, i, m);
		i = m;
	}
}

void gos_heap_init(struct gos_vec *heap)
{
	heap->len = 0;
}

/* Room for every tenant is reserved when tenants are created. */
void gos_heap_push(struct gos_vec *heap, struct gos_tenant *t)
{
	u32 i = heap->len;

	gos_vec_push(heap, t);
	while (i && at(heap, (i - 1) / 2)->key < at(heap, i)->key) {
		swap(heap, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

struct gos_tenant *gos_heap_top(struct gos_vec *heap)
{
	return heap->len ? at(heap, 0) : NULL;
}

void gos_heap_pop(struct gos_vec *heap)
{
	heap->v[0] = heap->v[--heap->len];
	sift_down(heap, 0);
}

void gos_heap_fix_top(struct gos_vec *heap)
{
	sift_down(heap, 0);
}
