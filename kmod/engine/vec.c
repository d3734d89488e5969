// SPDX-License-Identifier: GPL-2.0 OR MIT
#include "gos_os.h"
#include "vec.h"

int gos_vec_reserve_total(struct gos_vec *vec, u64 want)
{
	u64 cap = vec->cap ? vec->cap : 8;
	void **v;
	u32 i;

	if (want <= vec->cap)
		return 0;
	while (cap < want)
		cap *= 2;
	if (cap > 0xffffffffULL)
		return -ENOMEM;
	v = gos_os_zalloc(cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < vec->len; i++)
		v[i] = vec->v[i];
	gos_os_free(vec->v);
	vec->v = v;
	vec->cap = (u32)cap;
	return 0;
}

void gos_vec_release(struct gos_vec *vec)
{
	gos_os_free(vec->v);
	vec->v = NULL;
	vec->len = 0;
	vec->cap = 0;
}
