/*
 * pipeline.c - loading and validating etlkit-run's YAML pipelines with
 * libyaml's document API (every node keeps its line for messages).
 */
/* XSI (POSIX 2008 + X/Open 7) for realpath(), which plain POSIX leaves out */
#define _XOPEN_SOURCE 700
#include "run/pipeline.h"
#include "base/cli.h"
#include "run/runtext.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

static const char *const tool_names[PIPELINE_NTOOLS] = { "etl2evt", "evtfilter", "stackfold" };
static const char *const output_names[PIPELINE_OUT_NTYPES] = {
	"folded", "by_name", "flamegraph", "dpc_report", "diff", "overweight"
};

#define MAX_ERRORS 20

struct loader {
	const char *file;
	yaml_document_t doc;
	int nerr;
	struct pipeline *pl;
};

static void
err(struct loader *ld, const yaml_node_t *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
err(struct loader *ld, const yaml_node_t *node, const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	ld->nerr++;
	if (ld->nerr > MAX_ERRORS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (node)
		cli_warn("%s:%lu: %s", ld->file, (unsigned long)node->start_mark.line + 1, msg);
	else
		cli_warn("%s: %s", ld->file, msg);
}

static int
line_of(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

static const char *
kind_name(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return "a scalar";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

static yaml_node_t *
node(struct loader *ld, int id)
{
	return yaml_document_get_node(&ld->doc, id);
}

static const char *
scalar(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A scalar that YAML would read as null ("~", "null", empty, unquoted). */
static int
is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);

	return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    (*s == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0);
}

/* ---------- typed getters: report and return -1 on a wrong type ---------- */

static int
get_string(struct loader *ld, yaml_node_t *n, const char *key, char **out)
{
	const char *s = scalar(n);

	if (s == NULL || is_null(n)) {
		err(ld, n, "'%s' must be a string, not %s", key, s ? "null" : kind_name(n));
		return -1;
	}
	if (strlen(s) != n->data.scalar.length) {
		err(ld, n, "'%s' contains a NUL byte", key);
		return -1;
	}
	free(*out);
	*out = xstrdup(s);
	return 0;
}

static int
get_bool(struct loader *ld, yaml_node_t *n, const char *key, int *out)
{
	const char *s = scalar(n);

	if (s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on")) {
			*out = 1;
			return 0;
		}
		if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off")) {
			*out = 0;
			return 0;
		}
	}
	err(ld, n, "'%s' must be true or false, not %s%s%s", key, s ? "'" : "",
	    s ? s : kind_name(n), s ? "'" : "");
	return -1;
}

static int
get_number(struct loader *ld, yaml_node_t *n, const char *key, double *out, int integer)
{
	const char *s = scalar(n);
	char *end;
	double v;

	if (s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && *s) {
		errno = 0;
		v = strtod(s, &end);
		if (errno == 0 && *end == '\0' && isfinite(v) && v >= 0 &&
		    (!integer || (v == floor(v) && v <= INT_MAX))) {
			*out = v;
			return 0;
		}
	}
	err(ld, n, "'%s' must be a non-negative %s, not %s%s%s", key,
	    integer ? "integer" : "number", s ? "'" : "", s ? s : kind_name(n), s ? "'" : "");
	return -1;
}

/* A string or a list of strings. */
static int
get_strings(struct loader *ld, yaml_node_t *n, const char *key, struct pipeline_strings *out,
    int allow_single)
{
	yaml_node_item_t *it;

	if (n->type == YAML_SCALAR_NODE && allow_single && !is_null(n)) {
		out->v = xrealloc(out->v, (size_t)(out->n + 1) * sizeof(char *));
		out->v[out->n++] = xstrdup(scalar(n));
		return 0;
	}
	if (n->type != YAML_SEQUENCE_NODE) {
		err(ld, n, "'%s' must be a list of strings%s, not %s", key,
		    allow_single ? " (or one string)" : "", is_null(n) ? "null" : kind_name(n));
		return -1;
	}
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = node(ld, *it);

		if (e == NULL || e->type != YAML_SCALAR_NODE || is_null(e)) {
			err(ld, e ? e : n, "each element of '%s' must be a string, not %s", key,
			    e == NULL ? "nothing" : is_null(e) ? "null" : kind_name(e));
			return -1;
		}
		if (strlen(scalar(e)) != e->data.scalar.length) {
			err(ld, e, "an element of '%s' contains a NUL byte", key);
			return -1;
		}
		out->v = xrealloc(out->v, (size_t)(out->n + 1) * sizeof(char *));
		out->v[out->n++] = xstrdup(scalar(e));
	}
	return 0;
}

