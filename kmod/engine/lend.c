// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Lending backoff. Memory a tenant holds beyond its share (its weighted part
 * of the capacity) exists only while others leave theirs unused: returning
 * it is a loan, and evicting it for someone else revokes the loan. A
 * neighbour that allocates and frees its share in a loop would have each
 * loan revoked at once, and the borrower would pay a round trip over the
 * host link every cycle. So a loan revoked within lend_backoff_ns of being
 * made holds back the next one: the borrower is returned memory only up to
 * its share for lend_backoff_ns, doubling with each quick revocation up to
 * lend_backoff_max_ns. A loan that lasts relaxes it again, halving the
 * backoff for each lend_backoff_ns it held, so a lender that went quiet
 * costs little work-conservation. Bookkeeping is O(1) per order.
 */
#include "internal.h"

bool gos_lend_waiting(const struct gos_tenant *t, u64 now)
{
	return now < t->loan.lend_after && t->share < t->entitlement;
}

/* The most a tenant may hold once its returns land. */
u64 gos_lend_ceiling(const struct gos_tenant *t, u64 now)
{
	return gos_lend_waiting(t, now) ? t->share : t->entitlement;
}

/* After a return order for t: beyond its share, that return is a loan. */
void gos_lend_returned(struct gos_engine *eng, struct gos_tenant *t, u64 now)
{
	if (!eng->cfg.lend_backoff_ns || t->resident - t->evicting <= t->share)
		return;
	t->loan.open = true;
	t->loan.at = now;
}

static void relax(struct gos_engine *eng, struct gos_loan *l, u64 held)
{
	u64 base = eng->cfg.lend_backoff_ns;

	while (held >= base && l->backoff_ns) {
		l->backoff_ns >>= 1;
		held -= base;
	}
	if (l->backoff_ns < base)
		l->backoff_ns = 0;
}

/*
 * Before an eviction from t for another tenant or for capacity: if t
 * borrows, its open loan ends here, quickly (back off) or not (relax).
 */
void gos_lend_revoked(struct gos_engine *eng, struct gos_tenant *t)
{
	struct gos_loan *l = &t->loan;
	u64 max = eng->cfg.lend_backoff_max_ns, now, held;

	if (!l->open)
		return;
	l->open = false;
	gos_entitle(eng, t->gpu);
	if (t->resident - t->evicting <= t->share)
		return;		/* it gave the loan back itself */
	now = gos_now(eng);
	held = now - l->at;
	if (held >= eng->cfg.lend_backoff_ns) {
		relax(eng, l, held);
		return;
	}
	if (!l->backoff_ns)
		l->backoff_ns = eng->cfg.lend_backoff_ns;
	else
		l->backoff_ns = l->backoff_ns > max / 2 ? max
							: l->backoff_ns * 2;
	l->lend_after = now + l->backoff_ns;
}
