/*
 * t/wire.c: the protobuf wire module (lib/base/wire.c): the field numbers
 * against protobuf-c's encoding, the walk, the finders, the name peek and
 * the entry encoder, on well-formed and malformed bytes.  Every input is
 * copied into a block of its own size, so that a read past its end is an
 * error under AddressSanitizer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "base/wire.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/graph.pb-c.h"
#include "tensorflow/core/framework/node_def.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"

/* n bytes in a block of exactly n bytes (1 for none, not read) */
static uint8_t *dup_exact(const void *p, size_t n)
{
	uint8_t *d = malloc(n ? n : 1);
	if (n)
		memcpy(d, p, n);
	return d;
}

/* The number of fields a walk over [p, p + n) gives, and whether it
 * ended bad; the walk's position must stay within the bytes. */
static int walk(const void *bytes, size_t n, int *bad)
{
	uint8_t *d = dup_exact(bytes, n);
	ge_wire w = ge_wire_of(d, n);
	ge_wire_field f;
	int k = 0, inside = 1;
	while (ge_wire_next(&w, &f)) {
		k++;
		inside &= f.start >= d && f.data + f.len <= d + n &&
			  w.p == f.data + f.len;
	}
	inside &= w.p >= d && w.p <= d + n;
	if (!inside)
		k = -1;
	*bad = w.bad;
	free(d);
	return k;
}

static void test_numbers(void)
{
	Tensorflow__NodeDef nd = TENSORFLOW__NODE_DEF__INIT;
	Tensorflow__AttrValue av = TENSORFLOW__ATTR_VALUE__INIT;
	Tensorflow__NodeDef__AttrEntry ent = TENSORFLOW__NODE_DEF__ATTR_ENTRY__INIT;
	Tensorflow__NodeDef__AttrEntry *ents[1] = {&ent};
	char *inputs[2] = {"a", "^b"};
	nd.name = "n";
	nd.op = "Add";
	nd.device = "/cpu:0";
	nd.n_input = 2;
	nd.input = inputs;
	av.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
	av.type = TENSORFLOW__DATA_TYPE__DT_FLOAT;
	ent.key = "T";
	ent.value = &av;
	nd.n_attr = 1;
	nd.attr = ents;
	size_t n = tensorflow__node_def__get_packed_size(&nd);
	uint8_t *b = malloc(n);
	tensorflow__node_def__pack(&nd, b);
	ge_wire w = ge_wire_of(b, n);
	ge_wire_field f;
	int seen[8] = {0};
	while (ge_wire_next(&w, &f))
		if (f.num < 8 && f.wt == GE_WT_LEN)
			seen[f.num]++;
	ok(!w.bad && seen[GE_NODEDEF_NAME] == 1 && seen[GE_NODEDEF_OP] == 1 &&
		   seen[GE_NODEDEF_INPUT] == 2 && seen[GE_NODEDEF_DEVICE] == 1 &&
		   seen[GE_NODEDEF_ATTR] == 1,
	   "NodeDef's field numbers are protobuf-c's");
	const uint8_t *p = b, *v;
	const char *key;
	size_t kl, vl;
	ok(ge_wire_attr_next(&p, b + n, &key, &kl, &v, &vl) && kl == 1 &&
		   key[0] == 'T' && vl == 2 &&
		   v[0] == GE_TAG(GE_ATTR_TYPE, GE_WT_VARINT) &&
		   v[1] == TENSORFLOW__DATA_TYPE__DT_FLOAT,
	   "the attr entry: key T, AttrValue{type: DT_FLOAT}");
	ok(!ge_wire_attr_next(&p, b + n, &key, &kl, &v, &vl) && p == b + n,
	   "one attr entry only");
	free(b);

	Tensorflow__TensorProto tp = TENSORFLOW__TENSOR_PROTO__INIT;
	tp.dtype = TENSORFLOW__DATA_TYPE__DT_INT32;
	tp.tensor_content.len = 3;
	tp.tensor_content.data = (uint8_t *)"abc";
	tp.version_number = 7;
	n = tensorflow__tensor_proto__get_packed_size(&tp);
	b = malloc(n);
	tensorflow__tensor_proto__pack(&tp, b);
	const uint8_t *body;
	size_t bl;
	uint64_t x = 0, dt = 0;
	ok(ge_wire_find_len(b, b + n, GE_TENSOR_CONTENT, &body, &bl) == 0 &&
		   bl == 3 && !memcmp(body, "abc", 3) &&
		   ge_wire_find_varint(b, b + n, GE_TENSOR_VERSION, &x) == 0 &&
		   x == 7 &&
		   ge_wire_find_varint(b, b + n, GE_TENSOR_DTYPE, &dt) == 0 &&
		   dt == TENSORFLOW__DATA_TYPE__DT_INT32,
	   "TensorProto's field numbers are protobuf-c's");
	free(b);

	Tensorflow__GraphDef gd = TENSORFLOW__GRAPH_DEF__INIT;
	Tensorflow__NodeDef *nodes[1] = {&nd};
	nd.n_attr = 0;
	gd.n_node = 1;
	gd.node = nodes;
	n = tensorflow__graph_def__get_packed_size(&gd);
	b = malloc(n);
	tensorflow__graph_def__pack(&gd, b);
	ok(b[0] == GE_TAG_LEN(GE_GRAPHDEF_NODE), "GraphDef's node is field 1");
	free(b);
}

