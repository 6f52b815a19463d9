/*
 * stacks.c - frame interning, PerfView grouping/folding, the call tree,
 * Fold% and ByName.  See stacks.h for the order of operations.
 *
 * Speed: every distinct frame is transformed once (its group, and the
 * ExcPats/FoldPats/IncPats verdict on its post-group name, are cached),
 * and every distinct (root frames, raw stack) pair is transformed once:
 * a repeated stack costs one hash and one memcmp of its text.  Folded
 * input is read on every core (read_pieces, the pipeline after it).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/hash.h"
#include "base/intern.h"
#include "base/strbuf.h"
#include "evt/evt.h"
#include "stacks/pattern.h"
#include "stacks/stacks.h"

/*
 * The stack cache (frame ids per distinct text, its table) stops taking
 * new texts at this size; later new stacks are transformed each time
 * they come.  32 MB caches 170,000 stacks of 40 frames; the first come
 * are cached, and hot stacks come early.
 */
#define RAW_CACHE_MAX_BYTES ((size_t)32 << 20)
#define MAX_DEPTH_WARN 1000000

/* saturating: hostile inputs must not overflow the sums (UB) */
static inline int64_t
sadd(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return a > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* ------------------------------------------------------------------ */
/* the state                                                           */

struct groupent {
	struct pattern pat;
	char *repl;		/* NULL: no arrow, the name is $& */
	int entry;		/* => */
};

/* per interned name: its group (as a raw frame) and pattern verdicts (as a post-group name) */
struct finfo {
	uint32_t gname;		/* identity after grouping (non-entry) */
	uint32_t egroup;	/* entry group G, or STK_NONE */
	uint32_t ename;		/* "G <<entry>>" */
	uint32_t kname;		/* name + "_[k]", or STK_NONE */
	uint64_t incmask;
	uint8_t gdone, pdone, exc, fold;
	uint8_t outplain;	/* out_name is the name itself (known after its first use) */
};

/*
 * A distinct stack text, kept as its interned frames: the frame names
 * are compared with the text on lookup (see text_is).  From evt input,
 * whose stacks are few and repeated line after line, the text itself is
 * kept too, while the cache's bytes allow: one memcmp, not a compare
 * per frame.
 */
struct textent {
	uint64_t hash;
	uint32_t ids;		/* where its frame ids start in S->pool */
	uint32_t nids;
	uint32_t textat;	/* where its text starts in S->text... */
	uint32_t textlen;	/* ...and its length; STK_NONE: not kept */
	uint32_t result;	/* without root or kernel frames (folded input): the leaf */
	uint8_t dropped;	/* ...or why it was dropped */
	uint8_t done;		/* result and dropped are known */
};

/* a node's first/last inclusive event in ms; NAN if unknown */
struct nodetime {
	double first, last;
};

/* what Fold% moved into a node's exclusive */
struct nodefold {
	int64_t fold, fold_count;
};

/* a distinct (root frames, stack text) pair and where it landed */
struct rawent {
	uint64_t hash;
	uint32_t textid;
	uint32_t result;	/* leaf node, or STK_NONE + reason */
	uint8_t dropped;	/* 1 ExcPats, 2 IncPats */
	uint8_t nprefix;
	int32_t kframes;
	uint32_t prefix[4];
};

/*
 * The ids of an array's entries by hash: open addressing, linear
 * probing, STK_NONE a free slot.
 */
struct idtab {
	uint32_t *slot;
	uint32_t mask;		/* slots - 1 */
};

/*
 * Line tails.  What a Sample line of evt comes to depends only on its
 * bytes after the time column, less its ip= (which nothing here reads),
 * and on the header (scenario, pointer size: the root frames); and a
 * trace's samples repeat a few thousand such tails, the Idle process's
 * above all (one ip and stack per CPU).  A tail seen before is found by
 * its hash and bytes, and its outcome replayed: counted as Idle, or its
 * cached stack text added as stk_add adds it.  Everything else (the
 * kind, the time column) is still checked on every line, so a bad line
 * is named as before.  Bounded: TAIL_MAX_BYTES of tails, then new tails
 * are parsed each time; and off until the next header when most tails
 * are new (samples of busy code, each with its own stack).  Most
 * samples repeat the one before on their CPU (an idle CPU's above all):
 * that tail is compared first, before the tail is hashed.
 */
#define TAIL_MAX_BYTES ((size_t)4 << 20)
#define TAIL_PROBE 65536	/* lookups between checks of the hit rate */
#define TAIL_CPUS 4096		/* CPUs whose last tail is kept */

struct tailent {
	uint64_t hash;
	uint32_t at, len, head;	/* its key in tails.bytes: HEAD bytes before the ip=, the rest after */
	uint32_t textid;	/* the stack's cached text (not idle) */
	uint64_t ht;		/* the hash of that text */
	int64_t metric, count;	/* as stk_add gets them; idle: the metric Idle counts */
	int64_t elided;		/* frames evt_stack_cap cut */
	double dur;
	int kframes;		/* after the cut */
	uint32_t prefix[4];
	uint8_t nprefix, idle;
};

struct tails {
	struct tailent *ent;
	uint32_t n, cap;
	struct idtab tab;
	char *bytes;
	size_t nbytes, capbytes;
	int off;		/* most tails were new: not looked up until the next header */
	uint32_t last[TAIL_CPUS];	/* per CPU its last tail; STK_NONE none */
	uint32_t lookups, hits;	/* since the last check */
	/* the line being parsed, whose outcome becomes an entry (pending), and its CPU */
	int pending, cpu;
	struct tailent cur;
};

/*
 * The nodes by (parent, frame): a slot is the node id in its low half
 * and the high half of the key's hash above it, so a probe reads no
 * node unless the hashes agree (the tree has a million nodes on big
 * inputs, and a node read is a cache miss).  0 is a free slot (node 0,
 * ROOT, is never looked up).
 */
struct nodetab {
	uint64_t *slot;
	uint32_t mask;
};

struct stk {
	struct stk_config cfg;
	/* patterns */
	struct groupent *groups;
	int ngroups;
	struct patlist fold, inc, exc;
	uint64_t incall;
	/* frames */
	struct intern names;	/* frame id -> name */
	struct finfo *fi;
	char **outname;		/* folded-output spelling when it differs from the name (made on need) */
	uint32_t nframes, capframes;	/* frames with fi (all names), room in fi and outname */
	/* nodes */
	struct stk_node *node;
	uint32_t nnodes, capnodes;
	struct nodetab ntab;	/* nodes by (parent, frame) */
	int64_t **hist;		/* per node exclusive When histogram (cfg.when) */
	struct nodetime *times;	/* per node first/last, once a sample has a time */
	struct nodefold *nfold;	/* per node what Fold% moved into it (after Fold%) */
	/* raw stack cache */
	uint32_t *pool;		/* frame ids of the cached texts */
	size_t npool, cappool;
	struct textent *txt;
	uint32_t ntxt, captxt;
	struct idtab ttab;	/* txt by text */
	struct rawent *raw;
	uint32_t nraw, capraw;
	struct idtab rtab;	/* raw by (root frames, text) */
	struct tails tails;	/* Sample lines' outcomes by their tail (see struct tails) */
	/* scratch */
	uint32_t *out, *outeg;
	uint8_t *outk;
	uint32_t *rawids;
	size_t capout;
	char *tmp;
	size_t captmp;
	char *stkbuf;		/* a stack with a DPC/ISR routine appended */
	size_t capstk;
	char *text;		/* the stack texts the cache keeps (struct textent) */
	size_t ntext, captext;
	char *deepbuf;		/* a stack cut to EVT_MAX_STACK_FRAMES */
	size_t capdeep;
	struct strbuf ttbuf;	/* --thread-time: a stack with its pseudo-frames */
	/* input */
	int format;		/* 0 unknown, 1 evt, 2 folded */
	int is_folded_input;
	char **kinds;
	size_t *kindlen;	/* strlen of each: most kinds a line has differ in length */
	int nkinds, allkinds;
	char *hdr;		/* copy of the last #evt header's key=value text */
	struct evt_header header;
	double sample_ms;	/* the header's sample_interval_ms, 0 if unknown (When for samples) */
	uint32_t scenario;	/* frame id or STK_NONE */
	int ptr32;
	/* When */
	double w_start, w_width;	/* bucket width in ms */
	int w_fixed, w_seen;
	int64_t root_when[STK_WHEN_BUCKETS];
	struct stk_stats st;
	int finished;
	uint32_t broken;
	const char *curfile;
	struct foldcache *fc;	/* folded input's reader thread's cache (read_folded) */
	int threads;		/* the file being read is read with threads (read_threads) */
};

/* ------------------------------------------------------------------ */
/* configuration                                                       */

void
stk_config_init(struct stk_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->roots = STK_ROOTS_NONE;
	cfg->unit = STK_UNIT_US;
}

void
stk_append(char **dst, const char *s)
{
	size_t a = *dst ? strlen(*dst) : 0, b = strlen(s);
	char *n = xmalloc(a + b + 2);

	if (a) {
		memcpy(n, *dst, a);
		n[a++] = ';';
	}
	memcpy(n + a, s, b + 1);
	free(*dst);
	*dst = n;
}

/* a leading "[description]" of a group list is only a label */
static const char *
skip_description(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '[') {
		const char *e = strchr(s, ']');

		if (e != NULL)
			return e + 1;
	}
	return s;
}

static const struct preset {
	const char *name, *desc, *group, *fold, *exclude;
	double foldpct;
} presets[] = {
	{ "module", "[group modules] every frame becomes 'module M'",
	  "{%}!->module $1", NULL, NULL, 0 },
	{ "module-entries", "[group module entries] 'module M <<entry frame>>' (PerfView's default)",
	  "{%}!=>module $1", NULL, NULL, 0 },
	{ "full-path-module-entries", "[group full path module entries] module by full path",
	  "{*}!=>module $1", NULL, NULL, 0 },
	{ "class", "[group classes] 'class C' for .NET and C++ methods",
	  "{%!*}.%(->class $1;{%!*}::->class $1", NULL, NULL, 0 },
	{ "class-entries", "[group class entries] 'class C <<entry>>'",
	  "{%!*}.%(=>class $1;{%!*}::=>class $1", NULL, NULL, 0 },
	{ "os", "system32\\*, syswow64\\* and the kernel/ntdll family as OS <<entry>>",
	  "system32\\*!=>OS;syswow64\\*!=>OS;^ntoskrnl.exe!=>OS;^ntkrnl%!=>OS;^hal.dll!=>OS;"
	  "^ntdll.dll!=>OS;^kernel32.dll!=>OS;^kernelbase.dll!=>OS;^win32k%.sys!=>OS;"
	  "^win32u.dll!=>OS;^user32.dll!=>OS;^gdi32%!=>OS;^combase.dll!=>OS;^rpcrt4.dll!=>OS;"
	  "^ucrtbase.dll!=>OS;^msvcrt.dll!=>OS;^fltmgr.sys!=>OS;^ntfs.sys!=>OS", NULL, NULL, 0 },
	{ "clr-os-entries", "[group CLR/OS entries] CLR, LIB, WPF, OS entry groups, then module entries",
	  "^clr.dll!=>CLR;^coreclr.dll!=>CLR;^clrjit.dll!=>CLR;^mscoree.dll!=>CLR;^mscorwks.dll!=>CLR;"
	  "v4.0.30319\\%!=>CLR;v2.0.50727\\%!=>CLR;"
	  "mscorlib%!=>LIB;^System.%!=>LIB;\\System.%!=>LIB;Presentation%!=>WPF;WindowsBase%!=>WPF;"
	  "system32\\*!=>OS;syswow64\\*!=>OS;^ntoskrnl.exe!=>OS;^hal.dll!=>OS;^ntdll.dll!=>OS;"
	  "^kernel32.dll!=>OS;^kernelbase.dll!=>OS;^win32k%.sys!=>OS;{%}!=>module $1", NULL, NULL, 0 },
	{ "just-my-code", "frames of .exe modules stay; everything else is 'OTHER <<entry>>'",
	  "%.exe!->;{%}!=>OTHER", NULL, NULL, 0 },
	{ "fold-threads", "[fold threads] every thread frame becomes AllThreads",
	  "Thread -> AllThreads", NULL, NULL, 0 },
	{ "perfview", "PerfView's CPU view defaults: module entries, fold ServiceCopyEnd, Fold% 1, no Idle (with --roots=process|thread)",
	  "{%}!=>module $1", "ntoskrnl%!%ServiceCopyEnd", "^Process% Idle", 1 },
	{ NULL, NULL, NULL, NULL, NULL, 0 }
};

const char *
stk_preset_list(void)
{
	static char buf[4096];
	size_t o = 0;
	int i;

	if (buf[0])
		return buf;
	for (i = 0; presets[i].name; i++)
		o += (size_t)snprintf(buf + o, sizeof buf - o, "%s\t%s\n", presets[i].name, presets[i].desc);
	o += (size_t)snprintf(buf + o, sizeof buf - o, "%s\t%s\n", "just-my-code=PATS",
	    "frames matching PATS stay; everything else is 'OTHER <<entry>>'");
	return buf;
}

/*
 * Applies a named preset (see stk_preset_list): adds its GroupPats /
 * FoldPats / ExcPats / Fold%.  Returns 0, or -1 for an unknown name.
 */
static int
stk_preset(struct stk_config *cfg, const char *name)
{
	int i;

	if (strncmp(name, "just-my-code=", 13) == 0 && name[13]) {
		/* user modules: exclusion groups, then the rest as OTHER entries */
		char *g = NULL;
		const char *p = name + 13;

		while (*p) {
			const char *e = strpbrk(p, "|,");
			size_t n = e ? (size_t)(e - p) : strlen(p);
			char *ent = xmalloc(n + 8);

			snprintf(ent, n + 8, "%.*s->", (int)n, p);
			stk_append(&g, ent);
			free(ent);
			p += n;
			if (*p)
				p++;
		}
		stk_append(&g, "{%}!=>OTHER");
		stk_append(&cfg->group, g);
		free(g);
		return 0;
	}
	for (i = 0; presets[i].name; i++) {
		if (strcmp(presets[i].name, name) != 0)
			continue;
		if (presets[i].group)
			stk_append(&cfg->group, presets[i].group);
		if (presets[i].fold)
			stk_append(&cfg->fold, presets[i].fold);
		if (presets[i].exclude)
			stk_append(&cfg->exclude, presets[i].exclude);
		if (presets[i].foldpct > 0)
			cfg->fold_pct = presets[i].foldpct;
		return 0;
	}
	return -1;
}

/* --thread-time and --readied-by (which implies it) */
static int
tt_option(struct stk_config *cfg, int opt)
{
	switch (opt) {
	case STK_OPT_READIEDBY:
		cfg->readied_by = 1;
		/* FALLTHROUGH */
	case STK_OPT_THREADTIME:
		cfg->thread_time = 1;
		return 1;
	default:
		return 0;
	}
}

static int
parse_roots(const char *s, enum stk_roots *r)
{
	static const char *names[] = { "none", "process", "thread", "comm", "pid", "tid" };
	int i;

	for (i = 0; i < 6; i++)
		if (strcmp(s, names[i]) == 0) {
			*r = (enum stk_roots)i;
			return 0;
		}
	return -1;
}

int
stk_option(struct stk_config *cfg, int opt, const char *arg)
{
	switch (opt) {
	case STK_OPT_GROUP:
		stk_append(&cfg->group, skip_description(arg));
		return 1;
	case STK_OPT_FOLD:
		stk_append(&cfg->fold, arg);
		return 1;
	case STK_OPT_INCLUDE:
		stk_append(&cfg->include, arg);
		return 1;
	case STK_OPT_EXCLUDE:
		stk_append(&cfg->exclude, arg);
		return 1;
	case STK_OPT_FOLDPCT:
		cfg->fold_pct = cli_number("--fold-pct", arg);
		if (cfg->fold_pct > 100)
			cli_usage_error("--fold-pct: %s is more than 100", arg);
		return 1;
	case STK_OPT_PRESET: {
		char *copy = xstrdup(arg), *save, *tok;

		/*
		 * several presets separated by ',' (strtok_r skips empty items);
		 * just-my-code=A|B keeps its own list
		 */
		for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
			if (stk_preset(cfg, tok) < 0)
				cli_usage_error("unknown preset '%s' (known: module, module-entries, "
				    "full-path-module-entries, class, class-entries, os, clr-os-entries, "
				    "just-my-code[=PATS], fold-threads, perfview)", tok);
		}
		free(copy);
		return 1;
	}
	case STK_OPT_CHAIN:
		cfg->chain_groups = 1;
		return 1;
	case STK_OPT_KEEPADDRS:
		cfg->keep_addrs = 1;
		return 1;
	case STK_OPT_KERNEL:
		cfg->kernel = 1;
		return 1;
	case STK_OPT_ROOTS:
		cfg->roots_set = 1;
		if (parse_roots(arg, &cfg->roots) < 0)
			cli_usage_error("--roots: '%s' is not none, process, thread, comm, pid or tid", arg);
		return 1;
	case STK_OPT_UNIT:
		cfg->unit_set = 1;
		if (strcmp(arg, "us") == 0 || strcmp(arg, "µs") == 0)
			cfg->unit = STK_UNIT_US;
		else if (strcmp(arg, "ms") == 0)
			cfg->unit = STK_UNIT_MS;
		else if (strcmp(arg, "samples") == 0 || strcmp(arg, "count") == 0)
			cfg->unit = STK_UNIT_SAMPLES;
		else if (strcmp(arg, "bytes") == 0)
			cfg->unit = STK_UNIT_BYTES;
		else
			cli_usage_error("--unit: '%s' is not us, ms, samples or bytes", arg);
		return 1;
	case STK_OPT_KIND:
		free(cfg->kinds);
		cfg->kinds = xstrdup(arg);
		return 1;
	case STK_OPT_DECIMALS:
		cfg->decimals = (int)cli_integer("--decimals", arg);
		if (cfg->decimals > 6)
			cli_usage_error("--decimals: at most 6");
		return 1;
	case STK_OPT_NOSCENARIO:
		cfg->no_scenario = 1;
		return 1;
	case STK_OPT_KEEPIDLE:
		cfg->keep_idle = 1;
		return 1;
	default:
		return tt_option(cfg, opt);
	}
}

void
stk_config_free(struct stk_config *cfg)
{
	free(cfg->group);
	free(cfg->fold);
	free(cfg->include);
	free(cfg->exclude);
	free(cfg->kinds);
	memset(cfg, 0, sizeof *cfg);
}

