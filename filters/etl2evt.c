/*
 * etl2evt - decode a Windows ETW trace (.etl or PerfView .etl.zip) into evt.
 *
 * USAGE:  etl2evt [-k KINDS] [-p PROCS] [-s MS] [-e MS] [--utc] [--full-paths]
 *                 [--addrs] [--symbols PATH] [--no-symbols] [--member NAME]
 *                 [--census] [-o FILE] [FILE|- ...]
 * INPUT:  an .etl file, a zip holding one or several (PerfView .etl.zip,
 *         .diagsession), or either on stdin.  Several files of one session
 *         are merged on their absolute times.
 * OUTPUT: the evt stream (docs/evt-format.md), e.g.
 *   29.446000	Sample	7	System	4	584	1	ip=0xffffffffffd03003	prio=14	kframes=3	ntoskrnl.exe!0x1a3f0;...
 *
 * Exit: 0 all decoded; 1 some of the input was corrupt and skipped (each
 * problem reported as "etl2evt: FILE: offset N: ..."); 2 fatal.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "etl.h"
#include "etl_evt.h"
#include "evt.h"
#include "symbols.h"
#include "zip.h"

static const char *input_name;
static unsigned long nproblems;

static void
usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: etl2evt [-k KINDS] [-p PROCS] [-s MS] [-e MS] [--utc] [--full-paths] [--addrs] "
	    "[--symbols PATH] [--no-symbols] [--member NAME] [--census] [-o FILE] [FILE|- ...]\n");
	exit(status);
}

static void
on_error(void *ctx, uint64_t off, const char *msg)
{
	const char *name = ctx ? ctx : input_name;
	nproblems++;
	if (nproblems <= 50)
		cli_warn("%s: offset %llu: %s", name, (unsigned long long)off, msg);
	else if (nproblems == 51)
		cli_warn("%s: more problems; not reporting them one by one", name);
}

/* One trace file to decode: a descriptor, its mapping, its reader. */
struct input {
	char *name;		/* for messages: FILE or ZIP:MEMBER */
	int fd;
	const uint8_t *data;
	size_t len;
	struct etl_reader *r;
};
static struct input *inputs;
static size_t ninputs;

static void
add_input(const char *name, int fd)
{
	inputs = xrealloc(inputs, (ninputs + 1) * sizeof *inputs);
	struct input *in = &inputs[ninputs++];
	memset(in, 0, sizeof *in);
	in->name = xstrdup(name);
	in->fd = fd;
}

/* Copies stdin (or a zip member) into an unlinked temporary file. */
static int
temp_file(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/etl2evt.XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		cli_fatal("cannot create a temporary file in %s: %s", dir && *dir ? dir : "/tmp",
		    strerror(errno));
	unlink(path);
	return fd;
}

static int
spool_stdin(void)
{
	int fd = temp_file();
	char buf[1 << 16];
	ssize_t n;
	while ((n = read(0, buf, sizeof buf)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			cli_fatal("stdin: %s", strerror(errno));
		}
		for (ssize_t w = 0; w < n;) {
			ssize_t k = write(fd, buf + w, (size_t)(n - w));
			if (k < 0)
				cli_fatal("temporary file: %s", strerror(errno));
			w += k;
		}
	}
	return fd;
}

static int
ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcasecmp(s + a - b, suf) == 0;
}

/*
 * The .etl members to decode: NAME if given, else every .etl in the zip
 * (a .diagsession holds a kernel and user files of one session: they are
 * merged).  Each is inflated into a temporary file.
 */
