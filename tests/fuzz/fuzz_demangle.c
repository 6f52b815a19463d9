/*
 * fuzz_demangle - libFuzzer harness for the MSVC name demangler
 * (sym_demangle in lib/etl/demangle.c, for decorated PDB public names) and
 * the _NT_SYMBOL_PATH parser (sym_add_path in lib/etl/symbols.c).
 *
 * INPUT:  line 1 a decorated name (any bytes); the rest a symbol path.
 * CHECKS: no crash/UB/leak/hang (deep template nesting, back-references);
 *         a demangled name is non-empty and invents no control bytes; the
 *         same input gives the same answer twice.
 */
#include "etl/symbols.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(const char *name, int x86)
{
	char *a = sym_demangle(name, x86), *b;
	const unsigned char *p;

	if (a == NULL)
		return;
	if (*a == '\0')
		abort();
	/* no control byte that was not in the name (they pass through) */
	for (p = (const unsigned char *)a; *p; p++)
		if (*p < 0x20 && strchr(name, *p) == NULL)
			abort();
	b = sym_demangle(name, x86);
	if (b == NULL || strcmp(a, b) != 0)
		abort();
	free(a);
	free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *nl;

	memcpy(buf, data, size);
	buf[size] = '\0';
	nl = memchr(buf, '\n', size);
	if (nl != NULL)
		*nl = '\0';
	check(buf, 0);
	check(buf, 1);
	if (nl != NULL) {
		struct symctx *c = sym_new();

		sym_add_path(c, nl + 1);
		sym_free(c);
	}
	free(buf);
	return 0;
}