enum stk_unit
stk_config_unit(const struct stk_config *cfg)
{
	char *copy, *save, *tok;
	int samples_only = 1, bytes_only = 1;

	if (cfg->unit_set)
		return cfg->unit;
	if (cfg->kinds == NULL)	/* Sample alone, or thread time's Sample,Ready,Waiting */
		return cfg->thread_time ? STK_UNIT_US : STK_UNIT_SAMPLES;
	copy = xstrdup(cfg->kinds);
	for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save))
	{
		if (strcmp(tok, "Sample") != 0 && strcmp(tok, "cpu") != 0 && strcmp(tok, "Exception") != 0)
			samples_only = 0;	/* a duration-weighted kind, or all (exceptions are counted) */
		if (strcmp(tok, "GCAllocationTick") != 0)
			bytes_only = 0;		/* CLR allocations weigh bytes, not time */
	}
	free(copy);
	if (bytes_only)
		return STK_UNIT_BYTES;
	return samples_only ? STK_UNIT_SAMPLES : STK_UNIT_US;
}

const char *
stk_unit_text(enum stk_unit unit)
{
	return unit == STK_UNIT_US ? "us" : unit == STK_UNIT_MS ? "ms" :
	    unit == STK_UNIT_BYTES ? "bytes" : "samples";
}

/* Is the span S the text WORD, ignoring case? */
static int
span_is_nocase(struct evt_span s, const char *word)
{
	size_t n = strlen(word);

	return s.n == n && strncasecmp(s.p, word, n) == 0;
}

int
stk_idle_event(struct evt_span kind, struct evt_span process, long pid, int in_interrupt)
{
	if (in_interrupt)
		return 0;	/* a driver's time on an idle CPU is busy time */
	if (!(kind.n == 6 && memcmp(kind.p, "Sample", 6) == 0) &&
	    !(kind.n == 7 && memcmp(kind.p, "Running", 7) == 0))
		return 0;
	return pid == 0 || span_is_nocase(process, "Idle");
}

/* count= of an evt event: 1 when absent; -1 when not an integer from 0 to 1e9 */
static int
parse_count(const char *v, size_t n, int64_t *count)
{
	char buf[32], *e;

	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	errno = 0;
	*count = strtoll(buf, &e, 10);
	if (*e || errno || *count < 0 || *count > 1000000000)
		return -1;
	return 0;
}

int
stk_event_value(enum stk_unit unit, const struct evt_event *ev, double *value,
    const char **why)
{
	const char *c;
	int64_t count = 1;

	if (unit != STK_UNIT_SAMPLES) {
		*value = unit == STK_UNIT_US ? ev->weight * 1e3 : ev->weight;
		return 0;
	}
	c = evt_attr(ev, "count");
	if (c != NULL && parse_count(c, strlen(c), &count) < 0) {
		*why = "count= is not an integer from 0 to 1e9";
		return -1;
	}
	*value = (double)count;
	return 0;
}

static char *
dupnull(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* ------------------------------------------------------------------ */
/* id tables                                                           */

/*
 * Doubles T (4096 slots at first) and puts the ids FIRST..N-1 back,
 * each at the slot HASH_OF(OWNER, id) gives (OWNER: the stk, the line
 * reader's cache, a piece or the merge: whatever holds the hashes).
 */
static void
idtab_grow(struct idtab *t, const void *owner, uint32_t first, uint32_t n,
    uint64_t (*hash_of)(const void *owner, uint32_t))
{
	uint32_t size = t->mask ? (t->mask + 1) * 2 : 4096, i, h;

	free(t->slot);
	t->slot = xmalloc(size * sizeof *t->slot);
	memset(t->slot, 0xff, size * sizeof *t->slot);
	t->mask = size - 1;
	for (i = first; i < n; i++) {
		for (h = (uint32_t)hash_of(owner, i) & t->mask; t->slot[h] != STK_NONE; h = (h + 1) & t->mask)
			;
		t->slot[h] = i;
	}
}

/* ------------------------------------------------------------------ */
/* frames                                                              */

/* the per-frame data of the name just interned */
static void
new_frame(struct stk *S)
{
	uint32_t id = S->nframes++;

	if (id == S->capframes) {
		S->capframes = S->capframes ? S->capframes * 2 : 1024;
		S->fi = xrealloc(S->fi, S->capframes * sizeof *S->fi);
		if (S->outname)
			S->outname = xrealloc(S->outname, S->capframes * sizeof *S->outname);
	}
	memset(&S->fi[id], 0, sizeof S->fi[id]);
	if (S->outname)
		S->outname[id] = NULL;
	S->fi[id].gname = S->fi[id].egroup = S->fi[id].ename = S->fi[id].kname = STK_NONE;
}

uint32_t
stk_intern(struct stk *S, const char *s, size_t n)
{
	uint32_t id;

	if (n > 0xfffffffu)
		n = 0xfffffffu;
	id = intern_add(&S->names, s, n);
	if (id == S->nframes)
		new_frame(S);
	return id;
}

const char *
stk_name(const struct stk *S, uint32_t frame)
{
	if (frame == STK_NONE)
		return "ROOT";
	return intern_str(&S->names, frame);
}

uint32_t
stk_nframes(const struct stk *S)
{
	return S->nframes;
}

/* PerfView's display name: the module's directory dropped */
static const char *
display_name(const char *s)
{
	const char *bang = strchr(s, '!'), *p, *base = s;

	if (bang == NULL)
		return s;
	for (p = s; p < bang; p++)
		if (*p == '\\' || *p == '/')
			base = p + 1;
	return base;
}

/* module!0xRVA, module!?, ?!0xADDR: an address with no symbol */
static int
is_unresolved(const char *s, size_t n)
{
	const char *bang = memchr(s, '!', n), *p;

	if (bang == NULL)
		return 0;
	p = bang + 1;
	if (p[0] == '?' && p + 1 == s + n)
		return 1;
	if (p[0] != '0' || (p[1] != 'x' && p[1] != 'X') || p + 2 >= s + n)
		return 0;
	for (p += 2; p < s + n; p++)
		if (!isxdigit((unsigned char)*p))
			return 0;
	return 1;
}

static char *
tmpbuf(struct stk *S, size_t n)
{
	if (n > S->captmp) {
		S->captmp = n * 2;
		S->tmp = xrealloc(S->tmp, S->captmp);
	}
	return S->tmp;
}

/* GroupPats for a raw frame (§2.3), computed once per frame */
static void
compute_group(struct stk *S, uint32_t id)
{
	const char *name = intern_str(&S->names, id);
	int unresolved = !S->cfg.keep_addrs && is_unresolved(name, intern_len(&S->names, id));
	char *cur = xstrdup(name);
	uint32_t gname = id, egroup = STK_NONE, ename = STK_NONE;
	int i, matched = 0;
	regmatch_t m[PAT_MAX_CAPTURES];

	for (i = 0; i < S->ngroups; i++) {
		struct groupent *g = &S->groups[i];
		char *G;

		if (!pattern_exec(&g->pat, cur, m))
			continue;
		matched = 1;
		if (g->repl == NULL)
			G = xstrndup(cur + m[0].rm_so, (size_t)(m[0].rm_eo - m[0].rm_so));
		else
			G = pattern_expand(g->repl, cur, m);
		if (*G == '\0') {	/* exclusion group: stays itself, stop */
			free(G);
			gname = id;
			break;
		}
		if (g->entry) {
			const char *disp = display_name(name);
			size_t n = strlen(G) + strlen(disp) + 8;
			char *t = xmalloc(n);

			/* an unknown address enters as module!? (PerfView's name for it) */
			if (unresolved)
				snprintf(t, n, "%s <<%.*s!?>>", G, (int)(strchr(disp, '!') - disp), disp);
			else
				snprintf(t, n, "%s <<%s>>", G, disp);
			egroup = stk_intern(S, G, strlen(G));
			ename = stk_intern(S, t, strlen(t));
			free(t);
			free(G);
			break;
		}
		gname = stk_intern(S, G, strlen(G));
		if (!S->cfg.chain_groups) {
			free(G);
			break;
		}
		free(cur);
		cur = G;	/* PerfView's code: later entries see the new name */
	}
	if (!matched && unresolved) {
		/* PerfView auto-groups unknown addresses of one module: module!? */
		const char *disp = display_name(name);
		const char *bang = strchr(disp, '!');
		size_t n = (size_t)(bang - disp);
		char *t = tmpbuf(S, n + 3);

		memcpy(t, disp, n);
		memcpy(t + n, "!?", 3);
		gname = stk_intern(S, t, n + 2);
	}
	free(cur);
	S->fi[id].gname = gname;
	S->fi[id].egroup = egroup;
	S->fi[id].ename = ename;
	S->fi[id].gdone = 1;
}

/* ExcPats / FoldPats / IncPats on a post-group name */
static void
compute_pats(struct stk *S, uint32_t id)
{
	const char *s = intern_str(&S->names, id);
	uint64_t mask = 0;
	int i;

	S->fi[id].exc = S->exc.n && patlist_first(&S->exc, s) >= 0;
	S->fi[id].fold = S->fold.n && patlist_first(&S->fold, s) >= 0;
	for (i = 0; i < S->inc.n; i++)
		if (pattern_match(&S->inc.pat[i], s))
			mask |= 1ull << i;
	S->fi[id].incmask = mask;
	S->fi[id].pdone = 1;
}

static uint32_t
kernel_name(struct stk *S, uint32_t id)
{
	if (S->fi[id].kname == STK_NONE) {
		size_t n = intern_len(&S->names, id);
		char *t = xmalloc(n + 5);
		uint32_t k;

		memcpy(t, intern_str(&S->names, id), n);
		memcpy(t + n, "_[k]", 5);
		k = stk_intern(S, t, n + 4);
		free(t);
		S->fi[id].kname = k;
	}
	return S->fi[id].kname;
}

/* ------------------------------------------------------------------ */
/* nodes                                                               */

static uint64_t
node_hash(uint32_t parent, uint32_t frame)
{
	return hash_u64((uint64_t)parent << 32 | frame);
}

static uint64_t
node_hash_of(const struct stk *S, uint32_t i)
{
	return node_hash(S->node[i].parent, S->node[i].frame);
}

static uint32_t
new_node(struct stk *S, uint32_t parent, uint32_t frame)
{
	struct stk_node *n;
	uint32_t id;

	if (S->nnodes == S->capnodes) {
		S->capnodes = S->capnodes ? S->capnodes * 2 : 1024;
		S->node = xrealloc(S->node, S->capnodes * sizeof *S->node);
		if (S->cfg.when)
			S->hist = xrealloc(S->hist, S->capnodes * sizeof *S->hist);
		if (S->times)
			S->times = xrealloc(S->times, S->capnodes * sizeof *S->times);
	}
	id = S->nnodes++;
	n = &S->node[id];
	memset(n, 0, sizeof *n);
	n->frame = frame;
	n->parent = parent;
	n->child = STK_NONE;
	n->sibling = STK_NONE;
	if (S->times)
		S->times[id].first = S->times[id].last = NAN;
	if (S->cfg.when)
		S->hist[id] = NULL;
	if (parent != STK_NONE) {
		n->sibling = S->node[parent].child;
		S->node[parent].child = id;
	}
	return id;
}

/* NODE's first/last; the array is made (all unknown) when the first time comes */
static struct nodetime *
node_times(struct stk *S, uint32_t node)
{
	uint32_t i;

	if (S->times == NULL) {
		S->times = xmalloc(S->capnodes * sizeof *S->times);
		for (i = 0; i < S->nnodes; i++)
			S->times[i].first = S->times[i].last = NAN;
	}
	return &S->times[node];
}

/* Doubles the node table (4096 slots at first) and puts every node but ROOT back. */
static void
nodetab_grow(struct stk *S)
{
	struct nodetab *t = &S->ntab;
	uint32_t size = t->mask ? (t->mask + 1) * 2 : 4096, i, h;

	free(t->slot);
	t->slot = xcalloc(size, sizeof *t->slot);
	t->mask = size - 1;
	for (i = 1; i < S->nnodes; i++) {
		uint64_t hv = node_hash_of(S, i);

		for (h = (uint32_t)hv & t->mask; t->slot[h] != 0; h = (h + 1) & t->mask)
			;
		t->slot[h] = (hv & 0xffffffff00000000ull) | i;
	}
}

static uint32_t
child_of(struct stk *S, uint32_t parent, uint32_t frame)
{
	uint64_t hv = node_hash(parent, frame), tag = hv & 0xffffffff00000000ull, v;
	uint32_t h = (uint32_t)hv & S->ntab.mask, id;

	while ((v = S->ntab.slot[h]) != 0) {
		id = (uint32_t)v;
		if ((v & 0xffffffff00000000ull) == tag && S->node[id].parent == parent &&
		    S->node[id].frame == frame)
			return id;
		h = (h + 1) & S->ntab.mask;
	}
	id = new_node(S, parent, frame);
	S->ntab.slot[h] = tag | id;
	if ((uint64_t)S->nnodes * 4 > (uint64_t)S->ntab.mask * 3)	/* 75% full */
		nodetab_grow(S);
	return id;
}

/* ------------------------------------------------------------------ */
/* creation                                                            */

struct grpctx {
	struct stk *S;
};

static int
add_group_entry(void *arg, const char *s, size_t n)
{
	struct stk *S = ((struct grpctx *)arg)->S;
	struct groupent *g;
	const char *arrow = NULL, *p, *name;
	char err[512];
	int entry = 0;
	size_t i;

	for (i = 0; i + 1 < n; i++)
		if (s[i] == '=' && s[i + 1] == '>') {
			arrow = s + i;
			entry = 1;
			break;
		}
	if (arrow == NULL)
		for (i = 0; i + 1 < n; i++)
			if (s[i] == '-' && s[i + 1] == '>') {
				arrow = s + i;
				break;
			}
	S->groups = xrealloc(S->groups, (size_t)(S->ngroups + 1) * sizeof *S->groups);
	g = &S->groups[S->ngroups];
	if (pattern_compile(&g->pat, s, arrow ? (size_t)(arrow - s) : n, err, sizeof err) < 0)
		cli_usage_error("--group: %s", err);
	g->entry = entry;
	g->repl = NULL;
	if (arrow != NULL) {
		const char *e = s + n;

		name = arrow + 2;
		while (name < e && isspace((unsigned char)*name))
			name++;
		p = e;
		while (p > name && isspace((unsigned char)p[-1]))
			p--;
		g->repl = xstrndup(name, (size_t)(p - name));
	}
	S->ngroups++;
	return 0;
}

static void
compile_list(struct patlist *pl, const char *s, const char *opt)
{
	char err[512];

	if (s != NULL && patlist_add(pl, s, err, sizeof err) < 0)
		cli_usage_error("%s: %s", opt, err);
}

static void
set_kinds(struct stk *S, const char *list)
{
	char *copy = xstrdup(list ? list : "Sample"), *save, *tok;

	/* strtok_r skips empty items: "a,,b," is a and b */
	for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		const char *expand[4] = { tok, NULL, NULL, NULL };
		int i;

		if (strcmp(tok, "all") == 0 || strcmp(tok, "*") == 0) {
			S->allkinds = 1;
			continue;
		}
		if (strcmp(tok, "cpu") == 0)
			expand[0] = "Sample";
		else if (strcmp(tok, "dpc") == 0) {
			expand[0] = "DPC"; expand[1] = "ThreadedDPC"; expand[2] = "TimerDPC";
		} else if (strcmp(tok, "isr") == 0)
			expand[0] = "ISR";
		else if (strcmp(tok, "dpcisr") == 0) {
			expand[0] = "DPC"; expand[1] = "ThreadedDPC"; expand[2] = "TimerDPC";
			expand[3] = "ISR";
		}
		for (i = 0; i < 4 && expand[i]; i++) {
			S->kinds = xrealloc(S->kinds, (size_t)(S->nkinds + 1) * sizeof *S->kinds);
			S->kindlen = xrealloc(S->kindlen,
			    (size_t)(S->nkinds + 1) * sizeof *S->kindlen);
			S->kindlen[S->nkinds] = strlen(expand[i]);
			S->kinds[S->nkinds++] = xstrdup(expand[i]);
		}
	}
	free(copy);
}

/*
 * Thread time's defaults: the kinds PerfView's view is made of (CPU
 * samples, ready and waiting intervals) and process;thread roots,
 * unless --kind or --roots said otherwise.  Returns the kind list.
 */
static const char *
tt_config(struct stk *S, const char *kinds)
{
	if (!S->cfg.thread_time)
		return kinds;
	if (!S->cfg.roots_set)
		S->cfg.roots = STK_ROOTS_THREAD;
	return kinds ? kinds : "Sample,Ready,Waiting";
}

static void tails_clear(struct tails *T);

struct stk *
stk_new(const struct stk_config *cfg)
{
	struct stk *S = xcalloc(1, sizeof *S);
	struct grpctx gc = { S };
	tails_clear(&S->tails);

	S->cfg = *cfg;
	S->cfg.group = dupnull(cfg->group);
	S->cfg.fold = dupnull(cfg->fold);
	S->cfg.include = dupnull(cfg->include);
	S->cfg.exclude = dupnull(cfg->exclude);
	S->cfg.kinds = dupnull(cfg->kinds);
	S->cfg.unit = stk_config_unit(cfg);
	if (cfg->group)
		pattern_split(skip_description(cfg->group), add_group_entry, &gc);
	compile_list(&S->fold, cfg->fold, "--fold");
	compile_list(&S->inc, cfg->include, "--include");
	compile_list(&S->exc, cfg->exclude, "--exclude");
	if (S->inc.n > 64)
		cli_usage_error("--include: at most 64 entries");
	S->incall = S->inc.n == 64 ? ~0ull : (1ull << S->inc.n) - 1;
	set_kinds(S, tt_config(S, cfg->kinds));
	intern_init(&S->names);
	nodetab_grow(S);
	new_node(S, STK_NONE, STK_NONE);	/* ROOT */
	S->scenario = STK_NONE;
	S->broken = stk_intern(S, "BROKEN", 6);
	S->w_width = 1;
	return S;
}

static void foldcache_free(struct foldcache *fc);

void
stk_free(struct stk *S)
{
	uint32_t i;
	int k;

	if (S == NULL)
		return;
	for (k = 0; k < S->ngroups; k++) {
		pattern_free(&S->groups[k].pat);
		free(S->groups[k].repl);
	}
	free(S->groups);
	patlist_free(&S->fold);
	patlist_free(&S->inc);
	patlist_free(&S->exc);
	for (i = 0; S->outname && i < S->nframes; i++)
		free(S->outname[i]);
	free(S->outname);
	intern_release(&S->names);
	free(S->fi);
	if (S->hist) {
		for (i = 0; i < S->nnodes; i++)
			free(S->hist[i]);
		free(S->hist);
	}
	free(S->node);
	free(S->times);
	free(S->nfold);
	free(S->ntab.slot);
	free(S->pool);
	free(S->raw);
	free(S->rtab.slot);
	free(S->txt);
	free(S->ttab.slot);
	free(S->out);
	free(S->outeg);
	free(S->outk);
	free(S->rawids);
	free(S->tmp);
	free(S->stkbuf);
	free(S->deepbuf);
	foldcache_free(S->fc);
	strbuf_release(&S->ttbuf);
	for (k = 0; k < S->nkinds; k++)
		free(S->kinds[k]);
	free(S->kinds);
	free(S->kindlen);
	free(S->text);
	free(S->tails.ent);
	free(S->tails.tab.slot);
	free(S->tails.bytes);
	free(S->hdr);
	stk_config_free(&S->cfg);
	free(S);
}