static void
free_strings(struct pipeline_strings *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* Reports an unknown key with the list of known ones. */
static void
unknown_key(struct loader *ld, yaml_node_t *k, const char *where, const char *const *known)
{
	char list[512];
	size_t o = 0;
	int i;

	list[0] = '\0';
	for (i = 0; known[i] && o < sizeof(list) - 64; i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", known[i]);
	err(ld, k, "unknown key '%s' in %s (known: %s)", scalar(k) ? scalar(k) : "?", where, list);
}

/* Checks that N is a mapping whose keys are scalars; reports duplicates. */
static int
check_mapping(struct loader *ld, yaml_node_t *n, const char *what)
{
	yaml_node_pair_t *p, *q;

	if (n->type != YAML_MAPPING_NODE) {
		err(ld, n, "%s must be a mapping (key: value), not %s", what,
		    is_null(n) ? "null" : kind_name(n));
		return -1;
	}
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(ld, p->key);

		if (k == NULL || k->type != YAML_SCALAR_NODE) {
			err(ld, k ? k : n, "keys in %s must be plain strings", what);
			return -1;
		}
		for (q = n->data.mapping.pairs.start; q < p; q++)
			if (strcmp(scalar(node(ld, q->key)), scalar(k)) == 0) {
				err(ld, k, "duplicate key '%s' in %s (first at line %d)", scalar(k),
				    what, line_of(node(ld, q->key)));
				return -1;
			}
	}
	return 0;
}

/* Removes "." and "dir/.." components in place (lexically; PATH is absolute). */
static void
normalize(char *path)
{
	char *out = path, *p = path;

	while (*p) {
		char *seg = p + 1, *end;
		size_t n;

		end = strchr(seg, '/');
		if (end == NULL)
			end = seg + strlen(seg);
		n = (size_t)(end - seg);
		if (n == 0 || (n == 1 && seg[0] == '.')) {
			/* "//" or "/." */
		} else if (n == 2 && seg[0] == '.' && seg[1] == '.') {
			while (out > path && *--out != '/')
				;
		} else {
			memmove(out, p, n + 1);
			out += n + 1;
		}
		p = end;
	}
	if (out == path)
		*out++ = '/';
	*out = '\0';
}

/* Relative paths are relative to the pipeline file's directory. */
static char *
resolve(struct loader *ld, const char *p)
{
	size_t n;
	char *r;

	if (p[0] == '/')
		r = xstrdup(p);
	else {
		n = strlen(ld->pl->dir) + strlen(p) + 2;
		r = xmalloc(n);
		snprintf(r, n, "%s/%s", ld->pl->dir, p);
	}
	normalize(r);
	return r;
}

static void
resolve_all(struct loader *ld, struct pipeline_strings *s)
{
	int i;

	for (i = 0; i < s->n; i++) {
		char *r = resolve(ld, s->v[i]);

		free(s->v[i]);
		s->v[i] = r;
	}
}

/* ---------- what step and output arguments may say ---------- */

/*
 * The options a pipeline may pass to each tool.  Anything else is
 * refused: an output file (-o) would write outside 'output' and leave
 * the real output empty, a file argument (--palette-file, an extra
 * trace) would read any file, --help/--version would replace the data.
 * GNU getopt also takes unambiguous prefixes ("--out"), so names must
 * match exactly.  --symbols is allowed: it only names directories in
 * which PDB files are looked up by module name (docs/pipelines.md).
 */
struct tool_option {
	char shortopt;		/* 0: long only */
	const char *name;	/* NULL: end of table */
	int has_arg;
};

#define STK_ALLOWED \
	{ 0, "group", 1 }, { 0, "fold", 1 }, { 0, "include", 1 }, { 0, "exclude", 1 }, \
	{ 0, "fold-pct", 1 }, { 0, "preset", 1 }, { 0, "chain-groups", 0 }, \
	{ 0, "keep-addrs", 0 }, { 0, "kernel", 0 }, { 0, "roots", 1 }, { 0, "unit", 1 }, \
	{ 0, "kind", 1 }, { 0, "decimals", 1 }, { 0, "no-scenario", 0 }, { 0, "keep-idle", 0 }, \
	{ 0, "thread-time", 0 }, { 0, "readied-by", 0 }
#define DS_ALLOWED \
	{ 0, "keep-ids", 0 }, { 0, "perf-ids", 0 }, { 0, "strip-hex", 0 }

static const struct tool_option etl2evt_allowed[] = {
	{ 'k', "kinds", 1 }, { 'p', "process", 1 }, { 's', "start", 1 }, { 'e', "end", 1 },
	{ 0, "utc", 0 }, { 0, "full-paths", 0 }, { 0, "addrs", 0 }, { 0, "member", 1 },
	{ 0, "symbols", 1 }, { 0, "no-symbols", 0 }, { 0, NULL, 0 }
};
static const struct tool_option evtfilter_allowed[] = {
	{ 'p', "process", 1 }, { 't', "thread", 1 }, { 'C', "cpu", 1 }, { 'k', "kind", 1 },
	{ 0, "start", 1 }, { 0, "end", 1 }, { 'i', "include", 1 }, { 'x', "exclude", 1 },
	{ 0, "poi", 1 }, { 0, "keep-idle", 0 }, { 0, NULL, 0 }
};
/* stackfold's product must stay folded stacks: no --by-name/--tsv */
static const struct tool_option stackfold_allowed[] = {
	STK_ALLOWED, { 'g', "group", 1 }, { 'f', "fold", 1 }, { 'i', "include", 1 },
	{ 'x', "exclude", 1 }, { 'p', "preset", 1 }, { 'k', "kernel", 0 }, { 's', "stats", 0 },
	{ 0, NULL, 0 }
};
/* render flame and render dpc: everything but -o, --palette-file, --help, --version */
static const struct tool_option render_allowed[] = {
	STK_ALLOWED, { 0, "title", 1 }, { 0, "subtitle", 1 }, { 0, "width", 1 },
	{ 0, "height", 1 }, { 0, "minwidth", 1 }, { 0, "fonttype", 1 }, { 0, "fontsize", 1 },
	{ 0, "fontwidth", 1 }, { 0, "countname", 1 }, { 0, "nametype", 1 }, { 0, "colors", 1 },
	{ 0, "palette", 1 }, { 0, "bgcolors", 1 }, { 0, "hash", 0 }, { 0, "cp", 0 },
	{ 0, "reverse", 0 }, { 0, "inverted", 0 }, { 0, "icicle", 0 }, { 0, "flamechart", 0 },
	{ 0, "negate", 0 }, { 0, "factor", 1 }, { 0, "total", 1 }, { 0, "notes", 1 },
	{ 0, "diff", 1 }, { 0, "no-unescape", 0 }, { 0, "search-color", 1 }, { 0, "tsv", 0 },
	{ 0, "min-percent", 1 }, { 'f', "frame", 1 }, { 0, "by", 1 }, { 0, "cpu", 1 },
	{ 0, "dpc", 0 }, { 0, "isr", 0 }, { 0, "dpc-limit", 1 }, { 0, "isr-limit", 1 },
	{ 'm', "module", 1 }, { 0, "label", 1 }, { 0, "log", 0 }, { 0, "max-depth", 1 },
	{ 0, NULL, 0 }
};
static const struct tool_option diff_allowed[] = {
	STK_ALLOWED, DS_ALLOWED, { 'f', "format", 1 }, { 'n', "normalize", 0 },
	{ 0, "normalise", 0 }, { 'q', "quiet", 0 }, { 't', "totals", 0 }, { 0, "fractions", 0 },
	{ 0, NULL, 0 }
};
static const struct tool_option overweight_allowed[] = {
	STK_ALLOWED, DS_ALLOWED, { 0, "tsv", 0 }, { 'c', "collapse", 0 }, { 'r', "min-resp", 1 },
	{ 'a', "all", 0 }, { 0, "per-sample", 1 }, { 0, NULL, 0 }
};

static const struct tool_option *
find_option(const struct tool_option *t, char shortopt, const char *name, size_t namelen)
{
	for (; t->name; t++)
		if (shortopt ? t->shortopt == shortopt :
		    strlen(t->name) == namelen && memcmp(t->name, name, namelen) == 0)
			return t;
	return NULL;
}

/*
 * Checks the argument list N (already read as strings) against the
 * options TOOL may be given, as getopt_long would split it.  Reports
 * the first refused element with its line.
 */
static void
check_args(struct loader *ld, yaml_node_t *n, const char *tool, const struct tool_option *allowed)
{
	yaml_node_item_t *it;
	int want_value = 0;

	if (n == NULL || n->type != YAML_SEQUENCE_NODE)
		return;
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = node(ld, *it);
		const char *a = e ? scalar(e) : NULL, *p;
		const struct tool_option *o = NULL;

		if (a == NULL)
			return;
		if (want_value) {
			want_value = 0;		/* the value of the option before */
			continue;
		}
		if (a[0] == '-' && a[1] == '-' && a[2] != '\0') {
			size_t len = strcspn(a + 2, "=");

			o = find_option(allowed, 0, a + 2, len);
			if (o && !o->has_arg && a[2 + len] == '=')
				o = NULL;
			want_value = o && o->has_arg && a[2 + len] != '=';
		} else if (a[0] == '-' && a[1] != '\0' && a[1] != '-') {
			/* a cluster of short options; one taking a value ends it */
			for (p = a + 1; *p; p++) {
				o = find_option(allowed, *p, NULL, 0);
				if (o == NULL || o->has_arg)
					break;
			}
			want_value = o && o->has_arg && p[1] == '\0';
		}
		if (o == NULL) {
			err(ld, e, "'%s' is not allowed in the arguments of %s: a pipeline passes "
			    "options only, not files, outputs or other operands (docs/pipelines.md)",
			    a, tool);
			return;
		}
	}
	if (want_value)
		err(ld, n, "the last option of these %s arguments has no value", tool);
}