static void test_walk(void)
{
	int bad, k;
	/* varint 150 (two bytes), fixed64, fixed32, a string of 200 bytes
	 * (a two-byte length), field 2^29 - 1 */
	uint8_t m[300];
	size_t n = 0;
	m[n++] = GE_TAG(1, GE_WT_VARINT);
	m[n++] = 0x96;
	m[n++] = 0x01;
	m[n++] = GE_TAG(2, GE_WT_I64);
	for (int i = 0; i < 8; i++)
		m[n++] = (uint8_t)(i + 1);
	m[n++] = GE_TAG(3, GE_WT_I32);
	m[n++] = 0x78;
	m[n++] = 0x56;
	m[n++] = 0x34;
	m[n++] = 0x12;
	m[n++] = GE_TAG_LEN(4);
	m[n++] = 0xc8;
	m[n++] = 0x01;
	memset(m + n, 'x', 200);
	n += 200;
	uint8_t *p = ge_put_uvarint(m + n, GE_TAG(GE_WIRE_MAX_FIELD,
						  GE_WT_VARINT));
	*p++ = 0;
	n = (size_t)(p - m);
	uint8_t *d = dup_exact(m, n);
	ge_wire w = ge_wire_of(d, n);
	ge_wire_field f;
	int good = ge_wire_next(&w, &f) && f.num == 1 && f.wt == 0 &&
		   f.v == 150 && f.start == d;
	good &= ge_wire_next(&w, &f) && f.num == 2 && f.wt == 1 &&
		f.v == 0x0807060504030201ull && f.len == 8;
	good &= ge_wire_next(&w, &f) && f.num == 3 && f.wt == 5 &&
		f.v == 0x12345678 && f.len == 4;
	good &= ge_wire_next(&w, &f) && f.num == 4 && f.wt == 2 &&
		f.len == 200 && f.data[0] == 'x' && f.v == 200;
	good &= ge_wire_next(&w, &f) && f.num == GE_WIRE_MAX_FIELD &&
		f.v == 0;
	good &= !ge_wire_next(&w, &f) && !w.bad && w.p == d + n;
	ok(good, "each wire type, a long string, the largest field number");
	ok(ge_wire_valid(d, d + n), "ge_wire_valid on them");
	const uint8_t *q = d;
	ok(ge_wire_skip(&q, d + n) == 0 && q == d + 3, "ge_wire_skip");
	free(d);

	k = walk("", 0, &bad);
	ok(k == 0 && !bad, "no bytes: no field, not bad");
	k = walk("\x08\x01\x12\x00", 4, &bad);
	ok(k == 2 && !bad, "an empty string field");

	/* malformed: each stops, bad, within the bytes */
	static const struct {
		const char *b;
		size_t n;
		int fields; /* before the bad one */
		const char *what;
	} mal[] = {
		{"\x08", 1, 0, "a varint field without its value"},
		{"\x08\x80", 2, 0, "a truncated varint value"},
		{"\x08\x01\x80", 3, 1, "a truncated tag"},
		{"\x12\x05xx", 4, 0, "a length past the end"},
		{"\x12\x80\x80\x80\x80\x80\x80\x80\x80\x01", 10, 0,
		 "a huge length (2^63)"},
		{"\x12\xff\xff\xff\xff\x0f", 6, 0, "a length of 2^32 - 1"},
		{"\x12\x80", 2, 0, "a truncated length"},
		{"\x00\x01", 2, 0, "tag 0"},
		{"\x02\x00", 2, 0, "field 0 (tag 2)"},
		{"\x0b\x0c", 2, 0, "wire type 3 (start group)"},
		{"\x0c", 1, 0, "wire type 4 (end group)"},
		{"\x0e\x00", 2, 0, "wire type 6"},
		{"\x0f\x00", 2, 0, "wire type 7"},
		{"\x09\x01\x02", 3, 0, "a fixed64 cut short"},
		{"\x0d\x01\x02\x03", 4, 0, "a fixed32 cut short"},
		{"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01\x00", 12, 0,
		 "a tag of eleven bytes"},
		{"\x80\x80\x80\x80\x10\x00", 6, 0,
		 "field 2^29 (past the largest)"},
		{"\x08\x01\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 13, 1,
		 "a varint of eleven bytes after a good field"},
	};
	for (size_t i = 0; i < sizeof mal / sizeof *mal; i++) {
		k = walk(mal[i].b, mal[i].n, &bad);
		ok(k == mal[i].fields && bad, "malformed: %s", mal[i].what);
	}
	d = dup_exact("\x08\x01\x12\x05xx", 6);
	w = ge_wire_of(d, 6);
	ge_wire_next(&w, &f);
	ok(!ge_wire_next(&w, &f) && w.bad && w.p == d + 2 &&
		   !ge_wire_next(&w, &f) && w.p == d + 2,
	   "a walk stays at the bad field, and stays bad");
	ok(!ge_wire_valid(d, d + 6), "ge_wire_valid: no");
	q = d + 2;
	ok(ge_wire_skip(&q, d + 6) == -1 && q == d + 2,
	   "ge_wire_skip: -1, not moved");
	free(d);
}

