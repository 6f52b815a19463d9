/*
 * pdb.h - a reader for Microsoft PDB files (MSF 7.00), enough to turn
 * an RVA inside an image into the name of the function that holds it.
 *
 * What is read: the MSF container and its stream directory, the PDB
 * info stream (GUID, age), the DBI stream (module infos, section map,
 * optional debug header -> section headers, OMAP), the publics stream
 * (S_PUB32 via its address map into the symbol record stream) and the
 * procedure symbols in each module stream (S_GPROC32, S_LPROC32, their
 * _ID and _DPC variants, S_THUNK32, S_SEPCODE), with their sizes.
 *
 * The file is memory-mapped (lib/base/mapfile: a file cut shorter by
 * another process while in use gives one line naming it and exit 2, not
 * a SIGBUS; a directory or FIFO is refused, never opened, so never waited
 * for).  pdb_open() reads only the header, the
 * directory and the info stream; symbols are parsed on first use, once.
 * Everything read from the file is bounds-checked: a damaged file gives
 * an error naming the file and the byte offset, never a crash.  The old
 * MSF 2.00 format (VC++ 6 era) is recognised and rejected by name.
 */
#ifndef ETLKIT_PDB_H
#define ETLKIT_PDB_H

#include <stddef.h>
#include <stdint.h>

/* CodeView symbol record kinds this reader uses. */
#define PDB_S_PUB32		0x110e
#define PDB_S_GPROC32		0x1110
#define PDB_S_LPROC32		0x110f
#define PDB_S_GPROC32_ID	0x1147
#define PDB_S_LPROC32_ID	0x1146
#define PDB_S_LPROC32_DPC	0x1155
#define PDB_S_LPROC32_DPC_ID	0x1156
#define PDB_S_THUNK32		0x1102
#define PDB_S_SEPCODE		0x1132

/* S_PUB32 flags (CV_PUBSYMFLAGS). */
#define PDB_PUB_CODE		1
#define PDB_PUB_FUNCTION	2
#define PDB_PUB_MANAGED		4
#define PDB_PUB_MSIL		8

struct pdb;

struct pdb_symbol {
	uint32_t rva;		/* image-relative address (0 if unmappable) */
	uint32_t size;		/* code size; for publics the size of the
				   section contribution starting there, or 0 */
	uint32_t offset;	/* offset inside the section */
	uint16_t section;	/* 1-based section number */
	uint16_t kind;		/* PDB_S_* record kind */
	uint32_t flags;		/* S_PUB32 flags; 0 for others */
	const char *name;	/* NUL-terminated, lives as long as the pdb */
};

struct pdb_section {
	char name[9];
	uint32_t va;		/* virtual address (RVA) */
	uint32_t size;		/* virtual size */
	uint32_t characteristics;
};

/*
 * Opens PATH (memory-mapped).  On failure returns NULL and writes a
 * one-line message ("FILE: offset N: ...") into ERR.
 */
struct pdb *pdb_open(const char *path, char *err, size_t errlen);
/*
 * Same for a PDB already in memory (e.g. extracted from a zip).  NAME is
 * used in messages.  The pdb takes ownership of DATA (malloc'd) and frees
 * it in pdb_close(), also on failure.
 */
struct pdb *pdb_open_memory(const char *name, void *data, size_t len,
    char *err, size_t errlen);
/* Same for an open descriptor (mapped; FD may be closed afterwards). */
struct pdb *pdb_open_fd(const char *name, int fd, char *err, size_t errlen);
void pdb_close(struct pdb *p);

const char *pdb_name(const struct pdb *p);
/* The GUID as stored (Data1..3 little-endian, then 8 bytes). */
const uint8_t *pdb_guid(const struct pdb *p);
/* Age from the PDB info stream; the DBI stream's age after pdb_load(). */
uint32_t pdb_age(const struct pdb *p);
uint32_t pdb_dbi_age(struct pdb *p);
/* Symbol-server key: GUID as 32 upper-case hex digits + age in hex. */
void pdb_key(const uint8_t guid[16], uint32_t age, char out[41]);

/*
 * Parses the DBI, publics and module streams and builds the sorted
 * index.  Called by the functions below on first use; returns 0, or -1
 * with the message in pdb_error().  Damage inside one module stream or
 * one record is skipped and counted (pdb_damaged()), not fatal.
 */
int pdb_load(struct pdb *p);
const char *pdb_error(const struct pdb *p);
/* Records skipped as damaged; the first such problem in pdb_first_damage(). */
size_t pdb_damaged(const struct pdb *p);
const char *pdb_first_damage(const struct pdb *p);
/* IMAGE_FILE_MACHINE from the DBI stream (0x14c x86, 0x8664 x64). */
unsigned pdb_machine(struct pdb *p);

/* A DBI section contribution: which module (object file) put which bytes where. */
struct pdb_contrib {
	uint16_t section;	/* 1-based */
	uint16_t module;	/* index into the DBI module list */
	uint32_t offset, size;
	uint32_t characteristics;
	uint32_t data_crc, reloc_crc;
};

/* Section contributions in file order; NULL/0 if the PDB has none. */
size_t pdb_contributions(struct pdb *p, const struct pdb_contrib **out);

/* Section headers (from the PDB, or the layout guessed for NGEN PDBs). */
size_t pdb_sections(struct pdb *p, const struct pdb_section **out);
/* 1 when the PDB had no section headers and the RVAs are a guess. */
int pdb_rvas_guessed(struct pdb *p);

/* All publics / all procedures+thunks+sepcode, in file order. */
size_t pdb_publics(struct pdb *p, const struct pdb_symbol **out);
size_t pdb_procedures(struct pdb *p, const struct pdb_symbol **out);

/*
 * The function containing RVA: a procedure whose [rva, rva+size) holds
 * it, else the nearest preceding procedure or public in the same
 * section.  *DISP gets RVA minus the symbol's start.  NULL when nothing
 * precedes RVA in its section.  Binary search; no allocation.
 */
const struct pdb_symbol *pdb_lookup(struct pdb *p, uint32_t rva, uint32_t *disp);
/* Every symbol has a dense id in [0, pdb_symbol_count()) for caches. */
size_t pdb_symbol_count(struct pdb *p);
size_t pdb_symbol_id(const struct pdb *p, const struct pdb_symbol *s);

#endif
