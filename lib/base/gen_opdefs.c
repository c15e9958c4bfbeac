/*
 * gen_opdefs: turns TensorFlow's op registry (ops.pbtxt, a text
 * tensorflow.OpList) into the binary lib/opdefs.pb that is built into
 * libgerewrite as the table behind ge_opreg_find.  Not part of a normal
 * build's work: `make regen-opdefs` runs it by hand when the registry is
 * refreshed, and the result is kept in the source tree.
 *
 *   gen_opdefs INPUT.pbtxt OUTPUT.pb
 *
 * Everything about an op is kept (arguments, attrs, defaults, allowed
 * values, flags, deprecation) except prose: the summary and description of
 * each OpDef and the description of each ArgDef and AttrDef are emptied.
 * They are most of the file's size, and the graph model needs only the
 * signatures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/textpb.h"
#include "tensorflow/core/framework/op_def.pb-c.h"

/* Replaces a string member by the shared empty string that protobuf-c's
 * initializers use, which free_unpacked knows not to free. */
static void clear_string(char **s)
{
	if (*s != protobuf_c_empty_string) {
		free(*s);
		*s = (char *)protobuf_c_empty_string;
	}
}

static void strip_args(Tensorflow__OpDef__ArgDef **args, size_t n)
{
	for (size_t i = 0; i < n; i++)
		clear_string(&args[i]->description);
}

int main(int argc, char **argv)
{
	ge_error err;
	uint8_t *text;
	size_t len;
	if (argc != 3) {
		fprintf(stderr, "usage: gen_opdefs INPUT.pbtxt OUTPUT.pb\n");
		return 2;
	}
	if (ge_file_read(argv[1], &text, &len, &err)) {
		fprintf(stderr, "gen_opdefs: %s\n", err.msg);
		return 2;
	}
	ProtobufCMessage *m;
	int rc = ge_textpb_parse((const char *)text, len,
				 &tensorflow__op_list__descriptor, argv[1], &m,
				 &err);
	free(text);
	if (rc) {
		fprintf(stderr, "gen_opdefs: %s\n", err.msg);
		return 1;
	}
	Tensorflow__OpList *list = (Tensorflow__OpList *)m;
	for (size_t i = 0; i < list->n_op; i++) {
		Tensorflow__OpDef *op = list->op[i];
		clear_string(&op->summary);
		clear_string(&op->description);
		strip_args(op->input_arg, op->n_input_arg);
		strip_args(op->output_arg, op->n_output_arg);
		for (size_t j = 0; j < op->n_attr; j++)
			clear_string(&op->attr[j]->description);
	}
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *out = ge_xmalloc(n);
	protobuf_c_message_pack(m, out);
	rc = ge_file_write_atomic(argv[2], out, n, &err);
	if (rc)
		fprintf(stderr, "gen_opdefs: %s\n", err.msg);
	else
		printf("gen_opdefs: %zu ops, %zu bytes -> %s\n", list->n_op, n,
		       argv[2]);
	free(out);
	protobuf_c_message_free_unpacked(m, NULL);
	return rc ? 1 : 0;
}