/*
 * An output's file name: a plain name inside 'output'.  No directory
 * part ("../x", "/etc/x", "a/b" would write elsewhere or need
 * directories), no leading '.' (the run's own temporaries and scratch
 * files are hidden files there), not the run report.
 */
static void
check_output_name(struct loader *ld, yaml_node_t *v, const char *name)
{
	if (*name == '\0')
		err(ld, v, "an output file name is empty");
	else if (strchr(name, '/'))
		err(ld, v, "output file name '%s' has a '/': outputs are plain file names, "
		    "written into 'output'", name);
	else if (name[0] == '.')
		err(ld, v, "output file name '%s' starts with '.' (reserved for the run's "
		    "temporary files)", name);
	else if (strcmp(name, "run-report.tsv") == 0)
		err(ld, v, "'run-report.tsv' is the run's own report, not an output name");
}

/* ---------- sections ---------- */

static void
load_scenario(struct loader *ld, yaml_node_t *n, struct pipeline_scenario *sc)
{
	static const char *const known[] = {
		"files", "exclude", "name", "process", "start_ms", "end_ms", NULL
	};
	yaml_node_pair_t *p;
	int have_files = 0;

	memset(sc, 0, sizeof(*sc));
	sc->line = line_of(n);
	if (check_mapping(ld, n, "a scenario") < 0)
		return;
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(ld, p->key), *v = node(ld, p->value);
		const char *key = scalar(k);

		if (!strcmp(key, "files")) {
			have_files = get_strings(ld, v, key, &sc->files, 1) == 0;
			if (have_files && sc->files.n == 0) {
				err(ld, v, "'files' is an empty list");
				have_files = 0;
			}
		} else if (!strcmp(key, "exclude"))
			get_strings(ld, v, key, &sc->exclude, 1);
		else if (!strcmp(key, "name"))
			get_string(ld, v, key, &sc->name);
		else if (!strcmp(key, "process"))
			get_string(ld, v, key, &sc->process);
		else if (!strcmp(key, "start_ms"))
			sc->has_start = get_number(ld, v, key, &sc->start_ms, 0) == 0;
		else if (!strcmp(key, "end_ms"))
			sc->has_end = get_number(ld, v, key, &sc->end_ms, 0) == 0;
		else
			unknown_key(ld, k, "a scenario", known);
	}
	if (!have_files && sc->files.n == 0)
		err(ld, n, "a scenario needs 'files' (a glob or a list of globs)");
	if (sc->has_start && sc->has_end && sc->end_ms < sc->start_ms)
		err(ld, n, "end_ms (%g) is before start_ms (%g)", sc->end_ms, sc->start_ms);
	if (sc->name == NULL)
		sc->name = xstrdup("$1");
	resolve_all(ld, &sc->files);
	resolve_all(ld, &sc->exclude);
}

