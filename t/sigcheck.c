/*
 * sigcheck.c: reads a saved_model.pb with protobuf-c's generated code
 * alone (a whole unpack, none of gerewrite's loader) and prints its
 * interface twice, as TensorFlow Serving and tf.saved_model.load see it:
 *
 *   sig NAME in:KEY=TENSOR,... out:KEY=TENSOR,...   (SignatureDefs)
 *   obj NAME fn:FUNCTION args:KEY,... outs:KEY,...  (root.signatures)
 *
 * then checks that they agree: every SignatureDef (but
 * __saved_model_init_op) has an object of that name whose argument
 * keywords are its input keys, whose concrete function's output
 * signature has its output keys, and whose function is in the library;
 * and no object lacks a SignatureDef.  Exit 0 when they agree, 1 with a
 * line "mismatch: ..." when not, 2 when the file does not read.
 * A helper of t/signature-corpus.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/protobuf/saved_model.pb-c.h"

typedef Tensorflow__SavedObjectGraph OG;

static Tensorflow__SavedConcreteFunction *cf_of(OG *og, const char *name)
{
	for (size_t i = 0; i < og->n_concrete_functions; i++)
		if (!strcmp(og->concrete_functions[i]->key, name))
			return og->concrete_functions[i]->value;
	return NULL;
}

static int in_library(Tensorflow__MetaGraphDef *mg, const char *name)
{
	Tensorflow__FunctionDefLibrary *l = mg->graph_def->library;
	for (size_t i = 0; l && i < l->n_function; i++)
		if (!strcmp(l->function[i]->signature->name, name))
			return 1;
	return 0;
}

static int has_word(char **v, size_t n, const char *w)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], w))
			return 1;
	return 0;
}

static Tensorflow__DictValue *outs_of(Tensorflow__SavedConcreteFunction *c)
{
	Tensorflow__StructuredValue *v = c ? c->output_signature : NULL;
	return v && v->kind_case == TENSORFLOW__STRUCTURED_VALUE__KIND_DICT_VALUE
		       ? v->dict_value
		       : NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	FILE *f = fopen(argv[1], "rb");
	if (!f)
		return 2;
	size_t cap = 1 << 20, n = 0, r;
	unsigned char *buf = malloc(cap);
	while ((r = fread(buf + n, 1, cap - n, f)) > 0)
		if ((n += r) == cap)
			buf = realloc(buf, cap *= 2);
	fclose(f);
	Tensorflow__SavedModel *sm = tensorflow__saved_model__unpack(NULL, n, buf);
	if (!sm || !sm->n_meta_graphs)
		return 2;
	Tensorflow__MetaGraphDef *mg = sm->meta_graphs[0];
	int bad = 0;
	for (size_t i = 0; i < mg->n_signature_def; i++) {
		Tensorflow__SignatureDef *d = mg->signature_def[i]->value;
		printf("sig %s in:", mg->signature_def[i]->key);
		for (size_t k = 0; k < d->n_inputs; k++)
			printf("%s%s=%s", k ? "," : "", d->inputs[k]->key,
			       d->inputs[k]->value->name);
		printf(" out:");
		for (size_t k = 0; k < d->n_outputs; k++)
			printf("%s%s=%s", k ? "," : "", d->outputs[k]->key,
			       d->outputs[k]->value->name);
		printf("\n");
	}
	OG *og = mg->object_graph_def;
	if (!og || !og->n_nodes)
		return 0;
	Tensorflow__SavedObject *root = og->nodes[0], *map = NULL;
	for (size_t i = 0; i < root->n_children; i++)
		if (!strcmp(root->children[i]->local_name, "signatures"))
			map = og->nodes[root->children[i]->node_id];
	for (size_t i = 0; map && i < map->n_children; i++) {
		const char *name = map->children[i]->local_name;
		Tensorflow__SavedObject *o = og->nodes[map->children[i]->node_id];
		if (o->kind_case !=
		    TENSORFLOW__SAVED_OBJECT__KIND_BARE_CONCRETE_FUNCTION) {
			printf("mismatch: object %s is no concrete function\n",
			       name);
			bad = 1;
			continue;
		}
		Tensorflow__SavedBareConcreteFunction *b =
			o->bare_concrete_function;
		Tensorflow__DictValue *outs =
			outs_of(cf_of(og, b->concrete_function_name));
		printf("obj %s fn:%s args:", name, b->concrete_function_name);
		for (size_t k = 0; k < b->n_argument_keywords; k++)
			printf("%s%s", k ? "," : "", b->argument_keywords[k]);
		printf(" outs:");
		for (size_t k = 0; outs && k < outs->n_fields; k++)
			printf("%s%s", k ? "," : "", outs->fields[k]->key);
		printf("\n");
		if (!in_library(mg, b->concrete_function_name)) {
			printf("mismatch: %s: function %s not in the library\n",
			       name, b->concrete_function_name);
			bad = 1;
		}
		Tensorflow__SignatureDef *d = NULL;
		for (size_t s = 0; s < mg->n_signature_def; s++)
			if (!strcmp(mg->signature_def[s]->key, name))
				d = mg->signature_def[s]->value;
		if (!d) {
			printf("mismatch: object %s has no SignatureDef\n", name);
			bad = 1;
			continue;
		}
		if (d->n_inputs != b->n_argument_keywords ||
		    !outs || d->n_outputs != outs->n_fields) {
			printf("mismatch: %s: key counts differ\n", name);
			bad = 1;
			continue;
		}
		for (size_t k = 0; k < d->n_inputs; k++)
			if (!has_word(b->argument_keywords,
				      b->n_argument_keywords,
				      d->inputs[k]->key)) {
				printf("mismatch: %s: input %s\n", name,
				       d->inputs[k]->key);
				bad = 1;
			}
		for (size_t k = 0; k < d->n_outputs; k++) {
			int hit = 0;
			for (size_t j = 0; j < outs->n_fields; j++)
				hit |= !strcmp(outs->fields[j]->key,
					       d->outputs[k]->key);
			if (!hit) {
				printf("mismatch: %s: output %s\n", name,
				       d->outputs[k]->key);
				bad = 1;
			}
		}
	}
	for (size_t s = 0; map && s < mg->n_signature_def; s++) {
		const char *k = mg->signature_def[s]->key;
		int hit = !strcmp(k, "__saved_model_init_op");
		for (size_t i = 0; i < map->n_children; i++)
			hit |= !strcmp(map->children[i]->local_name, k);
		if (!hit) {
			printf("mismatch: SignatureDef %s has no object\n", k);
			bad = 1;
		}
	}
	tensorflow__saved_model__free_unpacked(sm, NULL);
	free(buf);
	return bad;
}