/* ------------------------------------------------------------------ */
/* the per-sample transformation                                       */

static void
scratch(struct stk *S, size_t n)
{
	if (n > S->capout) {
		S->capout = n * 2 + 64;
		S->out = xrealloc(S->out, S->capout * sizeof *S->out);
		S->outeg = xrealloc(S->outeg, S->capout * sizeof *S->outeg);
		S->outk = xrealloc(S->outk, S->capout);
		S->rawids = xrealloc(S->rawids, S->capout * sizeof *S->rawids);
	}
}

/* interns one frame of a stack text; evt's %3B becomes ':' (the collapsers' convention) */
static uint32_t
intern_frame(struct stk *S, const char *s, size_t n)
{
	const char *pct;
	size_t i, o = 0;
	char *t;

	if (n > STK_MAX_FRAME) {
		/* a hostile frame name would make regex matching quadratic: cut it */
		t = tmpbuf(S, STK_MAX_FRAME + 1);
		memcpy(t, s, STK_MAX_FRAME - 3);
		memcpy(t + STK_MAX_FRAME - 3, "...", 3);
		S->st.long_frames++;
		/* (the %3B pass below compacts in place: it never writes ahead of where it reads) */
		return intern_frame(S, t, STK_MAX_FRAME);
	}
	pct = n >= 3 ? memchr(s, '%', n - 2) : NULL;
	if (pct == NULL)
		return stk_intern(S, s, n);
	t = tmpbuf(S, n + 1);
	for (i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && s[i + 1] == '3' && (s[i + 2] == 'B' || s[i + 2] == 'b')) {
			t[o++] = ':';
			i += 2;
		} else {
			t[o++] = s[i];
		}
	}
	return stk_intern(S, t, o);
}

/* splits a stack text into interned frame ids; OUT has room for every frame */
static size_t
split_frames(struct stk *S, const char *stack, size_t len, uint32_t *out)
{
	const char *p = stack, *e = stack + len;
	size_t n = 0;

	if (len == 0)
		return 0;
	for (;;) {
		const char *semi = memchr(p, ';', (size_t)(e - p));
		const char *fe = semi ? semi : e;

		out[n++] = intern_frame(S, p, (size_t)(fe - p));
		if (semi == NULL)
			break;
		p = semi + 1;
	}
	return n;
}

static size_t
count_frames(const char *stack, size_t len)
{
	const char *p = stack, *e = stack + len;
	size_t n = 1;

	if (len == 0)
		return 0;
	while ((p = memchr(p, ';', (size_t)(e - p))) != NULL) {
		n++;
		p++;
	}
	return n;
}

/*
 * The per-sample transformation of S->rawids[0..NRAW) (NPREFIX root
 * frames first); inserts into the tree.  Returns the leaf node or
 * STK_NONE (dropped, *DROPPED = 1 ExcPats, 2 IncPats).
 */
static uint32_t
transform_ids(struct stk *S, int nprefix, size_t nraw, int kframes, int *dropped)
{
	size_t i, nout = 0;
	uint64_t mask = 0;
	uint32_t node;

	*dropped = 0;
	for (i = 0; i < nraw; i++) {
		uint32_t r = S->rawids[i], id, eg;
		int kern = S->cfg.kernel && i >= (size_t)nprefix && kframes > 0 &&
		    nraw - i <= (size_t)kframes;

		if (!S->fi[r].gdone)
			compute_group(S, r);
		eg = S->fi[r].egroup;
		if (eg != STK_NONE) {
			/* entry group: members directly below the entry collapse into it */
			if (nout > 0 && S->outeg[nout - 1] == eg)
				id = S->out[nout - 1];
			else
				id = S->fi[r].ename;
		} else {
			id = S->fi[r].gname;
		}
		if (!S->fi[id].pdone)
			compute_pats(S, id);
		if (S->fi[id].exc) {
			*dropped = 1;
			return STK_NONE;
		}
		if (S->fi[id].fold || (nout > 0 && S->out[nout - 1] == id))
			continue;
		mask |= S->fi[id].incmask;
		S->out[nout] = id;
		S->outeg[nout] = eg;
		S->outk[nout] = (uint8_t)kern;
		nout++;
	}
	if (mask != S->incall) {
		*dropped = 2;
		return STK_NONE;
	}
	node = STK_ROOT;
	if (nout == 0)
		node = child_of(S, node, stk_intern(S, "[no stack]", 10));
	for (i = 0; i < nout; i++) {
		uint32_t id = S->out[i];

		if (S->outk[i])
			id = kernel_name(S, id);
		node = child_of(S, node, id);
	}
	return node;
}

/* the same from a text (when the stack cache is full) or from cached ids */
static uint32_t
transform(struct stk *S, const uint32_t *prefix, int nprefix, const char *stack,
    size_t len, const uint32_t *ids, size_t nids, int kframes, int *dropped)
{
	size_t n = ids ? nids : count_frames(stack, len);

	scratch(S, (size_t)nprefix + n + 2);
	if (nprefix)	/* PREFIX may be NULL then: memcpy from NULL is undefined even for 0 bytes */
		memcpy(S->rawids, prefix, (size_t)nprefix * sizeof *prefix);
	if (ids)
		memcpy(S->rawids + nprefix, ids, nids * sizeof *ids);
	else
		n = split_frames(S, stack, len, S->rawids + nprefix);
	return transform_ids(S, nprefix, (size_t)nprefix + n, kframes, dropped);
}

static uint64_t
text_hash_of(const void *owner, uint32_t i)
{
	return ((const struct stk *)owner)->txt[i].hash;
}

/*
 * Whether the frame text SEG, N bytes of a stack, interns as frame ID:
 * intern_frame's spelling (a name over STK_MAX_FRAME cut, %3B as ':').
 */
static int
frame_is(const struct intern *names, uint32_t id, const char *seg, size_t n)
{
	const char *nm = intern_str(names, id);
	size_t nl = intern_len(names, id), i, o = 0;
	int cut = n > STK_MAX_FRAME;

	if (!cut && (n < 3 || memchr(seg, '%', n - 2) == NULL))
		return n == nl && memcmp(seg, nm, n) == 0;
	if (cut)
		n = STK_MAX_FRAME - 3;
	for (i = 0; i < n; i++, o++) {
		char c = seg[i];

		if (c == '%' && i + 2 < n && seg[i + 1] == '3' &&
		    (seg[i + 2] == 'B' || seg[i + 2] == 'b')) {
			c = ':';
			i += 2;
		}
		if (o == nl || nm[o] != c)
			return 0;
	}
	if (cut) {
		if (nl - o != 3 || memcmp(nm + o, "...", 3) != 0)
			return 0;
		o += 3;
	}
	return o == nl;
}

/*
 * memcmp(A, B, N) == 0 inline: text_is compares every frame of every
 * line, most of them a few dozen bytes, where the call costs more than
 * the compare.
 */
static inline int
same_bytes(const char *a, const char *b, size_t n)
{
	uint64_t x, y;
	size_t i;

	if (n < 8) {
		for (i = 0; i < n; i++)
			if (a[i] != b[i])
				return 0;
		return 1;
	}
	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return 0;
	}
	/* the last 8 bytes, overlapping what was compared */
	memcpy(&x, a + n - 8, 8);
	memcpy(&y, b + n - 8, 8);
	return x == y;
}

/*
 * Whether STACK splits into exactly the frames IDS (NIDS of them).  The
 * fast path compares a name as it is: names made by intern_frame never
 * hold a "%3B" (it became ':'), so a text that equals the name is one
 * intern_frame spells that way.
 */
static int
text_is(const struct intern *names, const uint32_t *ids, uint32_t nids, const char *stack,
    size_t len)
{
	const char *p = stack, *e = stack + len;
	uint32_t i;

	if (len == 0)
		return nids == 0;
	for (i = 0; i < nids; i++) {
		size_t nl = intern_len(names, ids[i]);
		const char *semi, *fe;

		if (i > 0) {
			if (p == e || *p != ';')
				return 0;
			p++;
		}
		if ((size_t)(e - p) >= nl && same_bytes(p, intern_str(names, ids[i]), nl) &&
		    (p + nl == e || p[nl] == ';')) {
			p += nl;
			continue;
		}
		semi = memchr(p, ';', (size_t)(e - p));
		fe = semi ? semi : e;
		if (!frame_is(names, ids[i], p, (size_t)(fe - p)))
			return 0;
		p = fe;
	}
	return p == e;
}

/*
 * The cached entry of STACK, added if new; STK_NONE when the cache is
 * full (then the caller transforms the text itself, each time).
 */
static uint32_t text_append(struct stk *S, uint64_t hv, uint32_t h, size_t n);
static void keep_text(struct stk *S, struct textent *t, const char *stack, size_t len);

static uint32_t
text_entry(struct stk *S, const char *stack, size_t len, uint64_t hv)
{
	uint32_t h, idx;
	struct textent *t;
	size_t n, used;

	if (S->ttab.slot == NULL)
		idtab_grow(&S->ttab, S, 0, S->ntxt, text_hash_of);
	h = (uint32_t)hv & S->ttab.mask;
	while ((idx = S->ttab.slot[h]) != STK_NONE) {
		t = &S->txt[idx];
		if (t->hash == hv && (t->textlen != STK_NONE ?
		    t->textlen == len && (len == 0 || memcmp(S->text + t->textat, stack, len) == 0) :
		    text_is(&S->names, S->pool + t->ids, t->nids, stack, len)))
			return idx;
		h = (h + 1) & S->ttab.mask;
	}
	n = count_frames(stack, len);
	used = (S->npool + n) * sizeof *S->pool + (size_t)S->ntxt * sizeof *S->txt +
	    ((size_t)S->ttab.mask + 1) * sizeof *S->ttab.slot + S->ntext;
	if (used >= RAW_CACHE_MAX_BYTES)
		return STK_NONE;
	if (S->npool + n > S->cappool) {
		S->cappool = (S->npool + n) * 2 + 4096;
		S->pool = xrealloc(S->pool, S->cappool * sizeof *S->pool);
	}
	n = split_frames(S, stack, len, S->pool + S->npool);
	idx = text_append(S, hv, h, n);
	if (S->format == 1 && used + len < RAW_CACHE_MAX_BYTES)
		keep_text(S, &S->txt[idx], stack, len);
	return idx;
}

/* T's text, STACK, kept for text_entry's compare */
static void
keep_text(struct stk *S, struct textent *t, const char *stack, size_t len)
{
	if (S->ntext + len > S->captext) {
		S->captext = (S->ntext + len) * 2 + 65536;
		S->text = xrealloc(S->text, S->captext);
	}
	if (len)	/* (an empty stack: no bytes, maybe no buffer yet) */
		memcpy(S->text + S->ntext, stack, len);
	t->textat = (uint32_t)S->ntext;
	t->textlen = (uint32_t)len;
	S->ntext += len;
}

/*
 * Makes the N frame ids at the end of the pool (S->pool + S->npool) the
 * cached text of hash HV, in the free slot H of its table.
 */
static uint32_t
text_append(struct stk *S, uint64_t hv, uint32_t h, size_t n)
{
	struct textent *t;

	if (S->ntxt == S->captxt) {
		S->captxt = S->captxt ? S->captxt * 2 : 1024;
		S->txt = xrealloc(S->txt, S->captxt * sizeof *S->txt);
	}
	t = &S->txt[S->ntxt];
	memset(t, 0, sizeof *t);
	t->hash = hv;
	t->ids = (uint32_t)S->npool;
	t->nids = (uint32_t)n;
	t->textlen = STK_NONE;
	S->npool += n;
	S->ttab.slot[h] = S->ntxt++;
	if (S->ntxt * 2 > S->ttab.mask)
		idtab_grow(&S->ttab, S, 0, S->ntxt, text_hash_of);
	return S->ntxt - 1;
}

static uint64_t
raw_hash_of(const void *owner, uint32_t i)
{
	return ((const struct stk *)owner)->raw[i].hash;
}

/* histogram bookkeeping for When */
static void
when_rescale(struct stk *S)
{
	uint32_t i;
	int b;

	/* double the bucket width: bucket j gets old 2j and 2j+1 */
	for (i = 0; i < S->nnodes; i++) {
		int64_t *h = S->hist[i];

		if (h == NULL)
			continue;
		for (b = 0; b < STK_WHEN_BUCKETS; b++)
			h[b] = (2 * b < STK_WHEN_BUCKETS ? h[2 * b] + h[2 * b + 1] : 0);
	}
	for (b = 0; b < STK_WHEN_BUCKETS; b++)
		S->root_when[b] = (2 * b < STK_WHEN_BUCKETS ?
		    S->root_when[2 * b] + S->root_when[2 * b + 1] : 0);
	S->w_width *= 2;
}

static void
when_add(struct stk *S, uint32_t node, int64_t metric, double t, double dur)
{
	double end, lo, hi, span;
	int64_t *h, left = metric;
	int b0, b1, b;

	if (isnan(t))
		return;
	if (!S->w_fixed) {
		if (!S->w_seen) {
			S->w_start = t < 0 ? t : 0;
			S->w_seen = 1;
		}
		while (t + (dur > 0 ? dur : 0) > S->w_start + S->w_width * STK_WHEN_BUCKETS)
			when_rescale(S);
	}
	if (S->hist[node] == NULL)
		S->hist[node] = xcalloc(STK_WHEN_BUCKETS, sizeof(int64_t));
	h = S->hist[node];
	end = t + (dur > 0 ? dur : 0);
	b0 = (int)floor((t - S->w_start) / S->w_width);
	b1 = (int)floor((end - S->w_start) / S->w_width);
	if (b0 < 0)
		b0 = 0;
	if (b0 >= STK_WHEN_BUCKETS)
		b0 = STK_WHEN_BUCKETS - 1;
	if (b1 < b0)
		b1 = b0;
	if (b1 >= STK_WHEN_BUCKETS)
		b1 = STK_WHEN_BUCKETS - 1;
	span = end - t;
	/* spread over the buckets it overlaps, proportionally; the remainder goes last */
	for (b = b0; b < b1 && span > 0; b++) {
		double bs = S->w_start + b * S->w_width, be = bs + S->w_width;
		int64_t part;

		lo = t > bs ? t : bs;
		hi = end < be ? end : be;
		part = (int64_t)((double)metric * ((hi - lo) / span));
		h[b] = sadd(h[b], part);
		S->root_when[b] = sadd(S->root_when[b], part);
		left -= part;
	}
	h[b1] = sadd(h[b1], left);
	S->root_when[b1] = sadd(S->root_when[b1], left);
}

/*
 * Kernel frames are the leaf-side KFRAMES of a stack; after evt_stack_cap
 * cut ELIDED frames from its middle, the mark counts as a kernel frame
 * when any frame it replaced was one.
 */
static int
cut_kframes(int kframes, size_t elided)
{
	int64_t head_k;

	if (kframes <= EVT_STACK_TAIL_FRAMES)
		return kframes;
	head_k = (int64_t)kframes - (int64_t)elided - EVT_STACK_TAIL_FRAMES;
	return EVT_STACK_TAIL_FRAMES + 1 + (head_k > 0 ? (int)head_k : 0);
}

/*
 * NEVENTS samples' metric and count (summed) on LEAF, or what dropped
 * them (DROPPED 1 ExcPats, 2 IncPats).  Sums saturate, so adding a sum
 * once is adding its samples one by one unless their signs differ and
 * a sum overflows (read_pieces falls back to one thread then).
 */
static uint32_t
account_n(struct stk *S, uint32_t leaf, int dropped, int64_t metric, int64_t count,
    double t_ms, double dur_ms, int64_t nevents)
{
	struct stk_node *n;

	if (leaf == STK_NONE) {
		if (dropped == 1) {
			S->st.excluded_events += nevents;
			S->st.excluded_metric = sadd(S->st.excluded_metric, metric);
		} else {
			S->st.notincluded_events += nevents;
			S->st.notincluded_metric = sadd(S->st.notincluded_metric, metric);
		}
		return STK_NONE;
	}
	S->st.kept_events += nevents;
	S->st.kept_metric = sadd(S->st.kept_metric, metric);
	n = &S->node[leaf];
	n->exc = sadd(n->exc, metric);
	n->exc_count = sadd(n->exc_count, count);
	if (!isnan(t_ms)) {
		double end = t_ms + (dur_ms > 0 ? dur_ms : 0);

		struct nodetime *tm = node_times(S, leaf);

		if (isnan(tm->first) || t_ms < tm->first)
			tm->first = t_ms;
		if (isnan(tm->last) || end > tm->last)
			tm->last = end;
		if (S->cfg.when)
			when_add(S, leaf, metric, t_ms, dur_ms);
	}
	return leaf;
}

/* one sample's */
static uint32_t
account(struct stk *S, uint32_t leaf, int dropped, int64_t metric, int64_t count,
    double t_ms, double dur_ms)
{
	return account_n(S, leaf, dropped, metric, count, t_ms, dur_ms, 1);
}

/*
 * stk_add for a stack already in the cache as TEXTID (HT the hash of its
 * text): the leaf from the cache, transformed on the first sample of
 * each (root frames, text, kernel frames).
 */
static uint32_t
add_cached(struct stk *S, const uint32_t *prefix, int nprefix, uint32_t textid,
    uint64_t ht, int kframes, int64_t metric, int64_t count, double t_ms, double dur_ms)
{
	uint64_t hv;
	uint32_t h, idx, leaf;
	struct rawent *re = NULL;
	int dropped = 0, i;

	if (nprefix == 0 && kframes == 0) {
		/* folded input: the text alone decides the leaf */
		struct textent *t = &S->txt[textid];

		if (!t->done) {
			t->result = transform(S, S->pool, 0, NULL, 0, S->pool + t->ids, t->nids, 0,
			    &dropped);
			t->dropped = (uint8_t)dropped;
			t->done = 1;
		}
		return account(S, t->result, t->dropped, metric, count, t_ms, dur_ms);
	}
	hv = hash_u64(ht ^ textid);
	for (i = 0; i < nprefix; i++)
		hv = hash_u64(hv ^ prefix[i]);
	hv = hash_u64(hv ^ ((uint64_t)(uint32_t)kframes << 32 | (uint64_t)(unsigned)nprefix));
	if (S->rtab.slot == NULL)
		idtab_grow(&S->rtab, S, 0, S->nraw, raw_hash_of);
	h = (uint32_t)hv & S->rtab.mask;
	while ((idx = S->rtab.slot[h]) != STK_NONE) {
		struct rawent *r = &S->raw[idx];

		if (r->hash == hv && r->textid == textid && r->nprefix == nprefix &&
		    r->kframes == kframes &&
		    memcmp(r->prefix, prefix, (size_t)nprefix * sizeof *prefix) == 0) {
			re = r;
			break;
		}
		h = (h + 1) & S->rtab.mask;
	}
	if (re != NULL)
		return account(S, re->result, re->dropped, metric, count, t_ms, dur_ms);
	leaf = transform(S, prefix, nprefix, NULL, 0, S->pool + S->txt[textid].ids,
	    S->txt[textid].nids, kframes, &dropped);
	if (S->nraw == S->capraw) {
		S->capraw = S->capraw ? S->capraw * 2 : 1024;
		S->raw = xrealloc(S->raw, S->capraw * sizeof *S->raw);
	}
	re = &S->raw[S->nraw];
	re->hash = hv;
	re->textid = textid;
	re->result = leaf;
	re->dropped = (uint8_t)dropped;
	re->nprefix = (uint8_t)nprefix;
	re->kframes = kframes;
	memset(re->prefix, 0, sizeof re->prefix);
	memcpy(re->prefix, prefix, (size_t)nprefix * sizeof *prefix);
	h = (uint32_t)hv & S->rtab.mask;
	while (S->rtab.slot[h] != STK_NONE)
		h = (h + 1) & S->rtab.mask;
	S->rtab.slot[h] = S->nraw++;
	if (S->nraw * 2 > S->rtab.mask)
		idtab_grow(&S->rtab, S, 0, S->nraw, raw_hash_of);
	return account(S, leaf, dropped, metric, count, t_ms, dur_ms);
}

