/*
 * symbols.h - function names for addresses in Windows images, from the
 * PDBs a user copied along with the trace.  No Microsoft code, no
 * network: remote symbol servers in a symbol path are reported, never
 * contacted.
 *
 * Where a PDB is looked for, for an image whose DbgID_RSDS event gave
 * PDB name N (file name part), GUID and age (key K = GUID as 32 hex
 * digits + age in hex, as symbol servers use):
 *   1. every directory D given with sym_add_path() (--symbols) and in
 *      _NT_SYMBOL_PATH (sym_add_env()), in order: D/N/K/N (symbol-server
 *      layout, also D/N[0..1]/N/K/N when D/index2.txt exists), then D/N;
 *      a D that is a file named N is tried itself;
 *   2. the trace's directory, the same way, and its symbols/ subdirectory
 *      (an unpacked PerfView .etl.zip);
 *   3. inside a PerfView .etl.zip: its symbols\N\K\N members (or any
 *      symbols\...\N).
 * Names are matched case-insensitively, as on Windows.  A PDB whose GUID
 * and age do not match the image's is never used.  Each PDB is opened
 * and parsed once; lookups are binary searches.
 */
#ifndef ETLKIT_SYMBOLS_H
#define ETLKIT_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct symctx;
struct sym_image;

struct symctx *sym_new(void);
void sym_free(struct symctx *c);
/*
 * Adds a symbol path: ';'-separated directories and _NT_SYMBOL_PATH
 * elements (srv*CACHE*URL, cache*DIR, symsrv*DLL*CACHE*URL).  Local
 * directories are searched; URLs are noted for the report only.
 */
void sym_add_path(struct symctx *c, const char *spec);
/*
 * The first local directory added so far that does not exist or cannot
 * be read (errno says why), or NULL.  For the --symbols paths, before
 * sym_add_env(): a directory the user named must be there, while the
 * environment's may be another machine's.
 */
const char *sym_unreadable_dir(const struct symctx *c);
/* Adds $_NT_SYMBOL_PATH and $_NT_ALT_SYMBOL_PATH when set. */
void sym_add_env(struct symctx *c);
/*
 * The trace being decoded: its directory is searched, and when it is a
 * zip (PerfView .etl.zip) its symbols\ members are used.
 */
void sym_add_trace(struct symctx *c, const char *trace_path);

/*
 * The symbol source for one image, found (and cached) by PDB identity.
 * IMAGE is the image's file name or path (for the report), PDB the name
 * from DbgID_RSDS (may be a full Windows path), GUID in Windows byte
 * order (all zero = unknown).  Never NULL.
 */
struct sym_image *sym_image(struct symctx *c, const char *image,
    const char *pdb, const uint8_t guid[16], uint32_t age);
/*
 * The readable name of the function holding RVA ("RtlUserThreadStart",
 * "std::vector<int,std::allocator<int> >::push_back"), or NULL when the
 * image has no usable PDB or no symbol precedes RVA.  *DISP (if not
 * NULL) gets the offset into the function.  The string lives as long as
 * the context.
 */
const char *sym_lookup(struct sym_image *im, uint32_t rva, uint32_t *disp);

/*
 * Adapter for lib/etl/images.h's etl_symbol_fn: pass the symctx as CTX to
 * images_set_symbols(m, sym_etl_hook, ctx).
 */
const char *sym_etl_hook(void *ctx, void **cache, const char *image_path, const char *pdb_name,
    const uint8_t guid[16], uint32_t age, uint64_t rva);
/* lib/etl/images.h's etl_symcount_fn: more lookups of a known image (kept frame texts). */
void sym_etl_count(void *ctx, void *cache, uint64_t lookups, uint64_t resolved);

/* What happened to each image, for reports and tests. */
enum sym_status { SYM_OK, SYM_NO_ID, SYM_NOT_FOUND, SYM_MISMATCH, SYM_DAMAGED };
struct sym_image_info {
	const char *image;	/* as first given */
	const char *pdb;	/* PDB name from the trace */
	const char *key;	/* GUID+age key, "" when unknown */
	const char *path;	/* the PDB used, or NULL */
	enum sym_status status;
	const char *detail;	/* why not / what was found instead */
	uint64_t lookups, resolved;
};
size_t sym_image_count(const struct symctx *c);
void sym_image_info(const struct symctx *c, size_t i, struct sym_image_info *out);
const char *sym_status_name(enum sym_status s);
/*
 * Writes one line per image that stayed unresolved (and, with ALL, per
 * resolved image too) to F, each prefixed "PREFIX: symbols: ", plus a
 * line naming remote symbol servers that were not contacted.
 */
void sym_report(const struct symctx *c, FILE *f, const char *prefix, int all);
/* Only the line per remote symbol server not contacted (etl2evt without -v). */
void sym_report_remote(const struct symctx *c, FILE *f, const char *prefix);
/*
 * One line to F, "PREFIX: symbols: N images resolved, N PDBs not found,
 * N PDBs mismatched" (and damaged PDBs, images without a PDB identity,
 * when there are any), over the images the #symbols lines list.
 */
void sym_summary(const struct symctx *c, FILE *f, const char *prefix);

/*
 * Readable form of a decorated public name: MSVC C++ names
 * ("?push_back@?$vector@H@std@@QEAAXAEBH@Z" ->
 * "std::vector<int>::push_back", the name only, as PDB procedure
 * symbols spell it) and, with X86, C decorations ("_f", "_f@8", "@f@8"
 * -> "f").  Returns a malloc'd string, or NULL when NAME is not
 * decorated or uses a form this small demangler does not know (then
 * keep the raw name).
 */
char *sym_demangle(const char *name, int x86);

#endif