static void
load_product(struct loader *ld, yaml_node_t *k, yaml_node_t *n, struct pipeline_product *pr)
{
	static const char *const known[] = {
		"etl2evt", "evtfilter", "stackfold", "scenario_process", NULL
	};
	yaml_node_pair_t *p;
	const char *name = scalar(k);
	size_t i;
	int t;

	memset(pr, 0, sizeof(*pr));
	pr->name = xstrdup(name);
	pr->line = line_of(k);
	pr->scenario_process = 1;
	for (i = 0; name[i]; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= '0' && name[i] <= '9') || name[i] == '_' || name[i] == '-')) {
			err(ld, k, "step name '%s': use letters, digits, '_' and '-' only", name);
			break;
		}
	if (is_null(n))
		return;		/* "cpu:" alone: the trace as it is */
	if (check_mapping(ld, n, "a step") < 0)
		return;
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *kk = node(ld, p->key), *v = node(ld, p->value);
		const char *key = scalar(kk);

		for (t = 0; t < PIPELINE_NTOOLS; t++)
			if (!strcmp(key, tool_names[t]))
				break;
		if (t < PIPELINE_NTOOLS) {
			static const struct tool_option *const allowed[PIPELINE_NTOOLS] = {
				etl2evt_allowed, evtfilter_allowed, stackfold_allowed
			};

			pr->has_step[t] = 1;
			if (!is_null(v) && get_strings(ld, v, key, &pr->args[t], 0) == 0)
				check_args(ld, v, key, allowed[t]);
		} else if (!strcmp(key, "scenario_process"))
			get_bool(ld, v, key, &pr->scenario_process);
		else
			unknown_key(ld, kk, "a step", known);
	}
}