/*
 * stk_add; and when M is not NULL, what a replay of the same call needs
 * (see tail_replay), M->textid STK_NONE when it cannot be replayed.
 */
static uint32_t
add_stack(struct stk *S, const uint32_t *prefix, int nprefix, const char *stack,
    size_t len, int kframes, int64_t metric, int64_t count, double t_ms, double dur_ms,
    struct tailent *m)
{
	uint64_t ht;
	uint32_t textid, leaf;
	int dropped = 0;
	size_t elided;

	if (nprefix > 4)
		nprefix = 4;
	if (nprefix < 0)
		nprefix = 0;
	if (!S->cfg.kernel)
		kframes = 0;
	S->st.events++;
	S->st.metric = sadd(S->st.metric, metric);
	elided = evt_stack_cap(stack, len, &S->deepbuf, &S->capdeep, &len);
	if (elided > 0) {
		stack = S->deepbuf;
		S->st.deep_stacks++;
		S->st.elided_frames = sadd(S->st.elided_frames, (int64_t)elided);
		kframes = cut_kframes(kframes, elided);
	}
	ht = hash_bytes(stack, len);
	textid = text_entry(S, stack, len, ht);
	if (m != NULL) {
		m->textid = textid;
		m->ht = ht;
		m->metric = metric;
		m->count = count;
		m->elided = (int64_t)elided;
		m->dur = dur_ms;
		m->kframes = kframes;
		m->nprefix = (uint8_t)nprefix;
		memcpy(m->prefix, prefix, (size_t)nprefix * sizeof *prefix);
	}
	if (textid == STK_NONE) {
		/* cache full: memory stays bounded, the work is done each time */
		leaf = transform(S, prefix, nprefix, stack, len, NULL, 0, kframes, &dropped);
		return account(S, leaf, dropped, metric, count, t_ms, dur_ms);
	}
	return add_cached(S, prefix, nprefix, textid, ht, kframes, metric, count, t_ms, dur_ms);
}

uint32_t
stk_add(struct stk *S, const uint32_t *prefix, int nprefix, const char *stack,
    size_t len, int kframes, int64_t metric, int64_t count, double t_ms, double dur_ms)
{
	return add_stack(S, prefix, nprefix, stack, len, kframes, metric, count, t_ms, dur_ms,
	    NULL);
}

/* ------------------------------------------------------------------ */
/* line tails (struct tails)                                          */

static uint64_t
tail_hash_of(const void *owner, uint32_t i)
{
	return ((const struct tails *)owner)->ent[i].hash;
}

/* forgets every tail: they were read under another header */
static void
tails_clear(struct tails *T)
{
	T->n = 0;
	T->nbytes = 0;
	T->off = 0;
	T->lookups = T->hits = 0;
	T->pending = 0;
	memset(T->last, 0xff, sizeof T->last);
	if (T->tab.slot != NULL)
		memset(T->tab.slot, 0xff, ((size_t)T->tab.mask + 1) * sizeof *T->tab.slot);
}

/*
 * The key of a Sample line whose columns are C: its bytes from the kind
 * on, in two pieces when its first attribute is ip= (left out).
 */
static void
tail_key(const struct evt_cols *c, const char **p1, size_t *n1, const char **p2,
    size_t *n2)
{
	const char *end = c->line + c->len, *a = c->attrs, *tab;

	*p1 = c->col[EVT_KIND].p;
	*n1 = (size_t)(a - *p1);
	*p2 = a;
	if (end - a > 3 && memcmp(a, "ip=", 3) == 0 &&
	    (tab = memchr(a, '\t', (size_t)(end - a))) != NULL)
		*p2 = tab + 1;
	*n2 = (size_t)(end - *p2);
}

/* Whether entry E's key is P1[0..N1) then P2[0..N2). */
static int
tail_is(const struct tails *T, const struct tailent *e, const char *p1, size_t n1,
    const char *p2, size_t n2)
{
	return e->head == n1 && e->len == n1 + n2 && memcmp(T->bytes + e->at, p1, n1) == 0 &&
	    memcmp(T->bytes + e->at + n1, p2, n2) == 0;
}

/* The cpu column as an index of tails.last, or -1 (then only the hash finds the tail). */
static int
tail_cpu(struct evt_span col)
{
	int v = 0;
	size_t i;

	if (col.n == 0 || col.n > 4)
		return -1;
	for (i = 0; i < col.n; i++) {
		if (col.p[i] < '0' || col.p[i] > '9')
			return -1;
		v = v * 10 + (col.p[i] - '0');
	}
	return v < TAIL_CPUS ? v : -1;
}

/*
 * The entry of the tail of the Sample line C, or NULL; on a miss with
 * room left, the tail is copied (the parse writes NULs into the line)
 * and made pending: tail_keep makes it an entry once the line's
 * outcome is known.
 */
static const struct tailent *
tail_find(struct stk *S, const struct evt_cols *c)
{
	struct tails *T = &S->tails;
	const char *p1, *p2;
	size_t n1, n2;
	uint64_t hv;
	uint32_t h, idx;
	int cpu;

	T->pending = 0;
	if (T->off)
		return NULL;
	if (++T->lookups == TAIL_PROBE) {
		if (T->hits < TAIL_PROBE / 2) {
			T->off = 1;
			return NULL;
		}
		T->lookups = T->hits = 0;
	}
	tail_key(c, &p1, &n1, &p2, &n2);
	cpu = tail_cpu(c->col[EVT_CPU]);
	if (cpu >= 0 && T->last[cpu] != STK_NONE &&
	    tail_is(T, &T->ent[T->last[cpu]], p1, n1, p2, n2)) {
		T->hits++;
		return &T->ent[T->last[cpu]];
	}
	hv = hash_u64(hash_bytes(p1, n1) ^ hash_u64(hash_bytes(p2, n2) + n1));
	if (T->tab.slot == NULL)
		idtab_grow(&T->tab, T, 0, T->n, tail_hash_of);
	for (h = (uint32_t)hv & T->tab.mask; (idx = T->tab.slot[h]) != STK_NONE;
	    h = (h + 1) & T->tab.mask) {
		const struct tailent *e = &T->ent[idx];

		if (e->hash == hv && tail_is(T, e, p1, n1, p2, n2)) {
			T->hits++;
			if (cpu >= 0)
				T->last[cpu] = idx;
			return e;
		}
	}
	if (T->nbytes + n1 + n2 + (size_t)T->n * sizeof *T->ent >= TAIL_MAX_BYTES)
		return NULL;
	if (T->nbytes + n1 + n2 > T->capbytes) {
		T->capbytes = (T->nbytes + n1 + n2) * 2 + 65536;
		T->bytes = xrealloc(T->bytes, T->capbytes);
	}
	memcpy(T->bytes + T->nbytes, p1, n1);
	memcpy(T->bytes + T->nbytes + n1, p2, n2);
	memset(&T->cur, 0, sizeof T->cur);
	T->cur.hash = hv;
	T->cur.at = (uint32_t)T->nbytes;
	T->cur.head = (uint32_t)n1;
	T->cur.len = (uint32_t)(n1 + n2);
	T->cur.textid = STK_NONE;
	T->pending = 1;
	T->cpu = cpu;
	return NULL;
}

/* The pending tail, whose outcome is now in T->cur, becomes an entry. */
static void
tail_keep(struct tails *T)
{
	uint32_t h;

	if (!T->pending)
		return;
	T->pending = 0;
	if (!T->cur.idle && T->cur.textid == STK_NONE)
		return;		/* the text cache is full: nothing to replay */
	if (T->n == T->cap) {
		T->cap = T->cap ? T->cap * 2 : 256;
		T->ent = xrealloc(T->ent, T->cap * sizeof *T->ent);
	}
	T->ent[T->n] = T->cur;
	T->nbytes += T->cur.len;
	for (h = (uint32_t)T->cur.hash & T->tab.mask; T->tab.slot[h] != STK_NONE;
	    h = (h + 1) & T->tab.mask)
		;
	if (T->cpu >= 0)
		T->last[T->cpu] = T->n;
	T->tab.slot[h] = T->n++;
	if (T->n * 2 > T->tab.mask)
		idtab_grow(&T->tab, T, 0, T->n, tail_hash_of);
}

/* What the line of tail E does, at time T_MS: what feed_evt did with its first. */
static void
tail_replay(struct stk *S, const struct tailent *e, double t_ms)
{
	if (e->idle) {
		S->st.idle_events++;
		S->st.idle_metric = sadd(S->st.idle_metric, e->metric);
		return;
	}
	S->st.events++;
	S->st.metric = sadd(S->st.metric, e->metric);
	if (e->elided > 0) {
		S->st.deep_stacks++;
		S->st.elided_frames = sadd(S->st.elided_frames, e->elided);
	}
	add_cached(S, e->prefix, e->nprefix, e->textid, e->ht, e->kframes, e->metric, e->count,
	    t_ms, e->dur);
}

/* ------------------------------------------------------------------ */
/* input                                                               */

void
stk_reset_format(struct stk *S)
{
	S->format = 0;
}

/* Is the span S the text WORD?  (For a literal the compiler folds the strlen.) */
static int
span_is(struct evt_span s, const char *word)
{
	size_t n = strlen(word);

	return s.n == n && memcmp(s.p, word, n) == 0;
}

static int
kind_selected(struct stk *S, struct evt_span kind)
{
	int i;

	if (S->allkinds)
		return 1;
	/* every line's kind is asked about: the lengths first, and most differ */
	for (i = 0; i < S->nkinds; i++) {
		const char *k = S->kinds[i];
		size_t j;

		if (S->kindlen[i] != kind.n)
			continue;
		for (j = 0; j < kind.n && k[j] == kind.p[j]; j++)
			;
		if (j == kind.n)
			return 1;
	}
	return 0;
}

static void
take_header(struct stk *S, const char *line, size_t len)
{
	const char *why, *v;

	free(S->hdr);
	S->hdr = xstrndup(line, len);
	if (evt_parse_header(S->hdr, len, &S->header, &why) < 0) {
		S->header.nkv = 0;
		return;
	}
	tails_clear(&S->tails);	/* the root frames may differ now */
	S->scenario = STK_NONE;
	v = evt_header_get(&S->header, "scenario");
	if (v != NULL && *v && !S->cfg.no_scenario)
		S->scenario = stk_intern(S, v, strlen(v));
	v = evt_header_get(&S->header, "pointer_size");
	S->ptr32 = v != NULL && strcmp(v, "4") == 0;
	v = evt_header_get(&S->header, "sample_interval_ms");
	if (v == NULL || evt_parse_decimal(v, &S->sample_ms) < 0 || !(S->sample_ms > 0))
		S->sample_ms = 0;
	v = evt_header_get(&S->header, "duration_ms");
	if (v != NULL && S->cfg.when && !S->w_fixed && !S->w_seen) {
		double d;

		if (evt_parse_decimal(v, &d) == 0 && d > 0) {
			S->w_start = 0;
			S->w_width = d / STK_WHEN_BUCKETS;
			S->w_fixed = 1;
		}
	}
}

/*
 * Root pseudo-frames for an evt event from its process, pid and tid
 * columns.  Each is cut to fit the buffer: they are the line's, and a
 * pid of a thousand digits is still an integer.
 */
static int
root_frames(struct stk *S, uint32_t *prefix, struct evt_span proc, struct evt_span pid,
    struct evt_span tid)
{
	char buf[1024];
	int n = 0, k;
	int pl = (int)(proc.n > 900 ? 900 : proc.n);
	int il = (int)(pid.n > 40 ? 40 : pid.n), tl = (int)(tid.n > 40 ? 40 : tid.n);

