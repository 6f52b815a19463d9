/*
 * pdbdump - print what lib/etl/pdb.c reads from a PDB, in a form easy to
 * compare with `llvm-pdbutil dump -publics -symbols` (a test tool).
 *
 * USAGE:  pdbdump [-PSHC] [-r] [-d] FILE.pdb
 *   -P  publics only     -S  procedures only    -H  header and sections only
 *   -C  section contributions only ("SC mod=1 0001:0016 size=541 ...")
 *   -D  no PDB: read decorated names from stdin, print readable ones
 *       (-x: with the x86 C rules)
 *   -d  add a column with the public's readable name (sym_demangle)
 *   -r  resolve: read RVAs (hex, one a line) from stdin, print
 *       "0xRVA<TAB>name+0xDISP" (or "0xRVA<TAB>?")
 *
 * OUTPUT:
 *   # pdb FILE guid={...} age=5 dbi_age=5 key=12DC...5 machine=0x14c ...
 *   SECTION 1 .text va=0x1000 size=0xffd flags=0x60000020
 *   S_PUB32 0001:2401 rva=0x1961 flags=function ?__scrt_initialize_type_info@@YAXXZ
 *   S_GPROC32 0001:0016 rva=0x1010 size=541 std::operator<<<std::char_traits<char> >
 * Section:offset are printed as llvm-pdbutil does (decimal, 4 digits).
 *
 * Exit: 0 ok, 1 the PDB has damaged records (skipped), 2 cannot read it.
 */
#include "base/cli.h"
#include "etl/pdb.h"
#include "etl/symbols.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(void)
{
	fprintf(stderr, "usage: pdbdump [-PSHC] [-r] [-d] FILE.pdb | pdbdump -D [-x]\n");
	exit(EXIT_FATAL);
}

static const char *kind_name(unsigned k)
{
	switch (k) {
	case PDB_S_PUB32: return "S_PUB32";
	case PDB_S_GPROC32: return "S_GPROC32";
	case PDB_S_LPROC32: return "S_LPROC32";
	case PDB_S_GPROC32_ID: return "S_GPROC32_ID";
	case PDB_S_LPROC32_ID: return "S_LPROC32_ID";
	case PDB_S_LPROC32_DPC: return "S_LPROC32_DPC";
	case PDB_S_LPROC32_DPC_ID: return "S_LPROC32_DPC_ID";
	case PDB_S_THUNK32: return "S_THUNK32";
	case PDB_S_SEPCODE: return "S_SEPCODE";
	}
	return "?";
}

/* llvm-pdbutil's spelling of S_PUB32 flags */
static void pub_flags(uint32_t f, char *out, size_t n)
{
	static const char *names[] = { "code", "function", "managed", "msil" };
	size_t i;
	out[0] = 0;
	for (i = 0; i < 4; i++)
		if (f & (1u << i))
			snprintf(out + strlen(out), n - strlen(out), "%s%s",
			    out[0] ? " | " : "", names[i]);
	if (!out[0])
		snprintf(out, n, "none");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c, only = 0, resolve = 0, demangle = 0, names = 0, x86 = 0;
	char err[600], key[41], fl[64];
	const struct pdb_symbol *syms;
	const struct pdb_section *sec;
	const uint8_t *g;
	struct pdb *p;
	size_t i, n;

	cli_init("pdbdump");
	while ((c = getopt_long(argc, argv, "PSHCrdDxh", longopts, NULL)) != -1) {
		switch (c) {
		case 'P': case 'S': case 'H': case 'C': only = c; break;
		case 'r': resolve = 1; break;
		case 'd': demangle = 1; break;
		case 'D': names = 1; break;
		case 'x': x86 = 1; break;
		case 'V': cli_version(); break;
		default: usage();
		}
	}
	if (names) {
		char line[4096];
		while (fgets(line, sizeof line, stdin)) {
			char *d;
			line[strcspn(line, "\n")] = 0;
			d = sym_demangle(line, x86);
			printf("%s\n", d ? d : line);
			free(d);
		}
		return 0;
	}
	if (optind + 1 != argc)
		usage();
	if (!(p = pdb_open(argv[optind], err, sizeof err)))
		cli_fatal("%s", err);
	if (pdb_load(p) < 0) {
		cli_warn("%s", pdb_error(p));
		pdb_close(p);
		return EXIT_FATAL;
	}
	g = pdb_guid(p);
	pdb_key(g, pdb_age(p), key);
	if (resolve) {
		char line[256];
		while (fgets(line, sizeof line, stdin)) {
			unsigned long rva = strtoul(line, NULL, 16);
			uint32_t disp;
			const struct pdb_symbol *s = pdb_lookup(p, (uint32_t)rva,
			    &disp);
			if (!s)
				printf("0x%lx\t?\n", rva);
			else
				printf("0x%lx\t%s+0x%x\n", rva, s->name, disp);
		}
		pdb_close(p);
		return 0;
	}
	printf("# pdb %s guid={%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X}"
	    " age=%u dbi_age=%u key=%s machine=0x%x publics=%zu "
	    "procedures=%zu damaged=%zu%s\n", argv[optind],
	    (unsigned)(g[0] | g[1] << 8 | g[2] << 16 | (unsigned)g[3] << 24),
	    (unsigned)(g[4] | g[5] << 8), (unsigned)(g[6] | g[7] << 8),
	    g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15],
	    pdb_age(p), pdb_dbi_age(p), key, pdb_machine(p),
	    pdb_publics(p, &syms), pdb_procedures(p, &syms), pdb_damaged(p),
	    pdb_rvas_guessed(p) ? " rvas=guessed" : "");
	n = pdb_sections(p, &sec);
	for (i = 0; i < n; i++)
		printf("SECTION %zu %s va=0x%x size=0x%x flags=0x%x\n", i + 1,
		    sec[i].name, sec[i].va, sec[i].size, sec[i].characteristics);
	if (only == 'C') {
		const struct pdb_contrib *sc;
		n = pdb_contributions(p, &sc);
		for (i = 0; i < n; i++)
			printf("SC mod=%u %04u:%04u size=%u chars=0x%x data_crc=%u "
			    "reloc_crc=%u\n", sc[i].module, sc[i].section,
			    sc[i].offset, sc[i].size, sc[i].characteristics,
			    sc[i].data_crc, sc[i].reloc_crc);
	}
	if (only != 'S' && only != 'H' && only != 'C') {
		n = pdb_publics(p, &syms);
		for (i = 0; i < n; i++) {
			pub_flags(syms[i].flags, fl, sizeof fl);
			printf("S_PUB32 %04u:%04u rva=0x%x flags=%s %s", syms[i].section,
			    syms[i].offset, syms[i].rva, fl, syms[i].name);
			if (demangle) {
				char *d = sym_demangle(syms[i].name,
				    pdb_machine(p) == 0x14c);
				printf("\t%s", d ? d : syms[i].name);
				free(d);
			}
			putchar('\n');
		}
	}
	if (only != 'P' && only != 'H' && only != 'C') {
		n = pdb_procedures(p, &syms);
		for (i = 0; i < n; i++)
			printf("%s %04u:%04u rva=0x%x size=%u %s\n",
			    kind_name(syms[i].kind), syms[i].section,
			    syms[i].offset, syms[i].rva, syms[i].size,
			    syms[i].name);
	}
	if (pdb_damaged(p)) {
		cli_warn("%zu damaged records skipped; first: %s",
		    pdb_damaged(p), pdb_first_damage(p));
		pdb_close(p);
		return EXIT_PARTIAL;
	}
	pdb_close(p);
	return 0;
}