static void
load_output(struct loader *ld, yaml_node_t *n, struct pipeline_output *o)
{
	static const char *const known[] = {
		"folded", "by_name", "flamegraph", "dpc_report", "diff", "overweight",
		"from", "scenario_frame", "mode", "integer", "baseline", "args", NULL
	};
	yaml_node_pair_t *p;
	int ntype = 0, t;
	char *mode = NULL;
	yaml_node_t *args = NULL;

	memset(o, 0, sizeof(*o));
	o->line = line_of(n);
	o->scenario_frame = 1;
	o->product = -1;
	if (check_mapping(ld, n, "an output") < 0)
		return;
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(ld, p->key), *v = node(ld, p->value);
		const char *key = scalar(k);

		for (t = 0; t < PIPELINE_OUT_NTYPES; t++)
			if (!strcmp(key, output_names[t]))
				break;
		if (t < PIPELINE_OUT_NTYPES) {
			if (ntype++ > 0) {
				err(ld, k, "an output has one type; '%s' comes after '%s'", key,
				    output_names[o->type]);
				continue;
			}
			o->type = (enum pipeline_output_type)t;
			if (get_string(ld, v, key, &o->path) == 0)	/* joined to 'output' later */
				check_output_name(ld, v, o->path);
		} else if (!strcmp(key, "from"))
			get_string(ld, v, key, &o->from);
		else if (!strcmp(key, "scenario_frame"))
			get_bool(ld, v, key, &o->scenario_frame);
		else if (!strcmp(key, "integer"))
			get_bool(ld, v, key, &o->integer);
		else if (!strcmp(key, "mode")) {
			if (get_string(ld, v, key, &mode) == 0) {
				if (!strcmp(mode, "mean"))
					o->mean = 1;
				else if (strcmp(mode, "sum") != 0)
					err(ld, v, "'mode' must be 'sum' or 'mean', not '%s'", mode);
			}
		} else if (!strcmp(key, "baseline")) {
			if (get_string(ld, v, key, &o->baseline) == 0) {
				char *r = resolve(ld, o->baseline);

				free(o->baseline);
				o->baseline = r;
			}
		} else if (!strcmp(key, "args")) {
			if (get_strings(ld, v, key, &o->args, 0) == 0)
				args = v;
		} else
			unknown_key(ld, k, "an output", known);
	}
	free(mode);
	if (ntype == 0)
		err(ld, n, "an output needs a type key with its file: folded, by_name, flamegraph, "
		    "dpc_report, diff or overweight");
	if (ntype && (o->type == PIPELINE_OUT_DIFF || o->type == PIPELINE_OUT_OVERWEIGHT) && !o->baseline)
		err(ld, n, "a %s output needs 'baseline' (a folded file from an earlier run)",
		    output_names[o->type]);
	if (ntype && o->baseline && o->type != PIPELINE_OUT_DIFF && o->type != PIPELINE_OUT_OVERWEIGHT)
		err(ld, n, "'baseline' only applies to diff and overweight outputs");
	if (ntype && args)
		check_args(ld, args, o->type == PIPELINE_OUT_DIFF ? "diff" : o->type == PIPELINE_OUT_OVERWEIGHT ?
		    "overweight" : "render", o->type == PIPELINE_OUT_DIFF ? diff_allowed :
		    o->type == PIPELINE_OUT_OVERWEIGHT ? overweight_allowed : render_allowed);
}