	if (S->scenario != STK_NONE)
		prefix[n++] = S->scenario;
	switch (S->cfg.roots) {
	case STK_ROOTS_NONE:
		break;
	case STK_ROOTS_PROCESS:
	case STK_ROOTS_THREAD: {
		size_t el = proc.n;

		if (el > 4 && strncasecmp(proc.p + el - 4, ".exe", 4) == 0)
			el -= 4;
		k = snprintf(buf, sizeof buf, "Process%s %.*s (%.*s)", S->ptr32 ? "32" : "64",
		    (int)(el > 900 ? 900 : el), proc.p, il, pid.p);
		prefix[n++] = stk_intern(S, buf, (size_t)k);
		if (S->cfg.roots == STK_ROOTS_THREAD) {
			k = snprintf(buf, sizeof buf, "Thread (%.*s)", tl, tid.p);
			prefix[n++] = stk_intern(S, buf, (size_t)k);
		}
		break;
	}
	default: {
		char *q;

		if (S->cfg.roots == STK_ROOTS_COMM)
			k = snprintf(buf, sizeof buf, "%.*s", pl, proc.p);
		else if (S->cfg.roots == STK_ROOTS_PID)
			k = snprintf(buf, sizeof buf, "%.*s-%.*s", pl, proc.p, il, pid.p);
		else
			k = snprintf(buf, sizeof buf, "%.*s-%.*s/%.*s", pl, proc.p, il, pid.p,
			    tl, tid.p);
		for (q = buf; *q; q++)	/* stackcollapse-perf: spaces in comm become _ */
			if (*q == ' ' || *q == ';')
				*q = *q == ' ' ? '_' : ':';
		prefix[n++] = stk_intern(S, buf, (size_t)k);
		break;
	}
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* thread time: PerfView's Thread Time view over Ready/Waiting lines   */

/* the waker attributes of a Waiting line (docs/evt-format.md) */
struct tt_waker {
	struct evt_span tid, pid, process, stack, routine;
};

static void
tt_attr(struct tt_waker *w, struct evt_span key, struct evt_span val)
{
	if (key.n < 7 || memcmp(key.p, "waker_", 6) != 0)
		return;
	if (span_is(key, "waker_tid"))
		w->tid = val;
	else if (span_is(key, "waker_pid"))
		w->pid = val;
	else if (span_is(key, "waker_process"))
		w->process = val;
	else if (span_is(key, "waker_stack"))
		w->stack = val;
	else if (span_is(key, "waker_routine"))
		w->routine = val;
}

/* Is the last frame of B (from byte FROM on) one of NAMES? */
static int
tt_leaf_in(const struct strbuf *b, size_t from, const char *const *names)
{
	const char *semi, *leaf = b->s + from;
	size_t n = b->len - from;

	if (n == 0)
		return 0;
	semi = mem_last(leaf, ';', n);
	if (semi != NULL) {
		n -= (size_t)(semi + 1 - leaf);
		leaf = semi + 1;
	}
	for (; *names; names++)
		if (strlen(*names) == n && memcmp(*names, leaf, n) == 0)
			return 1;
	return 0;
}

/* S[0..N) with the frame separator ';' as ':' (names from attributes) */
static void
tt_add_name(struct strbuf *b, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && i < 900; i++)
		strbuf_addc(b, s[i] == ';' ? ':' : s[i]);
}

/*
 * The waker's process and thread frames, spelt as the roots are
 * (PerfView's "Process64 app (12)" and "Thread (34)" unless a
 * FlameGraph style was asked for).
 */
static void
tt_thread_frames(struct stk *S, struct strbuf *b, const struct tt_waker *w)
{
	struct evt_span proc = w->process, pid = w->pid;
	size_t start = b->len, i;

	if (proc.n == 0)
		proc.p = "?", proc.n = 1;
	if (pid.n == 0)
		pid.p = "-1", pid.n = 2;
	switch (S->cfg.roots) {
	case STK_ROOTS_COMM:
	case STK_ROOTS_PID:
	case STK_ROOTS_TID:
		tt_add_name(b, proc.p, proc.n);
		if (S->cfg.roots != STK_ROOTS_COMM) {
			strbuf_addc(b, '-');
			tt_add_name(b, pid.p, pid.n > 40 ? 40 : pid.n);
		}
		if (S->cfg.roots == STK_ROOTS_TID) {
			strbuf_addc(b, '/');
			tt_add_name(b, w->tid.p, w->tid.n > 40 ? 40 : w->tid.n);
		}
		for (i = start; i < b->len; i++)	/* as root_frames: no spaces */
			if (b->s[i] == ' ')
				b->s[i] = '_';
		return;
	default:
		if (proc.n > 4 && strncasecmp(proc.p + proc.n - 4, ".exe", 4) == 0)
			proc.n -= 4;
		strbuf_addf(b, "Process%s ", S->ptr32 ? "32" : "64");
		tt_add_name(b, proc.p, proc.n);
		strbuf_adds(b, " (");
		tt_add_name(b, pid.p, pid.n > 40 ? 40 : pid.n);
		strbuf_adds(b, ");Thread (");
		tt_add_name(b, w->tid.p, w->tid.n > 40 ? 40 : w->tid.n);
		strbuf_addc(b, ')');
	}
}

/*
 * PerfView's "Thread Time (with ReadyThread)": under the wait's
 * pseudo-frame, (READIED_BY), the waker's process and thread, its stack
 * at the ReadyThread, and the DPC or ISR routine that readied the
 * thread when there was one.
 */
static void
tt_readied_by(struct stk *S, struct strbuf *b, const struct tt_waker *w)
{
	strbuf_adds(b, ";(READIED_BY);");
	tt_thread_frames(S, b, w);
	if (w->stack.n) {
		strbuf_addc(b, ';');
		strbuf_add(b, w->stack.p, w->stack.n);
	}
	if (w->routine.n) {
		/* the routine is the leaf, unless the waker's stack ends with it */
		const char *leaf = NULL, *semi;
		size_t n = 0;

		if (w->stack.n) {
			semi = mem_last(w->stack.p, ';', w->stack.n);
			leaf = semi ? semi + 1 : w->stack.p;
			n = (size_t)(w->stack.p + w->stack.n - leaf);
		}
		if (n != w->routine.n || memcmp(leaf, w->routine.p, n) != 0) {
			strbuf_addc(b, ';');
			tt_add_name(b, w->routine.p, w->routine.n);
		}
	}
	S->st.readied_by++;
}

/*
 * The stack a thread-time line is charged to: a Sample's ends with
 * CPU_TIME; a Ready line's with READIED_TIME and a Waiting line's with
 * its wait pseudo-frame (etl2evt writes them; added when missing); with
 * --readied-by a wait goes on into its waker.  Other kinds are as read.
 */
static void
tt_stack(struct stk *S, const struct tt_waker *w, struct evt_span kind, char **stack,
    size_t *len)
{
	static const char *const ready[] = { "READIED_TIME", NULL };
	static const char *const wait[] = { "BLOCKED_TIME", "DISK_TIME", "HARD_FAULT",
	    "NETWORK_TIME", NULL };
	struct strbuf *b = &S->ttbuf;
	const char *leaf;
	int waiting = span_is(kind, "Waiting");

	strbuf_reset(b);
	strbuf_add(b, *stack, *len);
	if (span_is(kind, "Sample"))
		leaf = "CPU_TIME";
	else if (span_is(kind, "Ready"))
		leaf = tt_leaf_in(b, 0, ready) ? NULL : "READIED_TIME";
	else if (waiting)
		leaf = tt_leaf_in(b, 0, wait) ? NULL : "BLOCKED_TIME";
	else
		return;
	if (leaf != NULL) {
		if (b->len)
			strbuf_addc(b, ';');
		strbuf_adds(b, leaf);
	}
	if (waiting && S->cfg.readied_by && w->tid.n)
		tt_readied_by(S, b, w);
	*stack = b->s;
	*len = b->len;
}

/*
 * kframes=VAL as strtol reads it (so a sign or leading blanks pass, as
 * they always have), without the call for the usual one or two digits.
 * 0 with *KF, or -1.
 */
static int
parse_kframes(struct evt_span val, int *kf)
{
	char *ke;
	long v;
	size_t i;

	if (val.n > 0 && val.n <= 9) {
		for (i = 0, v = 0; i < val.n && val.p[i] >= '0' && val.p[i] <= '9'; i++)
			v = v * 10 + (val.p[i] - '0');
		if (i == val.n) {
			*kf = (int)v;
			return 0;
		}
	}
	val.p[val.n] = '\0';
	errno = 0;
	v = strtol(val.p, &ke, 10);
	if (*ke || errno || v < 0 || v > 0x7fffffff)
		return -1;
	*kf = (int)v;
	return 0;
}

/*
 * The entry of a Sample line's tail (struct tails), or NULL: then it is
 * parsed, and when tails.pending its outcome is kept for the next.
 * Thread time reads the waker's attributes: no tails there.
 */
static const struct tailent *
sample_tail(struct stk *S, const struct evt_cols *c)
{
	S->tails.pending = 0;
	if (S->cfg.thread_time || !span_is(c->col[EVT_KIND], "Sample"))
		return NULL;
	return tail_find(S, c);
}

/*
 * An evt event: the columns through lib/evt's reader, then the only
 * attributes that matter here (count=, kframes=, routine=).
 */
static int
feed_evt(struct stk *S, char *line, size_t len, const char **why)
{
	struct evt_cols c;
	struct evt_span key, val;
	char *at, *stack, *routine = NULL;
	int i, r, cpu, kframes = 0, np, in_interrupt = 0;
	long pid, tid;
	int64_t metric, count = 1;
	size_t stacklen;
	double t;
	uint32_t prefix[4];
	struct tt_waker waker;
	const struct tailent *seen;
	struct tails *T = &S->tails;

	/* lines of kinds not read (most of a DPC-heavy trace) are split, not parsed */
	if (evt_split(line, len, &c, why) < 0)
		return -1;
	if (S->cfg.thread_time)
		memset(&waker, 0, sizeof waker);
	if (!kind_selected(S, c.col[EVT_KIND])) {
		S->st.other_kinds++;
		return 0;
	}
	/* the time is checked on every line, converted only for first/last and When */
	t = NAN;
	if ((S->cfg.no_times ? evt_cols_time_ok(&c, why) : evt_cols_time(&c, &t, why)) < 0)
		return -1;
	if ((seen = sample_tail(S, &c)) != NULL) {
		tail_replay(S, seen, t);
		return 0;
	}
	if (evt_cols_weight_ns(&c, &metric, why) < 0 ||
	    evt_cols_cpu(&c, &cpu, why) < 0 || evt_cols_pid(&c, &pid, why) < 0 ||
	    evt_cols_tid(&c, &tid, why) < 0)
		return -1;
	if (S->cfg.thread_time && pid == 0) {
		/* PerfView's Thread Time leaves the Idle process out */
		S->st.idle_events++;
		S->st.idle_metric = sadd(S->st.idle_metric, metric);
		return 0;
	}
	at = c.attrs;
	while ((r = evt_next_attr(&c, &at, &key, &val, why)) > 0) {
		if (span_is(key, "count")) {
			if (parse_count(val.p, val.n, &count) < 0) {
				*why = "count= is not an integer from 0 to 1e9";
				return -1;
			}
		} else if (span_is(key, "kframes")) {
			if (parse_kframes(val, &kframes) < 0) {
				*why = "kframes= is not a non-negative integer";
				return -1;
			}
		} else if (span_is(key, "routine")) {
			val.p[val.n] = '\0';
			routine = val.p;
		} else if ((span_is(key, "dpc") || span_is(key, "isr")) && span_is(val, "1")) {
			in_interrupt = 1;
		} else if (S->cfg.thread_time) {
			tt_attr(&waker, key, val);
		}
	}
	if (r < 0)
		return -1;
	if (!S->cfg.keep_idle &&
	    stk_idle_event(c.col[EVT_KIND], c.col[EVT_PROCESS], pid, in_interrupt)) {
		int64_t m = S->cfg.unit == STK_UNIT_SAMPLES ? count * 1000000 : metric;

		S->st.idle_events++;
		S->st.idle_metric = sadd(S->st.idle_metric, m);
		if (T->pending) {
			T->cur.idle = 1;
			T->cur.metric = m;
			tail_keep(T);
		}
		return 0;
	}
	stack = at;	/* after the last attribute */
	stacklen = (size_t)(line + len - at);
	np = root_frames(S, prefix, c.col[EVT_PROCESS], c.col[EVT_PID], c.col[EVT_TID]);
	if (routine != NULL && *routine) {
		/* DPC/ISR: the routine is the leaf (WPA's "by Module, Function") */
		size_t rl = strlen(routine), j;
		char *buf;
		const char *lastf = stacklen ? stack + stacklen : NULL;

		if (lastf != NULL) {
			const char *semi = mem_last(stack, ';', stacklen);

			lastf = semi ? semi + 1 : stack;
		}
		if (lastf == NULL || (size_t)(stack + stacklen - lastf) != rl ||
		    memcmp(lastf, routine, rl) != 0) {
			if (stacklen + rl + 2 > S->capstk) {
				S->capstk = (stacklen + rl + 2) * 2;
				S->stkbuf = xrealloc(S->stkbuf, S->capstk);
			}
			buf = S->stkbuf;
			memcpy(buf, stack, stacklen);
			j = stacklen;
			if (stacklen)
				buf[j++] = ';';
			for (i = 0; i < (int)rl; i++)
				buf[j++] = routine[i] == ';' ? ':' : routine[i];
			stack = buf;
			stacklen = j;
		}
	}
	if (S->cfg.thread_time)
		tt_stack(S, &waker, c.col[EVT_KIND], &stack, &stacklen);
	{
		/* how long the event lasted (Last = its end); bytes are no time */
		double dur = S->cfg.unit == STK_UNIT_BYTES ? 0 : (double)metric / 1e6;

		if (S->cfg.unit == STK_UNIT_SAMPLES)
			metric = count * 1000000;
		add_stack(S, prefix, np, stack, stacklen, kframes, metric, count, t, dur,
		    T->pending ? &T->cur : NULL);
		tail_keep(T);
	}
	return 0;
}

/*
 * A folded line's stack, metric (millionths of its count, exact) and
 * count of events; -1 with *WHY for a malformed line.  The reader thread
 * of folded input (fold_reader) calls it too: no state.
 */
static int
parse_folded(char *line, size_t len, char **stack, size_t *slen, int64_t *metric,
    int64_t *count, const char **why)
{
	double c1, c2;
	int has2;
	char *e = line + len, *t;

	if (folded_parse(line, len, stack, slen, &c1, &c2, &has2) < 0) {
		*why = FOLDED_MALFORMED;
		return -1;
	}
	if (has2) {
		*why = "two-column (differential) folded line; use diff";
		return -1;
	}
	/* exact count: re-parse the last token */
	while (e > line && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	t = e;
	while (t > line && t[-1] != ' ' && t[-1] != '\t' && t[-1] != '\0')
		t--;
	if (evt_parse_millionths(t, (size_t)(e - t), metric) < 0) {
		*why = "bad count";
		return -1;
	}
	*count = c1 >= 1 ? (int64_t)llround(c1) : 1;
	return 0;
}

/* the root frames of a folded line: the scenario's, if a header named one */
static int
folded_prefix(const struct stk *S, uint32_t *prefix)
{
	if (S->scenario == STK_NONE)
		return 0;
	prefix[0] = S->scenario;
	return 1;
}

static int
feed_folded(struct stk *S, char *line, size_t len, const char **why)
{
	char *stack;
	size_t slen;
	int64_t metric, count;
	uint32_t prefix[1];
	int np;

	if (parse_folded(line, len, &stack, &slen, &metric, &count, why) < 0)
		return -1;
	np = folded_prefix(S, prefix);
	stk_add(S, prefix, np, stack, slen, 0, metric, count, NAN, 0);
	return 0;
}

int
stk_feed(struct stk *S, char *line, size_t len, const char **why)
{
	enum evt_linetype lt = evt_classify(line, len);

	if (lt == EVT_BLANK)
		return 0;
	if (S->format == 0) {
		S->format = lt == EVT_HEADER ? 1 : 2;
		if (S->format == 2)
			S->is_folded_input = 1;
	}
	if (lt == EVT_HEADER) {
		take_header(S, line, len);
		return 0;
	}
	if (lt == EVT_META)
		return 0;
	if (S->format == 1)
		return feed_evt(S, line, len, why);
	return feed_folded(S, line, len, why);
}

/* ------------------------------------------------------------------ */
/* folded input on both cores                                         */

/*
 * A folded pipe or gzip file (a regular file is cut into pieces: see
 * read_pieces) is read by three threads in a pipeline, each handing
 * the next batches of records in input order.  The line thread
 * (fold_lines) takes the lines from lib/evt's line reader, parses each
 * count and hashes each stack; the reader (fold_reader) finds each
 * stack in a cache of its own (struct foldcache: frame names and stacks
 * as frame ids, the same scheme as the stk's); the caller's thread does
 * what stk_add does with the reader's records (the tree and the sums).
 * On two cores the three take about a third of the work each.  The tree sees
 * every stack, frame name and sample in the order one thread would, so
 * the output is the same, byte for byte.  The reader sends a new frame
 * name and a new stack's frame ids once; a repeated stack is one small
 * record.  What the reader cannot cache (a stack deeper than
 * EVT_MAX_STACK_FRAMES, or any new stack once its cache is full) goes
 * as text to stk_add; header lines go to stk_feed; malformed lines go
 * with why, so the caller reports them as stk_read always has.
 */

enum { FR_FRAME, FR_TEXT, FR_SAMPLE, FR_STACK, FR_LINE, FR_BAD, FR_FOLDED };

struct frec {
	int type;
	uint32_t id;		/* FR_FRAME: its frame id; FR_TEXT, FR_SAMPLE: its stack id (the reader's) */
	size_t off, n;		/* its bytes in the batch's arena (FR_TEXT: N frame ids) */
	uint64_t hash;		/* FR_FOLDED (a line thread's stack): the hash of its text */
	int64_t metric, count;	/* FR_TEXT: count = frame names it cut */
	unsigned long lineno;
	const char *why;	/* FR_BAD */
};

#define FB_RECS 4096		/* records per batch... */
#define FB_ARENA (1u << 18)	/* ...or this many bytes of names and stacks */
#define FB_BATCHES 4		/* in flight: memory stays a few MB whatever the input */

struct fbatch {
	struct frec rec[FB_RECS];
	size_t nrec;
	char *arena;
	size_t narena, caparena;
	int last;		/* the reader's last batch */
};

/* the reader's cache; kept in the stk across files, as the stk's own cache is */
struct foldcache {
	struct intern names;	/* frame names, spelled as intern_frame spells them */
	uint32_t *pool;		/* the stacks' frame ids */
	size_t npool, cappool;
	struct ftext {
		uint64_t hash;
		uint32_t ids, nids;
		uint32_t epoch;	/* the header it was last sent under */
	} *txt;
	uint32_t ntxt, captxt;
	struct idtab tab;	/* txt ids by hash, STK_NONE free */
	char *tmp;		/* a frame name being spelled */
	size_t captmp;
	uint32_t epoch;		/* header lines read: a stack's leaf depends on the header's scenario */
	/* the caller's thread: the reader's frame ids to the stk's, its stacks' leaves */
	uint32_t *gframe, capgframe;
	struct fres {
		uint32_t leaf;
		int dropped;
	} *gres;
	uint32_t capgres;
	uint32_t *gids;		/* a stack's frame ids as the stk's */
	size_t capgids;
};

/* batches from one thread to the next */
struct fring {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct fbatch *b[FB_BATCHES];
	unsigned long wi, ri;	/* batches filled, taken; b[i % FB_BATCHES] */
	struct fbatch *cur;	/* the batch being filled */
};

struct foldpipe {
	struct stk *S;
	struct foldcache *fc;
	struct linereader *lr;
	char *first;		/* the file's first line, read by the caller */
	size_t firstlen;
	unsigned long firstno;
	struct fring lines;	/* line thread -> reader */
	struct fring recs;	/* reader -> caller */
};

static void
foldcache_free(struct foldcache *fc)
{
	if (fc == NULL)
		return;
	intern_release(&fc->names);
	free(fc->pool);
	free(fc->txt);
	free(fc->tab.slot);
	free(fc->tmp);
	free(fc->gframe);
	free(fc->gres);
	free(fc->gids);
	free(fc);
}

/* room for N more bytes in the arena, aligned for frame ids */
static size_t
arena_take(struct fbatch *b, size_t n)
{
	size_t off = (b->narena + 3) & ~(size_t)3;

	if (off + n > b->caparena) {
		/* a batch goes once FB_ARENA is reached: room for that and one more line */
		b->caparena = off + n < FB_ARENA ? FB_ARENA + 65536 : (off + n) + (off + n) / 4;
		b->arena = xrealloc(b->arena, b->caparena);
	}
	b->narena = off + n;
	return off;
}

static void
ring_init(struct fring *q)
{
	int i;

	memset(q, 0, sizeof *q);
	for (i = 0; i < FB_BATCHES; i++) {
		/* not zeroed: a small input touches the first pages only */
		q->b[i] = xmalloc(sizeof *q->b[i]);
		q->b[i]->nrec = q->b[i]->narena = q->b[i]->caparena = 0;
		q->b[i]->arena = NULL;
		q->b[i]->last = 0;
	}
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
}

static void
ring_free(struct fring *q)
{
	int i;

	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	for (i = 0; i < FB_BATCHES; i++) {
		free(q->b[i]->arena);
		free(q->b[i]);
	}
}

/* the filled batch goes to the next thread */
static void
ring_push(struct fring *q, int last)
{
	pthread_mutex_lock(&q->mu);
	q->cur->last = last;
	q->wi++;
	pthread_cond_broadcast(&q->cv);
	q->cur = NULL;
	pthread_mutex_unlock(&q->mu);
}

/* the next thread's next batch (it waits for one) */
static struct fbatch *
ring_take(struct fring *q)
{
	struct fbatch *b;

	pthread_mutex_lock(&q->mu);
	while (q->ri == q->wi)
		pthread_cond_wait(&q->cv, &q->mu);
	b = q->b[q->ri % FB_BATCHES];
	pthread_mutex_unlock(&q->mu);
	return b;
}

/* ...and gives it back, done */
static void
ring_done(struct fring *q)
{
	pthread_mutex_lock(&q->mu);
	q->ri++;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

/* a batch to fill (the filling thread waits while every batch is full) */
static void
ring_batch(struct fring *q)
{
	if (q->cur == NULL) {
		pthread_mutex_lock(&q->mu);
		while (q->wi - q->ri == FB_BATCHES)
			pthread_cond_wait(&q->cv, &q->mu);
		q->cur = q->b[q->wi % FB_BATCHES];
		pthread_mutex_unlock(&q->mu);
		q->cur->nrec = 0;
		q->cur->narena = 0;
		q->cur->last = 0;
	}
}

/* the next record to fill */
static struct frec *
ring_rec(struct fring *q, int type, unsigned long lineno)
{
	struct frec *r;

	if (q->cur != NULL && (q->cur->nrec == FB_RECS || q->cur->narena >= FB_ARENA))
		ring_push(q, 0);
	ring_batch(q);
	r = &q->cur->rec[q->cur->nrec++];
	memset(r, 0, sizeof *r);
	r->type = type;
	r->lineno = lineno;
	return r;
}

/* a record carrying N bytes of S */
static struct frec *
ring_bytes(struct fring *q, int type, unsigned long lineno, const char *s, size_t n,
    int64_t metric, int64_t count)
{
	struct frec *r = ring_rec(q, type, lineno);

	r->off = arena_take(q->cur, n + 1);
	memcpy(q->cur->arena + r->off, s, n);
	q->cur->arena[r->off + n] = '\0';
	r->n = n;
	r->metric = metric;
	r->count = count;
	return r;
}

/*
 * intern_frame's spelling of the frame S (N bytes): S itself, or in
 * *TMP (grown as needed) with "%3B" as ':' and a name over
 * STK_MAX_FRAME cut to end "..." (counted in *CUT).  *LEN is its length.
 */
static const char *
spell_frame(const char *s, size_t n, char **tmp, size_t *captmp, size_t *len, int64_t *cut)
{
	size_t i, o = 0, lim = n;
	char *t;

	if (n <= STK_MAX_FRAME && (n < 3 || memchr(s, '%', n - 2) == NULL)) {
		*len = n;	/* spelled as it is (most names) */
		return s;
	}
	if (n > STK_MAX_FRAME) {
		lim = STK_MAX_FRAME - 3;
		(*cut)++;
	}
	if (lim + 4 > *captmp) {
		*captmp = (lim + 4) * 2;
		*tmp = xrealloc(*tmp, *captmp);
	}
	t = *tmp;
	for (i = 0; i < lim; i++) {
		if (s[i] == '%' && i + 2 < lim && s[i + 1] == '3' &&
		    (s[i + 2] == 'B' || s[i + 2] == 'b')) {
			t[o++] = ':';
			i += 2;
		} else {
			t[o++] = s[i];
		}
	}
	if (n > STK_MAX_FRAME) {
		memcpy(t + o, "...", 3);
		o += 3;
	}
	*len = o;
	return t;
}

/* intern_frame's spelling of a frame, in the reader's cache; *CUT counts long names */
static uint32_t
reader_frame(struct foldpipe *P, const char *s, size_t n, int64_t *cut, unsigned long lineno)
{
	struct foldcache *fc = P->fc;
	uint32_t id, before = fc->names.n;
	size_t len;
	const char *name = spell_frame(s, n, &fc->tmp, &fc->captmp, &len, cut);

	id = intern_add(&fc->names, name, len);
	if (id == before)
		ring_bytes(&P->recs, FR_FRAME, lineno, name, len, 0, 0)->id = id;
	return id;
}

static uint64_t
reader_hash_of(const void *owner, uint32_t i)
{
	return ((const struct foldcache *)owner)->txt[i].hash;
}

/* sends the frame ids of the reader's stack IDX (CUT: frame names it cut) */
static void
reader_text(struct foldpipe *P, uint32_t idx, int64_t cut, unsigned long lineno)
{
	const struct ftext *t = &P->fc->txt[idx];
	struct frec *r = ring_rec(&P->recs, FR_TEXT, lineno);
	struct fbatch *b = P->recs.cur;

	r->id = idx;
	r->count = cut;
	r->n = t->nids;
	r->off = arena_take(b, t->nids * sizeof *P->fc->pool);
	memcpy(b->arena + r->off, P->fc->pool + t->ids, t->nids * sizeof *P->fc->pool);
}

/*
 * The reader's id of STACK (hash HV), added if new (its frames and ids
 * sent first); STK_NONE when it cannot be cached: deeper than
 * EVT_MAX_STACK_FRAMES (stk_add cuts it) or the cache is full.
 */
static uint32_t
reader_stack(struct foldpipe *P, const char *stack, size_t len, uint64_t hv,
    unsigned long lineno)
{
	struct foldcache *fc = P->fc;
	uint32_t h, idx, *ids;
	const char *p, *e = stack + len;
	size_t n, k;
	int64_t cut = 0;

	if (fc->tab.slot == NULL)
		idtab_grow(&fc->tab, fc, 0, fc->ntxt, reader_hash_of);
	for (h = (uint32_t)hv & fc->tab.mask; (idx = fc->tab.slot[h]) != STK_NONE; h = (h + 1) & fc->tab.mask)
		if (fc->txt[idx].hash == hv &&
		    text_is(&fc->names, fc->pool + fc->txt[idx].ids, fc->txt[idx].nids, stack, len)) {
			if (fc->txt[idx].epoch != fc->epoch) {
				/* a header came between: its leaf is found again */
				fc->txt[idx].epoch = fc->epoch;
				reader_text(P, idx, 0, lineno);
			}
			return idx;
		}
	n = count_frames(stack, len);
	if (n > EVT_MAX_STACK_FRAMES)
		return STK_NONE;
	/* the cap of the stk's own cache, names included here: they are a second copy */
	if ((fc->npool + n) * sizeof *fc->pool + (size_t)fc->ntxt * sizeof *fc->txt +
	    ((size_t)fc->tab.mask + 1) * sizeof *fc->tab.slot + fc->names.nchunks * ((size_t)1 << 20) +
	    (size_t)fc->names.n * 12 + ((size_t)fc->names.mask + 1) * 4 >= RAW_CACHE_MAX_BYTES)
		return STK_NONE;
	if (fc->npool + n > fc->cappool) {
		fc->cappool = (fc->npool + n) * 2 + 4096;
		fc->pool = xrealloc(fc->pool, fc->cappool * sizeof *fc->pool);
	}
	ids = fc->pool + fc->npool;
	for (k = 0, p = stack; k < n; k++) {
		const char *semi = memchr(p, ';', (size_t)(e - p));
		const char *fe = semi ? semi : e;

		ids[k] = reader_frame(P, p, (size_t)(fe - p), &cut, lineno);
		p = fe + 1;
	}
	if (fc->ntxt == fc->captxt) {
		fc->captxt = fc->captxt ? fc->captxt * 2 : 1024;
		fc->txt = xrealloc(fc->txt, fc->captxt * sizeof *fc->txt);
	}
	fc->txt[fc->ntxt].hash = hv;
	fc->txt[fc->ntxt].ids = (uint32_t)fc->npool;
	fc->txt[fc->ntxt].nids = (uint32_t)n;
	fc->txt[fc->ntxt].epoch = fc->epoch;
	fc->npool += n;
	idx = fc->ntxt++;
	fc->tab.slot[h] = idx;
	if (fc->ntxt * 2 > fc->tab.mask)
		idtab_grow(&fc->tab, fc, 0, fc->ntxt, reader_hash_of);
	reader_text(P, idx, cut, lineno);
	return idx;
}

/* the line thread's work on one line: its count, its stack and the stack's hash */
static void
line_parse(struct fring *q, char *line, size_t len, unsigned long lineno)
{
	enum evt_linetype lt = evt_classify(line, len);
	char *stack;
	size_t slen;
	int64_t metric, count;
	const char *why;
	struct frec *r;

	if (lt == EVT_BLANK || lt == EVT_META)
		return;		/* stk_feed ignores them in folded input */
	if (lt == EVT_HEADER) {
		ring_bytes(q, FR_LINE, lineno, line, len, 0, 0);
		return;
	}
	if (parse_folded(line, len, &stack, &slen, &metric, &count, &why) < 0) {
		r = ring_rec(q, FR_BAD, lineno);
		r->why = why;
		return;
	}
	r = ring_bytes(q, FR_FOLDED, lineno, stack, slen, metric, count);
	r->hash = hash_bytes(stack, slen);
}

static void *
fold_lines(void *arg)
{
	struct foldpipe *P = arg;
	char *line;
	size_t len;

	line_parse(&P->lines, P->first, P->firstlen, P->firstno);
	while ((line = lr_next(P->lr, &len)) != NULL) {
		line_parse(&P->lines, line, len, lr_lineno(P->lr));
		lr_progress(P->lr);
	}
	ring_batch(&P->lines);	/* the last batch goes even when empty */
	ring_push(&P->lines, 1);
	return NULL;
}

/* the reader's work on one of the line thread's records */
static void
reader_take(struct foldpipe *P, struct fbatch *b, const struct frec *in)
{
	struct frec *r;
	uint32_t id;

	switch (in->type) {
	case FR_LINE:
		ring_bytes(&P->recs, FR_LINE, in->lineno, b->arena + in->off, in->n, 0, 0);
		P->fc->epoch++;
		return;
	case FR_BAD:
		ring_rec(&P->recs, FR_BAD, in->lineno)->why = in->why;
		return;
	}
	id = reader_stack(P, b->arena + in->off, in->n, in->hash, in->lineno);
	if (id == STK_NONE) {
		ring_bytes(&P->recs, FR_STACK, in->lineno, b->arena + in->off, in->n, in->metric,
		    in->count);
		return;
	}
	r = ring_rec(&P->recs, FR_SAMPLE, in->lineno);
	r->id = id;
	r->metric = in->metric;
	r->count = in->count;
}

static void *
fold_reader(void *arg)
{
	struct foldpipe *P = arg;
	int last = 0;
	size_t k;

	while (!last) {
		struct fbatch *b = ring_take(&P->lines);

		for (k = 0; k < b->nrec; k++)
			reader_take(P, b, &b->rec[k]);
		last = b->last;
		ring_done(&P->lines);
	}
	ring_batch(&P->recs);
	ring_push(&P->recs, 1);
	return NULL;
}

/*
 * Whether PATH is read with threads (folded input only, S->threads).  A
 * regular file under 64 KB is read on the caller's thread alone: that
 * takes less time than starting threads would (render on a few thousand
 * lines is the common case).  Evt is always read on one thread: a line
 * thread for it (tried) saves wall time only on a free core and costs a
 * quarter more CPU time, each line copied, and evt mostly comes from
 * etl2evt, which has the other core.
 */
static int
read_threads(const char *path)
{
	struct stat st;
	int r = path == NULL || strcmp(path, "-") == 0 ? fstat(0, &st) : stat(path, &st);

	return !(r == 0 && S_ISREG(st.st_mode) && st.st_size < 65536);
}

/* what stk_read keeps while it reads one file */
struct readstate {
	const char *name;
	long bad;
	int64_t deep0, elided0;
	unsigned long first_deep;
};

static void
read_bad(struct readstate *rs, unsigned long lineno, const char *why)
{
	if (rs->bad < 10)
		cli_warn("%s:%lu: %s", rs->name, lineno, why);
	rs->bad++;
}

/* the caller's side: one of the reader's records, as stk_feed would do its line */
static void
take_record(struct stk *S, struct fbatch *b, const struct frec *r, struct readstate *rs)
{
	struct foldcache *fc = S->fc;
	uint32_t prefix[1], i, leaf;
	const uint32_t *ids;
	const char *why;
	int np, dropped;

	switch (r->type) {
	case FR_FRAME:
		if (r->id >= fc->capgframe) {
			fc->capgframe = fc->capgframe ? fc->capgframe * 2 : 4096;
			fc->gframe = xrealloc(fc->gframe, fc->capgframe * sizeof *fc->gframe);
		}
		fc->gframe[r->id] = stk_intern(S, b->arena + r->off, r->n);
		break;
	case FR_TEXT:
		/* a new stack (or the first after a header): its leaf, as stk_add finds it */
		if (r->id >= fc->capgres) {
			fc->capgres = r->id * 2 + 4096;
			fc->gres = xrealloc(fc->gres, fc->capgres * sizeof *fc->gres);
		}
		if (r->n > fc->capgids) {
			fc->capgids = r->n * 2;
			fc->gids = xrealloc(fc->gids, fc->capgids * sizeof *fc->gids);
		}
		ids = (const uint32_t *)(const void *)(b->arena + r->off);
		for (i = 0; i < r->n; i++)
			fc->gids[i] = fc->gframe[ids[i]];
		np = folded_prefix(S, prefix);
		fc->gres[r->id].leaf = transform(S, prefix, np, NULL, 0, fc->gids, r->n, 0,
		    &fc->gres[r->id].dropped);
		S->st.long_frames += r->count;
		break;
	case FR_SAMPLE:
		S->st.events++;
		S->st.metric = sadd(S->st.metric, r->metric);
		account(S, fc->gres[r->id].leaf, fc->gres[r->id].dropped, r->metric, r->count,
		    NAN, 0);
		break;
	case FR_STACK:
		np = folded_prefix(S, prefix);
		if (count_frames(b->arena + r->off, r->n) > EVT_MAX_STACK_FRAMES) {
			/* deep: stk_add cuts it, counts it and caches what is left */
			stk_add(S, prefix, np, b->arena + r->off, r->n, 0, r->metric, r->count,
			    NAN, 0);
			break;
		}
		/* the reader's cache is full: as stk_add does when its own is */
		S->st.events++;
		S->st.metric = sadd(S->st.metric, r->metric);
		leaf = transform(S, prefix, np, b->arena + r->off, r->n, NULL, 0, 0, &dropped);
		account(S, leaf, dropped, r->metric, r->count, NAN, 0);
		break;
	case FR_LINE:
		if (stk_feed(S, b->arena + r->off, r->n, &why) < 0)
			read_bad(rs, r->lineno, why);
		break;
	case FR_BAD:
		read_bad(rs, r->lineno, r->why);
		break;
	}
	if (rs->first_deep == 0 && S->st.deep_stacks != rs->deep0)
		rs->first_deep = r->lineno;
}

/*
 * A folded file from its first line LINE (LEN bytes, still in LR's
 * buffer) on: 0, or -1 if no thread could be started (the caller reads
 * on alone).
 */
static int
read_folded(struct stk *S, struct linereader *lr, char *line, size_t len,
    struct readstate *rs)
{
	struct foldpipe P;
	pthread_t lines, reader;
	int last = 0, err;
	size_t k;

	if (!S->threads)
		return -1;
	if (S->fc == NULL) {
		S->fc = xcalloc(1, sizeof *S->fc);
		intern_init(&S->fc->names);
	}
	memset(&P, 0, sizeof P);
	P.S = S;
	P.fc = S->fc;
	P.lr = lr;
	P.first = line;
	P.firstlen = len;
	P.firstno = lr_lineno(lr);
	ring_init(&P.lines);
	ring_init(&P.recs);
	if (pthread_create(&lines, NULL, fold_lines, &P) != 0) {
		last = -1;
		goto out;
	}
	if ((err = pthread_create(&reader, NULL, fold_reader, &P)) != 0)
		cli_fatal("%s: cannot start a thread: %s", rs->name, strerror(err));
	while (!last) {
		struct fbatch *b = ring_take(&P.recs);

		for (k = 0; k < b->nrec; k++)
			take_record(S, b, &b->rec[k], rs);
		last = b->last;
		ring_done(&P.recs);
	}
	pthread_join(reader, NULL);
	pthread_join(lines, NULL);
	last = 0;
out:
	ring_free(&P.lines);
	ring_free(&P.recs);
	return last;
}

/* ------------------------------------------------------------------ */
/* a regular folded file in pieces, one thread each                    */

/*
 * A regular folded file (not gzip) is cut into one piece per thread at
 * newlines, and each thread folds its piece alone (read_piece): its own
 * frame names and stacks (as frame ids, as the stk keeps them), and per
 * distinct stack the sums of its lines' metrics and counts, its line
 * count, its first line and the frame names it cut.  Nothing is shared
 * while they read.  Then the caller's thread merges the pieces in file
 * order (merge_piece), each piece's stacks in the order they first
 * came in it.  That is the order one thread meets them in the file (a
 * stack new to the file is new to the piece it first comes in), so the
 * tree's nodes and frame ids come in one thread's order and the output
 * is one thread's, byte for byte.  The messages for malformed and
 * skipped lines are kept per piece (the first few of each, with their
 * line in the piece; a piece's first line is the sum of the lines
 * before it) and said in file order.  What a piece cannot do as one
 * thread would (a header line, which changes the root frames of the
 * lines after it; a stack deeper than EVT_MAX_STACK_FRAMES; more stacks
 * than its cache holds, its share of RAW_CACHE_MAX_BYTES; a read error;
 * a negative count, whose sums could saturate otherwise in another
 * order) makes the rest of the file, from that piece on, read as one
 * thread reads it (read_rest); the pieces after it stop.
 */

#define PIECE_BUF ((size_t)1 << 20)	/* read at a time; grows for a long line */
#define PIECE_NOTES 11	/* messages kept per piece and kind: the file says 10, then "more" */
#define PIECE_MAX 16	/* threads at most */
#define PIECE_FIRST 0.7	/* the first piece's size, in the others' */
#define BINARY_HEAD 0x4c	/* bytes lr_next looks at to tell a trace from text */

struct pnote {
	unsigned long line;	/* in the piece, from 1 */
	const char *why;
	int skipped;		/* skipped as lr_next skips (too long, NUL byte), not malformed */
};

struct pstack {
	uint64_t hash;
	uint32_t ids, nids;	/* its frame ids in the piece's pool */
	int64_t metric, count, events;
	int64_t cut;		/* frame names it cut */
	unsigned long line;	/* its first line in the piece */
};

struct piece {
	int fd;
	off_t cut, end;		/* the piece: the lines starting in [cut, end) */
	/* reading: buf holds the file's bytes from bufoff on, len of them */
	char *buf;
	size_t cap, len;
	off_t bufoff, pos;	/* pos: where the next line starts */
	/* what it found */
	unsigned long nlines;
	struct intern names;	/* spelled as intern_frame spells them */
	uint32_t *pool;
	size_t npool, cappool;
	struct pstack *stk;
	uint32_t nstk, capstk;
	struct idtab tab;	/* stk ids by hash, STK_NONE free */
	char *tmp;
	size_t captmp;
	struct pnote note[2 * PIECE_NOTES];
	int nnote;
	long nbad, nskipped;
	int nonblank;		/* a line not blank: the file is folded input */
	int failed;		/* read the file the usual way from here */
	int index;		/* its place in the file */
	size_t capbytes;	/* its cache's cap: the pieces share RAW_CACHE_MAX_BYTES */
	_Atomic int *giveup;	/* the first piece that failed (pieces after it stop) */
};

/* more of the file after what buf holds (it grows when full): bytes read, 0 at the end, -1 */
static ssize_t
piece_fill(struct piece *pc)
{
	ssize_t r;

	if (pc->len == pc->cap) {
		pc->cap = pc->cap ? pc->cap * 2 : PIECE_BUF;
		pc->buf = xrealloc(pc->buf, pc->cap + 1);
	}
	do
		r = pread(pc->fd, pc->buf + pc->len, pc->cap - pc->len, pc->bufoff + (off_t)pc->len);
	while (r < 0 && errno == EINTR);
	if (r > 0)
		pc->len += (size_t)r;
	return r;
}

/* pos after the first newline at or after OFF, or at the end of the file: 0, or -1 */
static int
piece_seek_line(struct piece *pc, off_t off)
{
	char *nl;
	ssize_t r;

	pc->bufoff = off;
	pc->len = 0;
	for (;;) {
		if ((r = piece_fill(pc)) <= 0) {
			pc->pos = pc->bufoff + (off_t)pc->len;
			return r < 0 ? -1 : 0;
		}
		if ((nl = memchr(pc->buf, '\n', pc->len)) != NULL) {
			pc->pos = pc->bufoff + (nl + 1 - pc->buf);
			return 0;
		}
		pc->bufoff += (off_t)pc->len;
		pc->len = 0;
	}
}

/*
 * The next line starting in the piece, without its "\n" and one "\r",
 * NUL-terminated in buf: 1; 2 for a line of EVT_MAX_LINE bytes or more
 * (lr_next skips it: *LINE is not set); 0 at the end; -1 on a read
 * error.  The line reader's rules, so the lines are lr_next's.
 */
static int
piece_line(struct piece *pc, char **line, size_t *len)
{
	size_t off = 0, scanned = 0, n;
	char *nl;
	ssize_t r;

	if (pc->pos >= pc->end)
		return 0;
	for (;;) {
		off = (size_t)(pc->pos - pc->bufoff);
		nl = pc->len > off + scanned ?
		    memchr(pc->buf + off + scanned, '\n', pc->len - off - scanned) : NULL;
		if (nl != NULL)
			break;
		scanned = pc->len - off;
		if (scanned >= EVT_MAX_LINE) {
			off_t from = pc->bufoff + (off_t)pc->len;

			/* reads on to its newline in a buffer of its own size */
			return piece_seek_line(pc, from) < 0 ? -1 : 2;
		}
		if (off > 0) {
			memmove(pc->buf, pc->buf + off, pc->len - off);
			pc->len -= off;
			pc->bufoff += (off_t)off;
		}
		if ((r = piece_fill(pc)) < 0)
			return -1;
		if (r == 0) {
			/* the end of the file: a last line without newline */
			if (pc->len == 0)
				return 0;
			off = 0;
			nl = pc->buf + pc->len;
			break;
		}
	}
	*line = pc->buf + off;
	n = (size_t)(nl - *line);
	pc->pos = pc->bufoff + (nl - pc->buf) + 1;
	if (n > 0 && (*line)[n - 1] == '\r')
		n--;
	(*line)[n] = '\0';
	*len = n;
	return 1;
}

static void
piece_note(struct piece *pc, int skipped, const char *why)
{
	long *n = skipped ? &pc->nskipped : &pc->nbad;

	if (*n < PIECE_NOTES) {
		pc->note[pc->nnote].line = pc->nlines;
		pc->note[pc->nnote].why = why;
		pc->note[pc->nnote].skipped = skipped;
		pc->nnote++;
	}
	(*n)++;
}

static uint64_t
piece_hash_of(const void *owner, uint32_t i)
{
	return ((const struct piece *)owner)->stk[i].hash;
}

/*
 * The piece's id of STACK, added if new; STK_NONE if it cannot be kept
 * (deeper than EVT_MAX_STACK_FRAMES, or the cache is at its cap).
 */
static uint32_t
piece_stack(struct piece *pc, const char *stack, size_t len)
{
	uint64_t hv = hash_bytes(stack, len);
	uint32_t h, idx, *ids;
	struct pstack *e;
	const char *p, *end = stack + len;
	size_t n, k, fl;
	int64_t cut = 0;

	if (pc->tab.slot == NULL)
		idtab_grow(&pc->tab, pc, 0, pc->nstk, piece_hash_of);
	for (h = (uint32_t)hv & pc->tab.mask; (idx = pc->tab.slot[h]) != STK_NONE; h = (h + 1) & pc->tab.mask)
		if (pc->stk[idx].hash == hv &&
		    text_is(&pc->names, pc->pool + pc->stk[idx].ids, pc->stk[idx].nids, stack, len))
			return idx;
	n = count_frames(stack, len);
	if (n > EVT_MAX_STACK_FRAMES)
		return STK_NONE;
	if ((pc->npool + n) * sizeof *pc->pool + (size_t)pc->nstk * sizeof *pc->stk +
	    ((size_t)pc->tab.mask + 1) * sizeof *pc->tab.slot + pc->names.nchunks * ((size_t)1 << 20) +
	    (size_t)pc->names.n * 12 + ((size_t)pc->names.mask + 1) * 4 >= pc->capbytes)
		return STK_NONE;
	if (pc->npool + n > pc->cappool) {
		pc->cappool = (pc->npool + n) * 2 + 4096;
		pc->pool = xrealloc(pc->pool, pc->cappool * sizeof *pc->pool);
	}
	ids = pc->pool + pc->npool;
	for (k = 0, p = stack; k < n; k++) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *fe = semi ? semi : end;
		const char *name = spell_frame(p, (size_t)(fe - p), &pc->tmp, &pc->captmp, &fl, &cut);

		ids[k] = intern_add(&pc->names, name, fl);
		p = fe + 1;
	}
	if (pc->nstk == pc->capstk) {
		pc->capstk = pc->capstk ? pc->capstk * 2 : 1024;
		pc->stk = xrealloc(pc->stk, pc->capstk * sizeof *pc->stk);
	}
	e = &pc->stk[pc->nstk];
	memset(e, 0, sizeof *e);
	e->hash = hv;
	e->ids = (uint32_t)pc->npool;
	e->nids = (uint32_t)n;
	e->cut = cut;
	e->line = pc->nlines;
	pc->npool += n;
	idx = pc->nstk++;
	pc->tab.slot[h] = idx;
	if (pc->nstk * 2 > pc->tab.mask)
		idtab_grow(&pc->tab, pc, 0, pc->nstk, piece_hash_of);
	return idx;
}

/* one line of the piece, as stk_feed takes a folded line: 0, or -1 to give up */
static int
piece_take(struct piece *pc, char *line, size_t len)
{
	enum evt_linetype lt;
	char *stack;
	size_t slen;
	int64_t metric, count;
	const char *why;
	uint32_t id;
	struct pstack *e;

	if (memchr(line, '\0', len) != NULL) {
		piece_note(pc, 1, "NUL byte in line");
		return 0;
	}
	lt = evt_classify(line, len);
	if (lt == EVT_BLANK)
		return 0;
	pc->nonblank = 1;
	if (lt == EVT_META)
		return 0;
	if (lt == EVT_HEADER)
		return -1;
	if (parse_folded(line, len, &stack, &slen, &metric, &count, &why) < 0) {
		piece_note(pc, 0, why);
		return 0;
	}
	if (metric < 0 || (id = piece_stack(pc, stack, slen)) == STK_NONE)
		return -1;
	e = &pc->stk[id];
	e->metric = sadd(e->metric, metric);
	e->count = sadd(e->count, count);
	e->events++;
	return 0;
}

/* a thread's work: every line starting in the piece */
static void *
read_piece(void *arg)
{
	struct piece *pc = arg;
	char *line = NULL;
	size_t len = 0;
	int r;

	intern_init(&pc->names);
	r = pc->cut > 0 && piece_seek_line(pc, pc->cut - 1) < 0 ? -1 : 1;
	while (r > 0 && (r = piece_line(pc, &line, &len)) > 0) {
		pc->nlines++;
		if (r == 2)
			piece_note(pc, 1, "line too long (64 MiB or more)");
		else if (piece_take(pc, line, len) < 0)
			break;
		if (atomic_load_explicit(pc->giveup, memory_order_relaxed) < pc->index)
			break;	/* a piece before this one failed: this one is read again */
	}
	if (r != 0) {
		int before = atomic_load(pc->giveup);

		pc->failed = 1;
		while (pc->index < before &&
		    !atomic_compare_exchange_weak(pc->giveup, &before, pc->index))
			;
	}
	free(pc->buf);
	pc->buf = NULL;
	return NULL;
}

static void
piece_free(struct piece *pc)
{
	intern_release(&pc->names);
	free(pc->buf);
	free(pc->pool);
	free(pc->stk);
	free(pc->tab.slot);
	free(pc->tmp);
}

/* a distinct stack of the whole file (merge_piece): its frames as the stk's, its leaf */
struct mstack {
	uint64_t hash;
	uint32_t ids, nids;
	uint32_t leaf;
	int dropped;
};

struct merge {
	uint32_t *pool;
	size_t npool, cappool;
	struct mstack *ms;
	uint32_t nms, capms;
	struct idtab tab;	/* ms ids by hash, STK_NONE free */
};

static uint64_t
merge_hash_of(const void *owner, uint32_t i)
{
	return ((const struct merge *)owner)->ms[i].hash;
}

/*
 * The file's entry of the stack IDS[0..N) (the stk's frame ids): found,
 * or added with its leaf (the tree grows here, in first-appearance
 * order).  *FRESH says it was new to the file.
 */
static struct mstack *
merge_stack(struct stk *S, struct merge *M, const uint32_t *ids, uint32_t n, int *fresh)
{
	uint64_t hv = hash_bytes(ids, n * sizeof *ids);
	uint32_t h, idx, prefix[1];
	struct mstack *m;
	int np;

	if (M->tab.slot == NULL)
		idtab_grow(&M->tab, M, 0, M->nms, merge_hash_of);
	*fresh = 0;
	for (h = (uint32_t)hv & M->tab.mask; (idx = M->tab.slot[h]) != STK_NONE; h = (h + 1) & M->tab.mask) {
		m = &M->ms[idx];
		if (m->hash == hv && m->nids == n &&
		    memcmp(M->pool + m->ids, ids, n * sizeof *ids) == 0)
			return m;
	}
	*fresh = 1;
	if (M->npool + n > M->cappool) {
		M->cappool = (M->npool + n) * 2 + 4096;
		M->pool = xrealloc(M->pool, M->cappool * sizeof *M->pool);
	}
	if (n)
		memcpy(M->pool + M->npool, ids, n * sizeof *ids);
	if (M->nms == M->capms) {
		M->capms = M->capms ? M->capms * 2 : 1024;
		M->ms = xrealloc(M->ms, M->capms * sizeof *M->ms);
	}
	m = &M->ms[M->nms];
	m->hash = hv;
	m->ids = (uint32_t)M->npool;
	m->nids = n;
	M->npool += n;
	np = folded_prefix(S, prefix);
	m->leaf = transform(S, prefix, np, NULL, 0, M->pool + m->ids, n, 0, &m->dropped);
	idx = M->nms++;
	M->tab.slot[h] = idx;
	if (M->nms * 2 > M->tab.mask)
		idtab_grow(&M->tab, M, 0, M->nms, merge_hash_of);
	return &M->ms[idx];
}

/* lr_next's message for a line it skips (*SKIPPED: how many so far, in the file) */
static void
say_skipped(struct readstate *rs, unsigned long line, const char *why, long *skipped)
{
	++*skipped;
	if (*skipped <= 10)
		cli_warn("%s:%lu: %s, line skipped", rs->name, line, why);
	else if (*skipped == 11)
		cli_warn("%s: more lines skipped; counting them", rs->name);
}

/*
 * One piece into S, after the pieces before it (*FIRST: the lines
 * before it; *SKIPPED: the lines skipped before it).
 */
static void
merge_piece(struct stk *S, struct merge *M, const struct piece *pc, struct readstate *rs,
    unsigned long *first, long *skipped)
{
	uint32_t *map, *ids = NULL, capids = 0, i, k;
	long kept = 0;
	int j, fresh;

	if (pc->nonblank) {
		S->format = 2;
		S->is_folded_input = 1;
	}
	for (j = 0; j < pc->nnote; j++) {
		const struct pnote *nt = &pc->note[j];

		if (nt->skipped) {
			say_skipped(rs, *first + nt->line, nt->why, skipped);
		} else {
			read_bad(rs, *first + nt->line, nt->why);
			kept++;
		}
	}
	/* the lines past the notes kept are counted, no more said */
	rs->bad += pc->nbad - kept;
	*skipped += pc->nskipped - (pc->nnote - kept);
	*first += pc->nlines;
	/* the piece's frame ids to the stk's, as they are first needed */
	map = xmalloc(((size_t)pc->names.n + 1) * sizeof *map);
	memset(map, 0xff, ((size_t)pc->names.n + 1) * sizeof *map);
	for (i = 0; i < pc->nstk; i++) {
		const struct pstack *e = &pc->stk[i];
		const uint32_t *wid = pc->pool + e->ids;
		struct mstack *m;

		if (e->nids > capids) {
			capids = e->nids * 2;
			ids = xrealloc(ids, capids * sizeof *ids);
		}
		for (k = 0; k < e->nids; k++) {
			if (map[wid[k]] == STK_NONE)
				map[wid[k]] = stk_intern(S, intern_str(&pc->names, wid[k]),
				    intern_len(&pc->names, wid[k]));
			ids[k] = map[wid[k]];
		}
		m = merge_stack(S, M, ids, e->nids, &fresh);
		if (fresh)
			S->st.long_frames += e->cut;
		S->st.events += e->events;
		S->st.metric = sadd(S->st.metric, e->metric);
		account_n(S, m->leaf, m->dropped, e->metric, e->count, NAN, 0, e->events);
	}
	free(map);
	free(ids);
}

/*
 * The rest of the file from the piece PC on, read as one thread reads
 * a file (a piece gave up there): every line to stk_feed, numbered
 * from FIRST + 1.
 */
static void
read_rest(struct stk *S, struct piece *pc, unsigned long first, struct readstate *rs,
    long *skipped)
{
	char *line = NULL;
	size_t len = 0;
	const char *why;
	int r = 0;

	pc->end = (off_t)((~(uint64_t)0) >> 1);	/* to the end, as lr_next reads */
	if (pc->cut > 0 && piece_seek_line(pc, pc->cut - 1) < 0)
		r = -1;
	while (r == 0 && (r = piece_line(pc, &line, &len)) > 0) {
		first++;
		if (r == 2)
			say_skipped(rs, first, "line too long (64 MiB or more)", skipped);
		else if (memchr(line, '\0', len) != NULL)
			say_skipped(rs, first, "NUL byte in line", skipped);
		else if (stk_feed(S, line, len, &why) < 0)
			read_bad(rs, first, why);
		if (rs->first_deep == 0 && S->st.deep_stacks != rs->deep0)
			rs->first_deep = first;
		r = 0;
	}
	if (r < 0) {
		/* as lr_finish says a read error, and counts the line it cut */
		cli_warn("%s: %s", rs->name, strerror(errno));
		++*skipped;
	}
}

/* how many threads read folded input (cfg.threads, else one per core) */
static int
read_nthreads(const struct stk *S)
{
	long n = S->cfg.threads;

	if (n <= 0)
		n = cli_cores();
	return n > PIECE_MAX ? PIECE_MAX : (int)n;
}

/*
 * Whether FD (SIZE bytes) is a folded file the pieces can read: plain
 * text (not gzip, not a trace or zip: lr_next tells those apart), whose
 * first line that is not blank is no "#evt" header.
 */
static int
pieces_can_read(int fd, off_t size)
{
	char head[4096];
	ssize_t r;
	const char *p, *e;

	do
		r = pread(fd, head, sizeof head, 0);
	while (r < 0 && errno == EINTR);
	if (r < (ssize_t)BINARY_HEAD || (off_t)r > size)
		return 0;
	if (((unsigned char)head[0] == 0x1f && (unsigned char)head[1] == 0x8b) ||
	    memcmp(head, "PK\3\4", 4) == 0 || memchr(head, '\0', BINARY_HEAD) != NULL)
		return 0;
	/* the first line that is not blank: a header makes evt (its first bytes tell) */
	for (p = head, e = head + r; p < e && (*p == '\n' || *p == '\r'); p++)
		if (*p == '\r' && (p + 1 == e || p[1] != '\n'))
			break;
	if (e - p < 6)
		return 0;
	return !(memcmp(p, "#evt", 4) == 0 &&
	    (p[4] == '\t' || p[4] == '\n' || (p[4] == '\r' && p[5] == '\n')));
}

/*
 * A regular folded file PATH in pieces: 0, or -1 if it is not such a
 * file or there is one thread (S is untouched then: read it the usual
 * way).  The caller's thread reads the first piece, a smaller one, and
 * merges it while the others are still reading.
 */
static int
read_pieces(struct stk *S, const char *path, struct readstate *rs)
{
	struct piece pc[PIECE_MAX];
	pthread_t tid[PIECE_MAX];
	struct merge M;
	struct stat st;
	_Atomic int giveup;
	int fd, n = read_nthreads(S), p, started, failed = -1;
	unsigned long first = 0;
	long skipped = 0;
	double w, at;

	if (n < 2)
		return -1;
	fd = path == NULL || strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 65536 ||
	    !pieces_can_read(fd, st.st_size)) {
		if (fd != 0)
			close(fd);
		return -1;
	}
	memset(pc, 0, sizeof pc);
	memset(&M, 0, sizeof M);
	/* the first piece weighs PIECE_FIRST of the others: its merge overlaps their reading */
	w = (double)st.st_size / (PIECE_FIRST + (n - 1));
	atomic_init(&giveup, n);
	for (p = 0, at = 0; p < n; p++) {
		pc[p].fd = fd;
		pc[p].index = p;
		pc[p].capbytes = RAW_CACHE_MAX_BYTES / (size_t)n;
		pc[p].giveup = &giveup;
		pc[p].cut = (off_t)at;
		at += p == 0 ? w * PIECE_FIRST : w;
		pc[p].end = p + 1 < n ? (off_t)at : st.st_size;
	}
	for (started = 1; started < n; started++)
		if (pthread_create(&tid[started], NULL, read_piece, &pc[started]) != 0)
			break;
	for (p = 0; p < n; p++) {
		if (p == 0 || p >= started)
			read_piece(&pc[p]);	/* (a thread that would not start: here) */
		else
			pthread_join(tid[p], NULL);
		if (failed < 0 && pc[p].failed)
			failed = p;
		if (failed < 0)
			merge_piece(S, &M, &pc[p], rs, &first, &skipped);
		piece_free(&pc[p]);
	}
	if (failed >= 0) {
		struct piece rest;

		memset(&rest, 0, sizeof rest);
		rest.fd = fd;
		rest.cut = pc[failed].cut;
		read_rest(S, &rest, first, rs, &skipped);
		free(rest.buf);
	}
	rs->bad += skipped;
	free(M.pool);
	free(M.ms);
	free(M.tab.slot);
	if (fd != 0)
		close(fd);
	return 0;
}

long
stk_read(struct stk *S, const char *path)
{
	struct linereader *lr = lr_open(path);
	char *line;
	size_t len;
	const char *why;
	struct readstate rs;

	if (lr == NULL)
		cli_fatal("%s: %s", path ? path : "-", strerror(errno));
	memset(&rs, 0, sizeof rs);
	rs.name = lr_name(lr);
	S->threads = read_nthreads(S) > 1 && read_threads(path);
	rs.deep0 = S->st.deep_stacks;
	rs.elided0 = S->st.elided_frames;
	stk_reset_format(S);
	if (S->threads && read_pieces(S, path, &rs) == 0)
		goto done;
	while ((line = lr_next(lr, &len)) != NULL) {
		enum evt_linetype lt;

		if (S->format == 0 && (lt = evt_classify(line, len)) != EVT_BLANK &&
		    lt != EVT_HEADER) {
			/* folded input (stk_feed's rule): in a pipeline of threads */
			S->format = 2;
			S->is_folded_input = 1;
			if (read_folded(S, lr, line, len, &rs) == 0)
				break;
		}
		if (stk_feed(S, line, len, &why) < 0)
			read_bad(&rs, lr_lineno(lr), why);
		if (rs.first_deep == 0 && S->st.deep_stacks != rs.deep0)
			rs.first_deep = lr_lineno(lr);
		lr_progress(lr);
	}
	rs.bad += (long)lr_finish(lr);
done:
	if (rs.bad > 10)
		cli_warn("%s: %ld malformed lines skipped", lr_name(lr), rs.bad);
	if (rs.first_deep)
		evt_warn_cut(lr_name(lr), rs.first_deep, S->st.deep_stacks - rs.deep0,
		    S->st.elided_frames - rs.elided0);
	lr_close(lr);
	S->st.bad_lines += rs.bad;
	return rs.bad;
}

/* ------------------------------------------------------------------ */
/* the tree after input                                                */

const struct stk_node *
stk_node(const struct stk *S, uint32_t id)
{
	return &S->node[id];
}

uint32_t
stk_nnodes(const struct stk *S)
{
	return S->nnodes;
}

/* next unfolded node in pre-order */
uint32_t
stk_next(const struct stk *S, uint32_t id, int *depth)
{
	uint32_t c = S->node[id].child;

	while (c != STK_NONE && S->node[c].folded)
		c = S->node[c].sibling;
	if (c != STK_NONE) {
		(*depth)++;
		return c;
	}
	while (id != STK_ROOT) {
		uint32_t s = S->node[id].sibling;

		while (s != STK_NONE && S->node[s].folded)
			s = S->node[s].sibling;
		if (s != STK_NONE)
			return s;
		id = S->node[id].parent;
		(*depth)--;
	}
	return STK_NONE;
}

static void
compute_inclusive(struct stk *S)
{
	uint32_t i;

	for (i = 0; i < S->nnodes; i++) {
		S->node[i].inc = S->node[i].exc;
		S->node[i].inc_count = S->node[i].exc_count;
	}
	/* children always have larger ids than their parents: one backward pass */
	for (i = S->nnodes; i-- > 1; ) {
		struct stk_node *n = &S->node[i], *p = &S->node[n->parent];

		p->inc = sadd(p->inc, n->inc);
		p->inc_count = sadd(p->inc_count, n->inc_count);
		if (S->times) {
			struct nodetime *nt = &S->times[i], *pt = &S->times[n->parent];

			if (!isnan(nt->first) && (isnan(pt->first) || nt->first < pt->first))
				pt->first = nt->first;
			if (!isnan(nt->last) && (isnan(pt->last) || nt->last > pt->last))
				pt->last = nt->last;
		}
	}
}

/* inclusive per frame identity, a sample counted once per stack */
static int64_t *
byname_inclusive(struct stk *S)
{
	int64_t *inc = xcalloc(S->nframes ? S->nframes : 1, sizeof *inc);
	uint32_t *onpath = xcalloc(S->nframes ? S->nframes : 1, sizeof *onpath);
	uint32_t id = S->node[STK_ROOT].child;

	/* pre-order walk; onpath[f] counts ancestors named f */
	while (id != STK_NONE) {
		struct stk_node *n = &S->node[id];

		if (onpath[n->frame]++ == 0)
			inc[n->frame] = sadd(inc[n->frame], n->inc);
		if (n->child != STK_NONE) {
			id = n->child;
			continue;
		}
		/* leave: pop until a sibling */
		for (;;) {
			onpath[S->node[id].frame]--;
			if (S->node[id].sibling != STK_NONE) {
				id = S->node[id].sibling;
				break;
			}
			id = S->node[id].parent;
			if (id == STK_ROOT) {
				id = STK_NONE;
				break;
			}
		}
	}
	free(onpath);
	return inc;
}

static void
merge_hist_subtree(struct stk *S, uint32_t into, uint32_t top)
{
	uint32_t id = top;
	int b;

	if (S->hist[into] == NULL)
		S->hist[into] = xcalloc(STK_WHEN_BUCKETS, sizeof(int64_t));
	for (;;) {
		if (S->hist[id] != NULL) {
			for (b = 0; b < STK_WHEN_BUCKETS; b++)
				S->hist[into][b] = sadd(S->hist[into][b], S->hist[id][b]);
			free(S->hist[id]);
			S->hist[id] = NULL;
		}
		if (S->node[id].child != STK_NONE) {
			id = S->node[id].child;
			continue;
		}
		while (id != top && S->node[id].sibling == STK_NONE)
			id = S->node[id].parent;
		if (id == top)
			break;
		id = S->node[id].sibling;
	}
}

static void
apply_fold_pct(struct stk *S)
{
	int64_t T = (int64_t)llround((double)llabs(S->node[STK_ROOT].inc) * S->cfg.fold_pct / 100.0);
	int64_t *bn = byname_inclusive(S);
	uint32_t id = STK_ROOT;

	S->nfold = xcalloc(S->nnodes, sizeof *S->nfold);
	/* pre-order: a folded child's subtree is skipped (stk_next skips folded nodes) */
	while (id != STK_NONE) {
		uint32_t c;

		for (c = S->node[id].child; c != STK_NONE; c = S->node[c].sibling) {
			struct stk_node *n = &S->node[c], *p = &S->node[id];

			if (llabs(n->inc) < T && llabs(bn[n->frame]) < T && n->frame != S->broken) {
				n->folded = 1;
				p->exc = sadd(p->exc, n->inc);
				p->exc_count = sadd(p->exc_count, n->inc_count);
				S->nfold[id].fold = sadd(S->nfold[id].fold, n->inc);
				S->nfold[id].fold_count = sadd(S->nfold[id].fold_count, n->inc_count);
				S->st.folded_pct_nodes++;
				S->st.folded_pct_metric = sadd(S->st.folded_pct_metric, n->inc);
				if (S->cfg.when)
					merge_hist_subtree(S, id, c);
			}
		}
		{
			int d = 0;

			id = stk_next(S, id, &d);
		}
	}
	free(bn);
}

void
stk_finish(struct stk *S)
{
	if (S->finished)
		return;
	S->finished = 1;
	compute_inclusive(S);
	if (S->cfg.fold_pct > 0)
		apply_fold_pct(S);
}

static const struct stk *sort_S;

static int
cmp_by_name(const void *a, const void *b)
{
	const struct stk_node *x = &sort_S->node[*(const uint32_t *)a];
	const struct stk_node *y = &sort_S->node[*(const uint32_t *)b];

	return strcmp(stk_name(sort_S, x->frame), stk_name(sort_S, y->frame));
}

static int
cmp_by_inc(const void *a, const void *b)
{
	const struct stk_node *x = &sort_S->node[*(const uint32_t *)a];
	const struct stk_node *y = &sort_S->node[*(const uint32_t *)b];
	int64_t ax = llabs(x->inc), ay = llabs(y->inc);

	if (ax != ay)
		return ax > ay ? -1 : 1;
	return strcmp(stk_name(sort_S, x->frame), stk_name(sort_S, y->frame));
}

void
stk_sort_children(struct stk *S, int by_name)
{
	uint32_t *tmp = NULL, i, cap = 0;

	sort_S = S;
	for (i = 0; i < S->nnodes; i++) {
		uint32_t c, k = 0, j;

		for (c = S->node[i].child; c != STK_NONE; c = S->node[c].sibling) {
			if (k == cap) {
				cap = cap ? cap * 2 : 64;
				tmp = xrealloc(tmp, cap * sizeof *tmp);
			}
			tmp[k++] = c;
		}
		if (k < 2)
			continue;
		qsort(tmp, k, sizeof *tmp, by_name ? cmp_by_name : cmp_by_inc);
		S->node[i].child = tmp[0];
		for (j = 0; j + 1 < k; j++)
			S->node[tmp[j]].sibling = tmp[j + 1];
		S->node[tmp[k - 1]].sibling = STK_NONE;
	}
	free(tmp);
}

double
stk_unit_div(const struct stk *S)
{
	if (!S->is_folded_input && S->cfg.unit == STK_UNIT_US)
		return 1e3;
	return 1e6;
}

const char *
stk_unit_name(const struct stk *S)
{
	if (S->is_folded_input)
		return "count";
	return stk_unit_text(S->cfg.unit);
}

const struct stk_stats *
stk_get_stats(const struct stk *S)
{
	return &S->st;
}

/* ------------------------------------------------------------------ */
/* folded output                                                       */

/*
 * The spelling of a frame in folded output: no ';' (already ':'), no
 * control bytes, and never " 123" at the end (flamegraph.pl would read
 * a trailing number as a second count column).
 */
static const char *
out_name(struct stk *S, uint32_t f)
{
	const char *s = stk_name(S, f);
	size_t n = strlen(s), i, d;
	int bad = n == 0 || s[n - 1] == ' ';
	char *o;

	if (f == STK_NONE)
		return s;
	if (S->outname && S->outname[f])
		return S->outname[f];
	for (i = 0; i < n; i++)
		if (s[i] == ';' || (unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			bad = 1;
	d = n;
	while (d > 0 && ((s[d - 1] >= '0' && s[d - 1] <= '9') || s[d - 1] == '.'))
		d--;
	if (d < n && d > 0 && s[d - 1] == ' ')
		bad = 1;
	if (!bad)
		return s;
	o = xmalloc(n + 2);
	for (i = 0; i < n; i++) {
		char c = s[i];

		o[i] = c == ';' ? ':' : ((unsigned char)c < 0x20 || c == 0x7f) ? '_' : c;
	}
	if (n == 0)
		o[n++] = '?';
	o[n] = '\0';
	/* a trailing " 123" would be read as a second count; trailing blanks as the separator */
	if (d < n && d > 0 && o[d - 1] == ' ')
		o[d - 1] = '_';
	for (i = n; i > 0 && o[i - 1] == ' '; i--)
		o[i - 1] = '_';
	if (S->outname == NULL)
		S->outname = xcalloc(S->capframes, sizeof *S->outname);
	S->outname[f] = o;
	return o;
}

/* out_name and its length; the checks out_name makes are made once per frame */
static const char *
out_name_len(struct stk *S, uint32_t f, size_t *len)
{
	const char *s;

	if (f != STK_NONE && S->fi[f].outplain) {
		*len = intern_len(&S->names, f);
		return intern_str(&S->names, f);
	}
	s = out_name(S, f);
	*len = strlen(s);
	if (f != STK_NONE && s == intern_str(&S->names, f) && *len == intern_len(&S->names, f))
		S->fi[f].outplain = 1;
	return s;
}

size_t
stk_path_text(struct stk *S, uint32_t node, char *buf, size_t cap)
{
	size_t need = 0, o;
	uint32_t id;

	for (id = node; id != STK_ROOT && id != STK_NONE; id = S->node[id].parent)
		need += strlen(out_name(S, S->node[id].frame)) + (need ? 1 : 0);
	if (cap == 0)
		return need;
	o = need < cap ? need : cap - 1;
	buf[o] = '\0';
	/* fill from the leaf backwards; whatever falls beyond CAP is dropped */
	{
		size_t end = need;

		for (id = node; id != STK_ROOT && id != STK_NONE; id = S->node[id].parent) {
			const char *nm = out_name(S, S->node[id].frame);
			size_t k = strlen(nm), j;

			end -= k;
			for (j = 0; j < k; j++)
				if (end + j < o)
					buf[end + j] = nm[j];
			if (end > 0) {
				end--;
				if (end < o)
					buf[end] = ';';
			}
		}
	}
	return need;
}

static size_t
format_scaled(char *buf, __int128 v, int decimals)
{
	char tmp[64];
	int n = 0, neg = v < 0, i;
	size_t o = 0;
	unsigned __int128 u = neg ? (unsigned __int128)(-v) : (unsigned __int128)v;

	do {
		tmp[n++] = (char)('0' + (int)(u % 10));
		u /= 10;
	} while (u || n <= decimals);
	if (neg)
		buf[o++] = '-';
	for (i = n - 1; i >= 0; i--) {
		buf[o++] = tmp[i];
		if (i == decimals && decimals > 0)
			buf[o++] = '.';
	}
	return o;
}

void
stk_write_folded(struct stk *S, struct outbuf *ob)
{
	uint32_t id;
	size_t *plen = NULL, cappath = 0, captext = 0;
	char *text = NULL;
	int depth = 0, i;
	__int128 cum = 0, emitted = 0, scale = 1, div;
	char num[64];

	stk_finish(S);
	stk_sort_children(S, 1);
	for (i = 0; i < S->cfg.decimals; i++)
		scale *= 10;
	div = (__int128)stk_unit_div(S);
	if (S->node[STK_ROOT].exc != 0) {
		/* Fold% folded a whole top-level node into ROOT */
		cum += S->node[STK_ROOT].exc;
		{
			__int128 r = cum * scale, q = (r >= 0 ? r + div / 2 : r - div / 2) / div;

			if (q - emitted != 0) {
				ob_puts(ob, "ROOT ");
				ob_write(ob, num, format_scaled(num, q - emitted, S->cfg.decimals));
				ob_putc(ob, '\n');
				emitted = q;
			}
		}
	}
	/*
	 * The text of the path to the node being visited is kept, with its
	 * length at each depth: a node's name is spelled once, not once per
	 * line below it.
	 */
	id = stk_next(S, STK_ROOT, &depth);
	while (id != STK_NONE) {
		const struct stk_node *n = &S->node[id];
		size_t o = depth > 1 ? plen[depth - 2] : 0, k;
		const char *nm = out_name_len(S, n->frame, &k);

		if ((size_t)depth > cappath) {
			cappath = (size_t)depth * 2 + 16;
			plen = xrealloc(plen, cappath * sizeof *plen);
		}
		if (o + k + 1 > captext) {
			captext = (o + k + 1) * 2;
			text = xrealloc(text, captext);
		}
		if (depth > 1)
			text[o++] = ';';
		memcpy(text + o, nm, k);
		plen[depth - 1] = o + k;
		if (n->exc != 0) {
			__int128 r, q;

			cum += n->exc;
			r = cum * scale;
			q = (r >= 0 ? r + div / 2 : r - div / 2) / div;
			if (q - emitted != 0) {
				ob_write(ob, text, plen[depth - 1]);
				ob_putc(ob, ' ');
				ob_write(ob, num, format_scaled(num, q - emitted, S->cfg.decimals));
				ob_putc(ob, '\n');
				emitted = q;
			}
		}
		id = stk_next(S, id, &depth);
	}
	free(plen);
	free(text);
}

/* ------------------------------------------------------------------ */
/* ByName                                                              */

static const struct stk *rows_S;

static int
cmp_rows(const void *a, const void *b)
{
	const struct stk_byname *x = a, *y = b;
	int64_t ex = llabs(x->exc), ey = llabs(y->exc), ix = llabs(x->inc), iy = llabs(y->inc);

	if (ex != ey)
		return ex > ey ? -1 : 1;
	if (ix != iy)
		return ix > iy ? -1 : 1;
	return strcmp(stk_name(rows_S, x->frame), stk_name(rows_S, y->frame));
}

int
stk_byname(struct stk *S, struct stk_byname **rowsp, int *np)
{
	uint32_t *rowof = xmalloc((S->nframes ? S->nframes : 1) * sizeof *rowof);
	uint32_t *onpath = xcalloc(S->nframes ? S->nframes : 1, sizeof *onpath);
	uint32_t *stamp = NULL;
	struct stk_byname *rows = NULL;
	int n = 0, cap = 0, b;
	uint32_t id, f;
	int depth = 0;

	stk_finish(S);
	memset(rowof, 0xff, (S->nframes ? S->nframes : 1) * sizeof *rowof);
	/* rows in first-seen order; inclusive at the topmost occurrence of each name */
	id = stk_next(S, STK_ROOT, &depth);
	{
		uint32_t *pathframes = NULL;
		size_t cappf = 0;
		int prevdepth = 0;

		while (id != STK_NONE) {
			const struct stk_node *nd = &S->node[id];
			struct stk_byname *r;

			/* pop the frames we climbed out of */
			while (prevdepth >= depth) {
				onpath[pathframes[prevdepth - 1]]--;
				prevdepth--;
			}
			if ((size_t)depth > cappf) {
				cappf = (size_t)depth * 2 + 16;
				pathframes = xrealloc(pathframes, cappf * sizeof *pathframes);
			}
			pathframes[depth - 1] = nd->frame;
			prevdepth = depth;
			f = nd->frame;
			if (rowof[f] == STK_NONE) {
				if (n == cap) {
					cap = cap ? cap * 2 : 256;
					rows = xrealloc(rows, (size_t)cap * sizeof *rows);
				}
				rowof[f] = (uint32_t)n;
				memset(&rows[n], 0, sizeof rows[n]);
				rows[n].frame = f;
				rows[n].first = rows[n].last = NAN;
				n++;
			}
			r = &rows[rowof[f]];
			r->exc = sadd(r->exc, nd->exc);
			r->exc_count = sadd(r->exc_count, nd->exc_count);
			if (S->nfold) {
				r->fold = sadd(r->fold, S->nfold[id].fold);
				r->fold_count = sadd(r->fold_count, S->nfold[id].fold_count);
			}
			if (onpath[f]++ == 0) {
				r->inc = sadd(r->inc, nd->inc);
				r->inc_count = sadd(r->inc_count, nd->inc_count);
				const struct nodetime *nt = S->times ? &S->times[id] : NULL;

				if (nt && !isnan(nt->first) && (isnan(r->first) || nt->first < r->first))
					r->first = nt->first;
				if (nt && !isnan(nt->last) && (isnan(r->last) || nt->last > r->last))
					r->last = nt->last;
			}
			id = stk_next(S, id, &depth);
		}
		free(pathframes);
	}
	/* When: each node's exclusive histogram goes to every distinct name above it */
	if (S->cfg.when && S->hist != NULL) {
		uint32_t i;

		stamp = xmalloc((S->nframes ? S->nframes : 1) * sizeof *stamp);
		memset(stamp, 0xff, (S->nframes ? S->nframes : 1) * sizeof *stamp);
		for (i = 1; i < S->nnodes; i++) {
			uint32_t a;

			if (S->hist[i] == NULL || S->node[i].folded)
				continue;
			/* skip nodes under a folded ancestor (their histograms were merged) */
			for (a = i; a != STK_ROOT && !S->node[a].folded; a = S->node[a].parent)
				;
			if (a != STK_ROOT)
				continue;
			for (a = i; a != STK_ROOT; a = S->node[a].parent) {
				f = S->node[a].frame;
				if (stamp[f] == i || rowof[f] == STK_NONE)
					continue;
				stamp[f] = i;
				for (b = 0; b < STK_WHEN_BUCKETS; b++)
					rows[rowof[f]].when[b] = sadd(rows[rowof[f]].when[b], S->hist[i][b]);
			}
		}
		free(stamp);
	}
	rows_S = S;
	if (n > 1)
		qsort(rows, (size_t)n, sizeof *rows, cmp_rows);
	free(rowof);
	free(onpath);
	*rowsp = rows;
	*np = n;
	return 0;
}

int
stk_when_range(const struct stk *S, double *start, double *end)
{
	*start = S->w_start;
	*end = S->w_start + S->w_width * STK_WHEN_BUCKETS;
	return S->w_fixed || S->w_seen;
}

static char
when_char(double pct)
{
	int neg = pct < 0;
	double a = fabs(pct);
	int k;

	if (a == 0)
		return '_';
	if (a < 0.1)
		return '.';
	if (a < 1)
		return 'o';
	if (a < 100 && !neg)
		return (char)('0' + (int)(a / 10));
	k = (int)((a - 100) / 10);
	if (neg) {
		if (a < 100)
			k = (int)(a / 10);
		return k < 26 ? (char)('a' + k) : '@';
	}
	return k < 25 ? (char)('A' + k) : '*';
}

void
stk_when_text(const struct stk *S, const int64_t *when, char *out)
{
	double full;
	int b;

	if (!S->is_folded_input && S->cfg.unit != STK_UNIT_SAMPLES) {
		/* 100% = one CPU busy for the whole bucket */
		full = S->w_width * 1e6;
	} else if (!S->is_folded_input && S->sample_ms > 0) {
		/* the same in samples: one CPU sampled the whole bucket long */
		full = S->w_width / S->sample_ms * 1e6;
	} else {
		int64_t mx = 0;

		for (b = 0; b < STK_WHEN_BUCKETS; b++)
			if (llabs(S->root_when[b]) > mx)
				mx = llabs(S->root_when[b]);
		full = (double)mx / 2;
	}
	for (b = 0; b < STK_WHEN_BUCKETS; b++)
		out[b] = full > 0 ? when_char((double)when[b] / full * 100) : '_';
	out[STK_WHEN_BUCKETS] = '\0';
}
