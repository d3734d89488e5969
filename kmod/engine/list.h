/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Intrusive circular doubly linked list, same shape as the kernel's. */
#ifndef GOS_LIST_H
#define GOS_LIST_H

#include "gos_types.h"

struct gos_list {
	struct gos_list *next, *prev;
};

#define gos_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

static inline void gos_list_init(struct gos_list *head)
{
	head->next = head;
	head->prev = head;
}

static inline bool gos_list_empty(const struct gos_list *head)
{
	return head->next == head;
}

/* A node is linked iff it is not self-referencing; init nodes before use. */
static inline bool gos_list_linked(const struct gos_list *node)
{
	return node->next != node;
}

static inline void gos_list_add_tail(struct gos_list *node,
				     struct gos_list *head)
{
	node->prev = head->prev;
	node->next = head;
	head->prev->next = node;
	head->prev = node;
}

static inline void gos_list_del(struct gos_list *node)
{
	node->prev->next = node->next;
	node->next->prev = node->prev;
	gos_list_init(node);
}

#define gos_list_first(head, type, member) \
	gos_container_of((head)->next, type, member)
#define gos_list_last(head, type, member) \
	gos_container_of((head)->prev, type, member)

#endif /* GOS_LIST_H */