static void test_finders(void)
{
	const uint8_t *body;
	size_t bl;
	uint64_t v;
	/* 1: varint 5; 2: "ab"; 2: "cd"; 3: varint 9 */
	uint8_t *d = dup_exact("\x08\x05\x12\x02" "ab\x12\x02" "cd\x18\x09",
			       12);
	ok(ge_wire_find_len(d, d + 12, 2, &body, &bl) == 0 && bl == 2 &&
		   body == d + 4,
	   "find_len: the first of a repeated field");
	ok(ge_wire_find_len(d, d + 12, 1, &body, &bl) == -1,
	   "find_len: a varint of that number is not it");
	ok(ge_wire_find_len(d, d + 12, 7, &body, &bl) == -1,
	   "find_len: not there");
	ok(ge_wire_find_varint(d, d + 12, 3, &v) == 0 && v == 9,
	   "find_varint");
	ok(ge_wire_find_varint(d, d + 12, 2, &v) == -1,
	   "find_varint: a string of that number is not it");
	free(d);
	d = dup_exact("\x08\x05\x12\x09" "ab", 6);
	ok(ge_wire_find_len(d, d + 6, 2, &body, &bl) == -1,
	   "find_len: a length past the end");
	ok(ge_wire_find_len(d, d + 6, 1, &body, &bl) == -1 &&
		   ge_wire_find_varint(d, d + 6, 1, &v) == 0 && v == 5,
	   "find_varint: before the bad field");
	free(d);

	char nm[8];
	d = dup_exact("\x0a\x03" "a\x01" "b\x12\x00", 7);
	ge_wire_peek_str(d, d + 7, 1, nm, sizeof nm);
	is_string("a?b", nm, "peek: the name, a control byte as '?'");
	ge_wire_peek_str(d, d + 7, 2, nm, sizeof nm);
	is_string("", nm, "peek: the bytes start with another field");
	ge_wire_peek_str(d, d + 3, 1, nm, sizeof nm);
	is_string("a", nm, "peek: truncated bytes give what there is");
	free(d);
	d = dup_exact("\x0a\x0a" "0123456789", 12);
	ge_wire_peek_str(d, d + 12, 1, nm, sizeof nm);
	is_string("0123456", nm, "peek: cut to the room");
	ge_wire_peek_str(d, d + 1, 1, nm, sizeof nm);
	is_string("", nm, "peek: no length");
	free(d);
}

