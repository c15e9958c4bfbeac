/* opreg.c: see opreg.h. */
#include "opreg.h"

#include <stdlib.h>
#include <string.h>

#include "base.h"

/* lib/opdefs.pb as bytes, generated at build time by embed.sh. */
extern const unsigned char ge_opdefs_data[];
extern const size_t ge_opdefs_size;

struct ge_oplist_index {
	const Tensorflow__OpDef **slots;   /* open addressing, power of 2 */
	size_t mask;
};

ge_oplist_index *ge_oplist_index_new(const Tensorflow__OpList *list)
{
	ge_oplist_index *x = ge_xcalloc(1, sizeof *x);
	size_t n = list ? list->n_op : 0, cap = 16;
	while (cap < n * 2)
		cap *= 2;
	x->slots = ge_xcalloc(cap, sizeof *x->slots);
	x->mask = cap - 1;
	for (size_t i = 0; i < n; i++) {
		const Tensorflow__OpDef *op = list->op[i];
		if (!op->name)
			continue;
		size_t j = ge_hash(op->name, strlen(op->name)) & x->mask;
		while (x->slots[j] && strcmp(x->slots[j]->name, op->name))
			j = (j + 1) & x->mask;
		if (!x->slots[j])
			x->slots[j] = op;
	}
	return x;
}

const Tensorflow__OpDef *ge_oplist_index_find(const ge_oplist_index *x,
					      const char *op_type)
{
	if (!x || !op_type)
		return NULL;
	size_t j = ge_hash(op_type, strlen(op_type)) & x->mask;
	for (; x->slots[j]; j = (j + 1) & x->mask)
		if (strcmp(x->slots[j]->name, op_type) == 0)
			return x->slots[j];
	return NULL;
}

void ge_oplist_index_free(ge_oplist_index *x)
{
	if (!x)
		return;
	free(x->slots);
	free(x);
}

const Tensorflow__OpDef *ge_opreg_find_in(const Tensorflow__OpList *list,
					  const char *op_type)
{
	if (!list || !op_type)
		return NULL;
	for (size_t i = 0; i < list->n_op; i++)
		if (list->op[i]->name && strcmp(list->op[i]->name, op_type) == 0)
			return list->op[i];
	return NULL;
}

/* ---- the built-in table ---- */

static Tensorflow__OpList *builtin;
static ge_oplist_index *builtin_index;
static const Tensorflow__OpList empty_list = TENSORFLOW__OP_LIST__INIT;

static void builtin_load(void)
{
	if (builtin_index)
		return;
	builtin = tensorflow__op_list__unpack(NULL, ge_opdefs_size,
					      ge_opdefs_data);
	builtin_index = ge_oplist_index_new(builtin ? builtin : &empty_list);
}

const Tensorflow__OpDef *ge_opreg_find(const char *op_type)
{
	builtin_load();
	return ge_oplist_index_find(builtin_index, op_type);
}

const Tensorflow__OpList *ge_opreg_list(void)
{
	builtin_load();
	return builtin ? builtin : &empty_list;
}

void ge_opreg_free(void)
{
	ge_oplist_index_free(builtin_index);
	builtin_index = NULL;
	if (builtin)
		tensorflow__op_list__free_unpacked(builtin, NULL);
	builtin = NULL;
}
