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

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	char *p, *end, *nl;

	memcpy(buf, data, size);
	buf[size] = '\0';
	p = buf;
	end = buf + size;
	while (p < end) {
		char *stack = NULL;
		size_t n, slen = 0;
		double c1 = -1, c2 = -1;
		int has2 = -1;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		*nl = '\0';
		n = (size_t)(nl - p);
		if (folded_parse(p, n, &stack, &slen, &c1, &c2, &has2) == 0) {
			if (stack != p || slen == 0 || slen >= n || stack[slen] != '\0')
				abort();
			if (!isfinite(c1) || c1 < 0 || !isfinite(c2) || c2 < 0)
				abort();
			if (has2 != 0 && has2 != 1)
				abort();
			if (!has2 && c2 != 0)
				abort();
		}
		p = nl + 1;
	}
	free(buf);
	return 0;
}