static void test_entries(void)
{
	const char *key;
	size_t kl, vl;
	const uint8_t *v, *p;
	/* name, an entry, a non-map field between, a long entry, an entry
	 * of value then key, and an entry without a value */
	ge_buf b = GE_BUF_INIT;
	ge_buf_lenfield(&b, GE_NODEDEF_NAME, "n", 1);
	ge_wire_buf_entry(&b, GE_NODEDEF_ATTR, "T", 1, "\x30\x01", 2);
	ge_buf_lenfield(&b, GE_NODEDEF_DEVICE, "d", 1);
	char big[300];
	memset(big, 'v', sizeof big);
	ge_wire_buf_entry(&b, GE_NODEDEF_ATTR, "value", 5, big, sizeof big);
	size_t at = b.len;
	ge_wire_buf_entry(&b, GE_NODEDEF_ATTR, "", 0, "", 0);
	ok(b.len - at == ge_wire_entry_size(GE_NODEDEF_ATTR, 0, 0) &&
		   ge_wire_entry_size(GE_NODEDEF_ATTR, 5, 300) ==
			   1 + 2 + (2 + 5) + (1 + 2 + 300),
	   "entry size");
	ge_buf_add(&b, "\x2a\x06\x12\x01x\x0a\x01k", 8);
	ge_buf_add(&b, "\x2a\x03\x0a\x01z", 5);
	uint8_t *d = dup_exact(b.data, b.len);
	const uint8_t *end = d + b.len;
	p = d;
	int good = ge_wire_attr_next(&p, end, &key, &kl, &v, &vl) &&
		   kl == 1 && *key == 'T' && vl == 2 && v[0] == 0x30;
	good &= ge_wire_attr_next(&p, end, &key, &kl, &v, &vl) && kl == 5 &&
		!memcmp(key, "value", 5) && vl == 300 && v[299] == 'v';
	good &= ge_wire_attr_next(&p, end, &key, &kl, &v, &vl) && kl == 0 &&
		vl == 0;
	good &= ge_wire_attr_next(&p, end, &key, &kl, &v, &vl) && kl == 1 &&
		*key == 'k' && vl == 1 && *v == 'x';
	good &= ge_wire_attr_next(&p, end, &key, &kl, &v, &vl) && kl == 1 &&
		*key == 'z' && vl == 0;
	good &= !ge_wire_attr_next(&p, end, &key, &kl, &v, &vl) && p == end;
	ok(good, "attr entries: written by the encoder, read in order, "
		 "fields between skipped, missing parts empty");
	free(d);
	ge_buf_free(&b);

	/* a map of another field number (FunctionDef.ret) */
	uint8_t m[64], *e = m;
	e = ge_wire_put_entry(e, GE_FUNCDEF_RET, "out", 3, "y:0", 3);
	e = ge_wire_put_len(e, GE_FUNCDEF_NODE_DEF, "x", 1);
	d = dup_exact(m, (size_t)(e - m));
	p = d;
	ok(ge_wire_map_next(&p, d + (e - m), GE_FUNCDEF_RET, &key, &kl, &v,
			    &vl) &&
		   kl == 3 && !memcmp(key, "out", 3) && vl == 3 &&
		   !memcmp(v, "y:0", 3) &&
		   !ge_wire_map_next(&p, d + (e - m), GE_FUNCDEF_RET, &key,
				     &kl, &v, &vl),
	   "a map of field 4");
	free(d);

	/* malformed: an entry whose length runs past the end ends the walk;
	 * a malformed entry body gives what it read */
	d = dup_exact("\x2a\x09\x0a\x01k", 5);
	p = d;
	ok(!ge_wire_attr_next(&p, d + 5, &key, &kl, &v, &vl) && p == d + 5,
	   "an entry past the end: none");
	free(d);
	d = dup_exact("\x2a\x05\x0a\x01k\x12\x07", 7);
	p = d;
	ok(ge_wire_attr_next(&p, d + 7, &key, &kl, &v, &vl) && kl == 1 &&
		   *key == 'k' && vl == 0 && p == d + 7,
	   "an entry whose value runs past it: the key, an empty value");
	free(d);
	d = dup_exact("\x0a\x01n\x2b", 4);
	p = d;
	ok(!ge_wire_attr_next(&p, d + 4, &key, &kl, &v, &vl) && p == d + 4,
	   "a group tag before any entry: none");
	free(d);
}

int main(void)
{
	test_numbers();
	test_walk();
	test_finders();
	test_entries();
	return tap_done();
}
