/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Growable array of pointers. Reserve first, so later pushes cannot fail. */
#ifndef GOS_VEC_H
#define GOS_VEC_H

#include "gos_types.h"

struct gos_vec {
	void **v;
	u32 len, cap;
};

/* Makes room for total items in all. */
int gos_vec_reserve_total(struct gos_vec *vec, u64 total);

static inline int gos_vec_reserve(struct gos_vec *vec, u32 extra)
{
	return gos_vec_reserve_total(vec, (u64)vec->len + extra);
}

/* Caller has reserved room. */
static inline void gos_vec_push(struct gos_vec *vec, void *item)
{
	vec->v[vec->len++] = item;
}

void gos_vec_release(struct gos_vec *vec);

#endif /* GOS_VEC_H */
