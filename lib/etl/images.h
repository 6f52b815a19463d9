/*
 * images.h - the trace's process model: processes, threads, loaded
 * images and JIT-compiled .NET methods, each with the time range in
 * which it existed, and address → "module!0xRVA" / "module!Method"
 * resolution for the right process at the right time.
 *
 * Filled during etl2evt's pre-pass (any order), then images_finish()
 * sorts everything; lookups are binary searches, whose answers (and the
 * texts of frames and whole stacks) are kept in fixed-size tables, each
 * with the times it holds for.
 */
#ifndef ETLKIT_IMAGES_H
#define ETLKIT_IMAGES_H

#include <stddef.h>
#include <stdint.h>

#define IMG_KERNEL_PID 0xfffffffeu	/* kernel-mode images live here */
#define TS_NONE 0			/* "since before the trace" */
#define TS_END UINT64_MAX		/* "until after the trace" */

/*
 * Symbol lookup hook (e.g. lib/etl/symbols.c reading PDBs): image path (NT
 * or DOS form) or file name, PDB identity from DbgID_RSDS (GUID in
 * Windows byte order, all zero when unknown), RVA → function name or
 * NULL.  The returned string must stay valid until the next call.
 * CACHE is the image's own slot, NULL at first, where the hook may keep
 * what it found for this image (its PDB) so that later frames of the same
 * image skip the search.
 */
typedef const char *(*etl_symbol_fn)(void *ctx, void **cache, const char *image_path,
    const char *pdb_name, const uint8_t guid[16], uint32_t age, uint64_t rva);
/*
 * Counts LOOKUPS more lookups of the image whose slot is CACHE (set by
 * an earlier etl_symbol_fn call), RESOLVED of them named, without looking
 * them up: for callers that keep the frame texts they made (their counts
 * stay what the lookups would have made them).
 */
typedef void (*etl_symcount_fn)(void *ctx, void *cache, uint64_t lookups, uint64_t resolved);

struct images;

enum { PROC_START, PROC_DCSTART, PROC_END, PROC_DCEND };

struct images *images_new(unsigned pointer_size);
void images_free(struct images *m);

void images_process(struct images *m, uint32_t pid, uint64_t ts, int how, const char *name,
    const char *cmdline);
void images_thread(struct images *m, uint32_t tid, uint32_t pid, uint64_t ts, int how);
void images_thread_name(struct images *m, uint32_t tid, const char *name);
/* Before images_finish(): the process of the last thread record for TID, or -1. */
int64_t images_thread_pid_early(const struct images *m, uint32_t tid);
void images_image(struct images *m, uint32_t pid, uint64_t base, uint64_t size, uint64_t ts,
    int how, const char *path);
void images_image_id(struct images *m, uint32_t pid, uint64_t base, const char *orig_name);
void images_dbgid(struct images *m, uint32_t pid, uint64_t base, const uint8_t guid[16],
    uint32_t age, const char *pdb);
void images_clr_module(struct images *m, uint32_t pid, uint64_t module_id, const char *il_path);
void images_method(struct images *m, uint32_t pid, uint64_t start, uint32_t size,
    uint64_t module_id, const char *name);
void images_volume(struct images *m, const char *nt_prefix, const char *dos_prefix);
void images_finish(struct images *m);

/* Process image name of PID at TS ("?" if unknown; "Idle" for 0). */
const char *images_process_name(const struct images *m, uint32_t pid, uint64_t ts);
/* The same escaped for the process column (kept: every line has one), its length in *LEN. */
const char *images_process_text(const struct images *m, uint32_t pid, uint64_t ts, size_t *len);
/* Process of thread TID at TS, or -1. */
int64_t images_thread_pid(const struct images *m, uint32_t tid, uint64_t ts);
const char *images_thread_name_of(const struct images *m, uint32_t tid);

int images_is_kernel(const struct images *m, uint64_t addr);
/* how many of F[0..N) are kernel addresses */
size_t images_count_kernel(const struct images *m, const uint64_t *f, size_t n);

enum { FRAME_FULL_PATHS = 1, FRAME_ADDRS = 2 };
/*
 * Writes the frame text for ADDR in process PID at TS into OUT (not
 * escaped, NUL-terminated, at most CAP bytes): "module!0xRVA",
 * "module!Name", "?!?" or "?!0xADDR".  Returns the length.  MODNAME,
 * when not NULL, gets the module's file name (or "?"); RESOLVED, when
 * not NULL, whether the symbol hook named the function.
 */
size_t images_frame(const struct images *m, uint32_t pid, uint64_t addr, uint64_t ts,
    int flags, char *out, size_t cap, const char **modname, int *resolved);
struct evtw_line;
/*
 * The stack column's text of a stack, FRAMES[0..N) innermost first: root
 * first, each frame's images_frame() text (made in a buffer of 2048
 * bytes) escaped for the column, ';' between; *LEN bytes at the pointer
 * returned.  Each frame of an image counts one lookup with the symbol
 * hook, as images_frame() does.  The texts of recent stacks are kept,
 * each with the times it holds for (most lines repeat a stack seen
 * before): a kept text is returned where it is, valid until the next
 * call; any other is made at the end of L (appended to it).
 */
const char *images_stack_text(struct images *m, uint32_t pid, const uint64_t *frames, size_t n,
    uint64_t ts, int flags, struct evtw_line *l, size_t *len);
/*
 * Appends the text of frame ADDR (what images_frame() writes) to L,
 * escaped as an attribute's value; with MODKEY, then "<TAB>MODKEY=" and
 * the module's name (images_frame()'s MODNAME), escaped.  Both kept
 * escaped, as the stack column's frames are: a DPC line names its
 * routine and module, and the same few routines run all day.
 */
void images_frame_attr(struct images *m, uint32_t pid, uint64_t addr, uint64_t ts, int flags,
    struct evtw_line *l, const char *modkey);
void images_set_symbols(struct images *m, etl_symbol_fn fn, etl_symcount_fn count, void *ctx);
/* NT path → DOS path when a volume mapping is known (into OUT). */
const char *images_dos_path(const struct images *m, const char *nt, char *out, size_t cap);

#endif
