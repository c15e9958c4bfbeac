/*
 * func: the function library model on small libraries built in the test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "func.h"
#include "model.h"
#include "tap.h"

int main(void)
{
	ge_graph *g = ge_graph_new();
	ok(ge_func_count(g) == 0, "a new graph has no functions");
	printf("1..%d\n", tap_n);
	ge_graph_free(g);
	return tap_failed ? 1 : 0;
}
