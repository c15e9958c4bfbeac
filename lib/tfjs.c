/* tfjs.c: TensorFlow.js graph models (model.json). */
#include "meta.h"

int ge_tfjs_parse(const uint8_t *data, size_t len, const char *name,
		  ge_graph **out, ge_error *err)
{
	(void)data;
	(void)len;
	(void)out;
	return ge_err(err, GE_EFORMAT,
		      "%s: TensorFlow.js model.json is not readable yet", name);
}