static void
load_top(struct loader *ld, yaml_node_t *root)
{
	static const char *const known[] = {
		"etlkit", "cache", "output", "jobs", "verify", "timeout_s",
		"scenarios", "steps", "outputs", NULL
	};
	struct pipeline *pl = ld->pl;
	yaml_node_pair_t *p;
	yaml_node_item_t *it;
	int have_version = 0, i, j;
	yaml_node_t *outputs = NULL, *scenarios = NULL;

	if (check_mapping(ld, root, "the pipeline") < 0)
		return;
	for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(ld, p->key), *v = node(ld, p->value);
		const char *key = scalar(k);
		double d;

		if (!strcmp(key, "etlkit")) {
			if (get_number(ld, v, key, &d, 1) == 0) {
				have_version = 1;
				if (d != PIPELINE_VERSION)
					err(ld, v, "pipeline version %g; this etlkit-run reads version %d",
					    d, PIPELINE_VERSION);
			}
		} else if (!strcmp(key, "cache")) {
			char *s = NULL;

			if (get_string(ld, v, key, &s) == 0) {
				free(pl->cache);
				pl->cache = resolve(ld, s);
			}
			free(s);
		} else if (!strcmp(key, "output")) {
			char *s = NULL;

			if (get_string(ld, v, key, &s) == 0) {
				free(pl->outdir);
				pl->outdir = resolve(ld, s);
			}
			free(s);
		} else if (!strcmp(key, "jobs")) {
			if (get_number(ld, v, key, &d, 1) == 0)
				pl->jobs = (int)d;
		} else if (!strcmp(key, "verify"))
			get_bool(ld, v, key, &pl->verify);
		else if (!strcmp(key, "timeout_s"))
			get_number(ld, v, key, &pl->timeout_s, 0);
		else if (!strcmp(key, "scenarios"))
			scenarios = v;
		else if (!strcmp(key, "steps")) {
			yaml_node_pair_t *q;

			if (check_mapping(ld, v, "'steps'") < 0)
				continue;
			for (q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top; q++) {
				pl->prod = xrealloc(pl->prod, (size_t)(pl->nprod + 1) * sizeof(*pl->prod));
				load_product(ld, node(ld, q->key), node(ld, q->value), &pl->prod[pl->nprod]);
				pl->nprod++;
			}
		} else if (!strcmp(key, "outputs"))
			outputs = v;
		else
			unknown_key(ld, k, "the pipeline", known);
	}
	if (!have_version)
		err(ld, root, "missing 'etlkit: %d' (the pipeline format version)", PIPELINE_VERSION);
	if (scenarios == NULL)
		err(ld, root, "missing 'scenarios' (a list of traces to convert)");
	else if (scenarios->type != YAML_SEQUENCE_NODE)
		err(ld, scenarios, "'scenarios' must be a list, not %s", kind_name(scenarios));
	else
		for (it = scenarios->data.sequence.items.start; it < scenarios->data.sequence.items.top; it++) {
			pl->scen = xrealloc(pl->scen, (size_t)(pl->nscen + 1) * sizeof(*pl->scen));
			load_scenario(ld, node(ld, *it), &pl->scen[pl->nscen]);
			pl->nscen++;
		}
	if (pl->nprod == 0) {
		/* no steps: one product "stacks", the trace as it is (evt or folded) */
		pl->prod = xcalloc(1, sizeof(*pl->prod));
		pl->prod[0].name = xstrdup("stacks");
		pl->prod[0].scenario_process = 1;
		pl->nprod = 1;
	}
	if (outputs == NULL)
		err(ld, root, "missing 'outputs' (what the run writes)");
	else if (outputs->type != YAML_SEQUENCE_NODE)
		err(ld, outputs, "'outputs' must be a list, not %s", kind_name(outputs));
	else
		for (it = outputs->data.sequence.items.start; it < outputs->data.sequence.items.top; it++) {
			struct pipeline_output *o;

			pl->out = xrealloc(pl->out, (size_t)(pl->nout + 1) * sizeof(*pl->out));
			o = &pl->out[pl->nout++];
			load_output(ld, node(ld, *it), o);
			if (o->from == NULL && pl->nprod == 1)
				o->from = xstrdup(pl->prod[0].name);
			if (o->from == NULL)
				err(ld, node(ld, *it), "this output needs 'from' (one of the steps)");
			else if ((o->product = pipeline_product_index(pl, o->from)) < 0)
				err(ld, node(ld, *it), "'from: %s' names no step under 'steps'", o->from);
		}
	for (i = 0; i < pl->nout; i++)
		if (pl->out[i].path) {
			char *r = xmalloc(strlen(pl->outdir) + strlen(pl->out[i].path) + 2);

			sprintf(r, "%s/%s", pl->outdir, pl->out[i].path);
			free(pl->out[i].path);
			pl->out[i].path = r;
		}
	/* two outputs writing one file would race */
	for (i = 0; i < pl->nout; i++)
		for (j = 0; j < i; j++)
			if (pl->out[i].path && pl->out[j].path &&
			    strcmp(pl->out[i].path, pl->out[j].path) == 0)
				err(ld, NULL, "outputs at lines %d and %d write the same file %s",
				    pl->out[j].line, pl->out[i].line, pl->out[i].path);
}

