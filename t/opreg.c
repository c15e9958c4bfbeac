/* t/opreg.c: the built-in op registry (lib/base/opreg.c) and OpList indexes. */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "base/opreg.h"
#include "base/textpb.h"

static const char *attr_default_s(const Tensorflow__OpDef *d, const char *attr)
{
	static char buf[64];
	for (size_t i = 0; d && i < d->n_attr; i++) {
		const Tensorflow__AttrValue *v = d->attr[i]->default_value;
		if (strcmp(d->attr[i]->name, attr) || !v ||
		    v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_S ||
		    v->s.len >= sizeof buf)
			continue;
		memcpy(buf, v->s.data, v->s.len);
		buf[v->s.len] = 0;
		return buf;
	}
	return NULL;
}

/* The embedded table's bytes (lib/opdefs_data.c). */
extern const unsigned char ge_opdefs_data[];
extern const size_t ge_opdefs_size;

/* Each OpDef decoded on demand is the one a whole-list decode gives. */
static void same_as_whole_decode(void)
{
	Tensorflow__OpList *w = tensorflow__op_list__unpack(NULL, ge_opdefs_size,
							    ge_opdefs_data);
	ok(w != NULL, "the embedded table decodes whole");
	if (!w)
		return;
	size_t differ = 0;
	for (size_t i = 0; i < w->n_op; i++) {
		const Tensorflow__OpDef *a = w->op[i];
		const Tensorflow__OpDef *b = ge_opreg_find(a->name);
		size_t la = tensorflow__op_def__get_packed_size(a);
		size_t lb = b ? tensorflow__op_def__get_packed_size(b) : 0;
		uint8_t *pa = malloc(la + 1), *pb = malloc(lb + 1);
		tensorflow__op_def__pack(a, pa);
		if (b)
			tensorflow__op_def__pack(b, pb);
		differ += la != lb || memcmp(pa, pb, la);
		free(pa);
		free(pb);
	}
	is_int(0, (long long)differ,
	       "every OpDef found by name is the whole decode's OpDef");
	tensorflow__op_list__free_unpacked(w, NULL);
}

int main(void)
{
	/* before anything decodes the table: the walk decodes what find
	 * already decoded once, and the same pointers */
	const Tensorflow__OpDef *first = ge_opreg_find("MatMul");
	const Tensorflow__OpList *early = ge_opreg_list();
	int same = 0;
	for (size_t i = 0; i < early->n_op; i++)
		same += early->op[i] == first;
	ok(first && same == 1, "the list holds the OpDef decoded before it");
	same_as_whole_decode();
	ge_opreg_free();

	const Tensorflow__OpDef *d = ge_opreg_find("Conv2D");
	ok(d && !strcmp(d->name, "Conv2D"), "Conv2D is built in");
	is_int(1, d ? (long long)d->n_output_arg : -1, "Conv2D has 1 output");
	is_int(2, d ? (long long)d->n_input_arg : -1, "Conv2D has 2 inputs");
	is_string("NHWC", attr_default_s(d, "data_format"),
		  "Conv2D data_format defaults to NHWC");

	d = ge_opreg_find("Split");
	ok(d && d->n_output_arg == 1 &&
	   !strcmp(d->output_arg[0]->number_attr, "num_split") &&
	   !strcmp(d->output_arg[0]->type_attr, "T"),
	   "Split: one output arg, a list of num_split tensors of type T");

	d = ge_opreg_find("Unique");
	ok(d && d->n_output_arg == 2 && !strcmp(d->output_arg[0]->name, "y") &&
	   !strcmp(d->output_arg[1]->name, "idx"), "Unique has 2 outputs");

	d = ge_opreg_find("Const");
	ok(d && d->n_input_arg == 0 && d->n_output_arg == 1, "Const");
	d = ge_opreg_find("Assign");
	ok(d && d->n_input_arg == 2 && d->input_arg[0]->is_ref,
	   "Assign's first input is a ref");

	ok(ge_opreg_find("NoSuchOp") == NULL, "an unknown op is NULL");
	ok(ge_opreg_find("conv2d") == NULL, "names are case-sensitive");
	ok(ge_opreg_find("") == NULL && ge_opreg_find(NULL) == NULL,
	   "empty and NULL names are NULL");

	const Tensorflow__OpList *all = ge_opreg_list();
	is_int(1563, (long long)all->n_op, "the table holds 1563 ops");
	int prose = 0, found = 0;
	for (size_t i = 0; i < all->n_op; i++) {
		const Tensorflow__OpDef *op = all->op[i];
		prose += op->summary[0] || op->description[0];
		for (size_t j = 0; j < op->n_attr; j++)
			prose += op->attr[j]->description[0] != 0;
		found += ge_opreg_find(op->name) == op;
	}
	is_int(0, prose, "descriptions and summaries are stripped");
	is_int((long long)all->n_op, found, "every op is found by its name");

	ge_opreg_free();
	d = ge_opreg_find("Unique");
	ok(d && d->n_output_arg == 2, "the table reloads after ge_opreg_free");

	/* A container's own OpList. */
	ProtobufCMessage *m = NULL;
	const char *text =
		"op { name: \"MyOp\" output_arg { name: \"a\" type: DT_FLOAT } }\n"
		"op { name: \"Other\" }\n"
		"op { name: \"MyOp\" }\n";
	int rc = ge_textpb_parse(text, strlen(text),
				 &tensorflow__op_list__descriptor, "list", &m,
				 NULL);
	ok(rc == GE_OK, "a stripped_op_list-like OpList parses");
	const Tensorflow__OpList *l = (const Tensorflow__OpList *)m;
	if (l) {
		const Tensorflow__OpDef *a = ge_opreg_find_in(l, "MyOp");
		ok(a == l->op[0], "find_in: the first OpDef of that name");
		ok(ge_opreg_find_in(l, "Conv2D") == NULL, "find_in: not there");
		ge_oplist_index *x = ge_oplist_index_new(l);
		ok(ge_oplist_index_find(x, "MyOp") == l->op[0] &&
		   ge_oplist_index_find(x, "Other") == l->op[1],
		   "index: same answers as find_in");
		ok(ge_oplist_index_find(x, "Nope") == NULL, "index: not there");
		ge_oplist_index_free(x);
		x = ge_oplist_index_new(NULL);
		ok(ge_oplist_index_find(x, "MyOp") == NULL, "index of no list");
		ge_oplist_index_free(x);
		protobuf_c_message_free_unpacked(m, NULL);
	} else {
		tap_skip(5, "no OpList");
	}
	ok(ge_opreg_find_in(NULL, "MyOp") == NULL, "find_in: NULL list");
	ge_opreg_free();
	ge_opreg_free();
	return tap_done();
}
