/*
 * fuzz_pdb - libFuzzer harness for the PDB reader (lib/etl/pdb.c): MSF
 * container, stream directory, info/DBI/publics/module streams, section
 * headers, OMAP, and the RVA lookup.
 *
 * INPUT:  a .pdb file (any bytes), through pdb_open_memory().
 * CHECKS: no crash/UB/leak/hang; a message on every failure; every
 *         symbol has a name and a dense id; a lookup returns a symbol at
 *         or below the address asked for.
 */
#include "etl/pdb.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_symbols(struct pdb *p, const struct pdb_symbol *s, size_t n)
{
	size_t i, count = pdb_symbol_count(p);

	for (i = 0; i < n; i++) {
		uint32_t disp = 0;
		const struct pdb_symbol *hit;

		if (s[i].name == NULL)
			abort();
		(void)strlen(s[i].name);
		if (pdb_symbol_id(p, &s[i]) >= count)
			abort();
		if (i < 64 && s[i].rva != 0) {
			hit = pdb_lookup(p, s[i].rva, &disp);
			/* NULL is fine: data publics are not in the code index */
			if (hit != NULL && (hit->rva > s[i].rva || disp != s[i].rva - hit->rva ||
			    pdb_symbol_id(p, hit) >= count))
				abort();
			(void)pdb_lookup(p, s[i].rva + (s[i].size ? s[i].size - 1 : 1), &disp);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	void *copy = malloc(size ? size : 1);
	char err[512], key[41];
	struct pdb *p;
	const struct pdb_symbol *syms;
	const struct pdb_section *secs;
	size_t n;
	uint32_t disp;

	memcpy(copy, data, size);
	err[0] = '\0';
	p = pdb_open_memory("fuzz.pdb", copy, size, err, sizeof(err));	/* takes COPY */
	if (p == NULL) {
		if (err[0] == '\0')
			abort();
		return 0;
	}
	(void)pdb_name(p);
	pdb_key(pdb_guid(p), pdb_age(p), key);
	if (strlen(key) < 33)
		abort();
	if (pdb_load(p) != 0) {
		if (pdb_error(p) == NULL)
			abort();
		pdb_close(p);
		return 0;
	}
	(void)pdb_dbi_age(p);
	(void)pdb_machine(p);
	(void)pdb_rvas_guessed(p);
	if (pdb_damaged(p) > 0 && pdb_first_damage(p) == NULL)
		abort();
	n = pdb_sections(p, &secs);
	(void)secs;
	(void)n;
	n = pdb_publics(p, &syms);
	check_symbols(p, syms, n);
	n = pdb_procedures(p, &syms);
	check_symbols(p, syms, n);
	(void)pdb_lookup(p, 0, &disp);
	(void)pdb_lookup(p, 0xffffffffu, &disp);
	pdb_close(p);
	return 0;
}