int
pipeline_product_index(const struct pipeline *pl, const char *name)
{
	int i;

	for (i = 0; i < pl->nprod; i++)
		if (strcmp(pl->prod[i].name, name) == 0)
			return i;
	return -1;
}

char *
pipeline_expand_arg(const struct pipeline *pl, const char *a)
{
	const char *at = strstr(a, "{dir}");
	char *r, *rest;

	if (at == NULL)
		return xstrdup(a);
	rest = pipeline_expand_arg(pl, at + 5);
	r = runtext_printf("%.*s%s%s", (int)(at - a), a, pl->dir, rest);
	free(rest);
	return r;
}

/* Absolute directory of PATH. */
static char *
abs_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir, *res, cwd[PATH_MAX];

	dir = slash ? xstrndup(path, (size_t)(slash - path) + (slash == path)) : xstrdup(".");
	res = realpath(dir, NULL);
	if (res == NULL) {
		if (dir[0] == '/' || getcwd(cwd, sizeof(cwd)) == NULL)
			return dir;
		res = xmalloc(strlen(cwd) + strlen(dir) + 2);
		sprintf(res, "%s/%s", cwd, dir);
	}
	free(dir);
	return res;
}

/*
 * libyaml's document loader takes time quadratic in the nesting depth
 * (100k nested '[' cost over half a minute) before we could look at a
 * single key.  A pipeline is a few levels deep, so the file is first
 * read as events, stopping at the first collection deeper than
 * PIPELINE_MAX_DEPTH.  Returns -1 (reported) when too deep, else 0; syntax
 * errors are left to the loader, which reports them.
 */
