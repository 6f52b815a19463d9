/*
 * fuzz_folded - libFuzzer harness for the folded-stack line parser
 * (folded_parse in lib/evt/evt.c).
 *
 * INPUT:  any bytes, split at '\n'.
 * CHECKS: no crash/UB; a parsed line's stack lies at the start of the
 *         line, is NUL-terminated where stack_len says, and its counts
 *         are finite and non-negative.
 */
#include "evt/evt.h"
#include "fuzz.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A line folded_parse accepts has its stack at the start, cut where
 * stack_len says, and finite, non-negative counts. */
static void
one_line(char *p, size_t n)
{
	char *stack = NULL;
	size_t slen = 0;
	double c1 = -1, c2 = -1;
	int has2 = -1;

	if (folded_parse(p, n, &stack, &slen, &c1, &c2, &has2) != 0)
		return;
	if (stack != p || slen == 0 || slen >= n || stack[slen] != '\0')
		abort();
	if (!isfinite(c1) || c1 < 0 || !isfinite(c2) || c2 < 0)
		abort();
	if (has2 != 0 && has2 != 1)
		abort();
	if (!has2 && c2 != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_each_line(data, size, 0, one_line);
	return 0;
}