static void
add_zip_members(int zfd, const char *zipname, const char *member)
{
	struct zip_archive z;
	char err[512], name[4096];
	long pick = -1;

	if (zip_open_fd(&z, zfd, err, sizeof err) < 0)
		cli_fatal("%s: %s", zipname, err);
	if (member) {
		pick = zip_find(&z, member);
		if (pick < 0)
			for (size_t i = 0; i < z.n; i++) {
				const char *b = strrchr(z.m[i].name, '/');
				const char *b2 = strrchr(z.m[i].name, '\\');
				if (b2 > b)
					b = b2;
				if (strcmp(b ? b + 1 : z.m[i].name, member) == 0)
					pick = (long)i;
			}
		if (pick < 0)
			cli_fatal("%s: no member named %s", zipname, member);
	}
	size_t found = 0;
	for (size_t i = 0; i < z.n; i++) {
		if (pick >= 0 ? (long)i != pick : !ends_with(z.m[i].name, ".etl"))
			continue;
		int fd = temp_file();
		if (zip_extract_fd(&z, i, fd, err, sizeof err) < 0)
			cli_fatal("%s: %s", zipname, err);
		snprintf(name, sizeof name, "%s:%s", zipname, z.m[i].name);
		add_input(name, fd);
		found++;
	}
	if (!found)
		cli_fatal("%s: the zip holds no .etl file", zipname);
	zip_close(&z);
}

static int
cmp_image_info(const void *a, const void *b)
{
	const struct sym_image_info *x = a, *y = b;
	int d = strcmp(x->image ? x->image : "", y->image ? y->image : "");
	return d ? d : strcmp(x->key ? x->key : "", y->key ? y->key : "");
}

/*
 * "#symbols" metadata: which PDBs named frames, and why the others did
 * not; by image name, so that the order does not depend on when lines
 * happened to be written.
 */