static int
check_depth(const char *path, FILE *fp)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	int depth = 0, rc = 0, done = 0;

	if (!yaml_parser_initialize(&parser))
		cli_fatal("cannot initialise libyaml");
	yaml_parser_set_input_file(&parser, fp);
	while (!done && yaml_parser_parse(&parser, &ev)) {
		switch (ev.type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++depth > PIPELINE_MAX_DEPTH) {
				cli_warn("%s:%lu: nested deeper than %d levels (lists and mappings); "
				    "a pipeline needs a handful", path,
				    (unsigned long)ev.start_mark.line + 1, PIPELINE_MAX_DEPTH);
				rc = -1;
				done = 1;
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return rc;
}

struct pipeline *
pipeline_load(const char *path)
{
	struct loader ld = { 0 };
	yaml_parser_t parser;
	FILE *fp;
	yaml_node_t *root;
	struct pipeline *pl;
	const char *base;

	ld.file = path;
	fp = fopen(path, "rb");
	if (fp == NULL) {
		cli_warn("%s: %s", path, strerror(errno));
		return NULL;
	}
	if (check_depth(path, fp) < 0) {
		fclose(fp);
		return NULL;
	}
	if (fseek(fp, 0, SEEK_SET) != 0) {
		cli_warn("%s: cannot read the file twice (%s): give a regular file", path,
		    strerror(errno));
		fclose(fp);
		return NULL;
	}
	if (!yaml_parser_initialize(&parser))
		cli_fatal("cannot initialise libyaml");
	yaml_parser_set_input_file(&parser, fp);
	if (!yaml_parser_load(&parser, &ld.doc)) {
		cli_warn("%s:%lu: YAML syntax error: %s%s%s", path,
		    (unsigned long)parser.problem_mark.line + 1,
		    parser.problem ? parser.problem : "unknown problem",
		    parser.context ? " " : "", parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		fclose(fp);
		return NULL;
	}
	yaml_parser_delete(&parser);
	fclose(fp);

	pl = xcalloc(1, sizeof(*pl));
	ld.pl = pl;
	pl->file = xstrdup(path);
	pl->dir = abs_dir(path);
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	{
		/* defaults: .etlkit-cache/NAME and out/NAME beside the pipeline */
		char *stem = xstrdup(base), *dot = strrchr(stem, '.'), buf[PATH_MAX + 64];

		if (dot && dot != stem)
			*dot = '\0';
		snprintf(buf, sizeof(buf), "%s/.etlkit-cache/%s", pl->dir, stem);
		pl->cache = xstrdup(buf);
		snprintf(buf, sizeof(buf), "%s/out/%s", pl->dir, stem);
		pl->outdir = xstrdup(buf);
		free(stem);
	}
	root = yaml_document_get_root_node(&ld.doc);
	if (root == NULL)
		err(&ld, NULL, "empty pipeline file");
	else
		load_top(&ld, root);
	yaml_document_delete(&ld.doc);
	if (ld.nerr > 0) {
		if (ld.nerr > MAX_ERRORS)
			cli_warn("%s: %d more errors", path, ld.nerr - MAX_ERRORS);
		pipeline_free(pl);
		return NULL;
	}
	return pl;
}

void
pipeline_free(struct pipeline *pl)
{
	int i, t;

	if (pl == NULL)
		return;
	for (i = 0; i < pl->nscen; i++) {
		free_strings(&pl->scen[i].files);
		free_strings(&pl->scen[i].exclude);
		free(pl->scen[i].name);
		free(pl->scen[i].process);
	}
	for (i = 0; i < pl->nprod; i++) {
		free(pl->prod[i].name);
		for (t = 0; t < PIPELINE_NTOOLS; t++)
			free_strings(&pl->prod[i].args[t]);
	}
	for (i = 0; i < pl->nout; i++) {
		free(pl->out[i].path);
		free(pl->out[i].from);
		free(pl->out[i].baseline);
		free_strings(&pl->out[i].args);
	}
	free(pl->scen);
	free(pl->prod);
	free(pl->out);
	free(pl->file);
	free(pl->dir);
	free(pl->cache);
	free(pl->outdir);
	free(pl);
}
