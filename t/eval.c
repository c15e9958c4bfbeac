/*
 * eval: the constant evaluator's kernels against values worked out by hand.
 */
#include "tap.h"
int main(void)
{
	tap_plan(1);
	ok(1, "placeholder");
	return tap_done();
}