static void
write_symbol_lines(struct outbuf *ob, const struct symctx *sym)
{
	char esc[3 * 1024];
	size_t n = 0, total = sym_image_count(sym);
	struct sym_image_info *info = xcalloc(total ? total : 1, sizeof *info);
	for (size_t i = 0; i < total; i++) {
		sym_image_info(sym, i, &info[n]);
		if (info[n].lookups > 0)
			n++;
	}
	qsort(info, n, sizeof *info, cmp_image_info);
	for (size_t i = 0; i < n; i++) {
		struct sym_image_info in = info[i];
		const char *fields[][2] = { { "image", in.image }, { "pdb", in.pdb }, { "key", in.key },
		    { "status", sym_status_name(in.status) }, { "path", in.path },
		    { "detail", in.detail } };
		ob_puts(ob, "#symbols");
		for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
			const char *v = fields[f][1];
			if (!v || !*v)
				continue;
			size_t len = strlen(v);
			if (len > 1000)
				len = 1000;
			ob_printf(ob, "\t%s=", fields[f][0]);
			ob_write(ob, esc, evt_escape(esc, v, len, 0));
		}
		ob_printf(ob, "\tlookups=%llu\tresolved=%llu\n", (unsigned long long)in.lookups,
		    (unsigned long long)in.resolved);
	}
	free(info);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "kinds", required_argument, NULL, 'k' },
		{ "process", required_argument, NULL, 'p' },
		{ "start", required_argument, NULL, 's' },
		{ "end", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "utc", no_argument, NULL, 'U' },
		{ "full-paths", no_argument, NULL, 'F' },
		{ "addrs", no_argument, NULL, 'A' },
		{ "member", required_argument, NULL, 'm' },
		{ "census", no_argument, NULL, 'C' },
		{ "symbols", required_argument, NULL, 'S' },
		{ "no-symbols", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct etl2evt_opts o;
	const char *out = NULL, *member = NULL;
	int ch, census = 0, use_symbols = 1, explicit_symbols = 0;
	struct symctx *sym = NULL;

	cli_init("etl2evt");
	memset(&o, 0, sizeof o);
	while ((ch = getopt_long(argc, argv, "k:p:s:e:o:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'k': o.kinds = optarg; break;
		case 'p': o.procs = optarg; break;
		case 's': o.has_from = 1; o.from_ms = cli_number("--start", optarg); break;
		case 'e': o.has_to = 1; o.to_ms = cli_number("--end", optarg); break;
		case 'o': out = optarg; break;
		case 'U': o.utc = 1; break;
		case 'F': o.full_paths = 1; break;
		case 'A': o.addrs = 1; break;
		case 'm': member = optarg; break;
		case 'C': census = 1; break;
		case 'S':
			if (!sym)
				sym = sym_new();
			sym_add_path(sym, optarg);
			explicit_symbols = 1;
			break;
		case 'N': use_symbols = 0; break;
		case 'h': usage(0); break;
		case 'V': cli_version(); break;
		default: usage(2);
		}
	}
	argc -= optind;
	argv += optind;
	input_name = argc >= 1 ? argv[0] : "-";
	if (o.has_from && o.has_to && o.to_ms < o.from_ms)
		cli_usage_error("--end is before --start");

	for (int a = 0; a < (argc ? argc : 1); a++) {
		const char *name = argc ? argv[a] : "-";
		int fd;
		if (strcmp(name, "-") == 0)
			fd = spool_stdin();
		else if ((fd = open(name, O_RDONLY)) < 0)
			cli_fatal("%s: %s", name, strerror(errno));
		unsigned char magic[4] = { 0 };
		if (pread(fd, magic, 4, 0) == 4 && zip_magic(magic, 4)) {
			add_zip_members(fd, name, member);
			close(fd);
		} else if (member)
			cli_usage_error("--member is for zip inputs");
		else
			add_input(name, fd);
	}
	if (census && ninputs != 1)
		cli_usage_error("--census takes one trace (use --member for zips holding several)");

	struct etl_reader **readers = xcalloc(ninputs, sizeof *readers);
	for (size_t i = 0; i < ninputs; i++) {
		struct input *in = &inputs[i];
		struct stat st;
		if (fstat(in->fd, &st) < 0)
			cli_fatal("%s: %s", in->name, strerror(errno));
		in->len = (size_t)st.st_size;
		if (in->len > 0) {
			in->data = mmap(NULL, in->len, PROT_READ, MAP_PRIVATE, in->fd, 0);
			if (in->data == MAP_FAILED)
				cli_fatal("%s: cannot map: %s", in->name, strerror(errno));
			map_sequential(in->data, in->len);
		}
		in->r = in->data ? etl_open_mapped(in->data, in->len, on_error, in->name, in->fd) :
		    etl_open((const uint8_t *)"", 0, on_error, in->name);
		if (!in->r)
			exit(EXIT_FATAL);
		readers[i] = in->r;
	}
	struct etl_reader *r = readers[0];

	struct outbuf ob;
	ob_open(&ob, out);
	int partial;
	if (census) {
		etl_census(r, &ob);
		partial = etl_damage(r)->buffers > 0;
	} else {
		char *joined = NULL;
		if (argc > 1) {
			/* several files: their names, comma-separated */
			size_t len = 1;
			for (int a = 0; a < argc; a++)
				len += strlen(argv[a]) + 1;
			joined = xcalloc(1, len);
			for (int a = 0; a < argc; a++) {
				if (a)
					strcat(joined, ",");
				strcat(joined, argv[a]);
			}
		}
		o.source = joined ? joined : input_name;
		o.progress = isatty(2);
		if (use_symbols) {
			/* --symbols paths, then _NT_SYMBOL_PATH, the trace's directory and a .etl.zip's symbols\ */
			if (!sym)
				sym = sym_new();
			sym_add_env(sym);
			for (int a = 0; a < argc; a++)
				if (strcmp(argv[a], "-") != 0)
					sym_add_trace(sym, argv[a]);
			o.sym = sym_etl_hook;
			o.symcount = sym_etl_count;
			o.symctx = sym;
		}
		partial = etl2evt_convert(readers, ninputs, &o, &ob, NULL);
		free(joined);
		if (use_symbols)
			write_symbol_lines(&ob, sym);
	}
	ob_close(&ob);
	if (sym && use_symbols && explicit_symbols)
		sym_report(sym, stderr, "etl2evt", 0);
	sym_free(sym);
	if (nproblems)
		cli_warn("%s: %lu problem%s; the rest was decoded", ninputs > 1 ? "input" : inputs[0].name, nproblems,
		    nproblems == 1 ? "" : "s");
	for (size_t i = 0; i < ninputs; i++) {
		etl_close(inputs[i].r);
		if (inputs[i].data)
			munmap((void *)inputs[i].data, inputs[i].len);
		close(inputs[i].fd);
		free(inputs[i].name);
	}
	free(inputs);
	free(readers);
	return partial || nproblems ? EXIT_PARTIAL : 0;
}
