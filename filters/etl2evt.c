/*
 * etl2evt - decode a Windows ETW trace (.etl or PerfView .etl.zip) into evt.
 *
 * USAGE:  etl2evt [-k KINDS] [-p PROCS] [-s MS] [-e MS] [--utc] [--full-paths]
 *                 [--addrs] [--symbols PATH] [--no-symbols] [-v] [--member NAME]
 *                 [--no-thread-time] [--census] [-j N] [--buffer-memory MB]
 *                 [-o FILE] [FILE|- ...]
 * INPUT:  an .etl file, a zip holding one or several (PerfView .etl.zip,
 *         .diagsession), or either on stdin, each possibly gzip-compressed
 *         (inflated into a temporary file).  Several files of one session
 *         are merged on their absolute times.  Stdin and inputs that are
 *         not regular files (a FIFO, /dev/stdin, <(...)) are copied into
 *         a temporary file; files are mapped (lib/base/mapfile: one cut
 *         shorter while it is read is named on one line, exit 2).
 * OUTPUT: the evt stream (docs/evt-format.md), e.g.
 *   29.446000	Sample	7	System	4	584	1	ip=0xffffffffffd03003	prio=14	kframes=3	ntoskrnl.exe!0x1a3f0;...
 *         Two threads where there are two cores (-j 1: one), the
 *         output the same.  With --symbols (each local directory must be readable), one
 *         summary line goes to stderr, and with -v one line per image
 *         left without names (the #symbols lines always list them).
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
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/cli.h"
#include "base/mapfile.h"
#include "etl/etl.h"
#include "etl/convert.h"
#include "evt/evtwrite.h"
#include "etl/symbols.h"
#include "etl/zip.h"

static const char *input_name;
static unsigned long nproblems;
static unsigned long skipped_members;	/* .etl members of zips that are no trace */
static int pdbs_ahead;		/* inflate a zip's symbols\*.pdb on a second thread */

static void
usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: etl2evt [-k KINDS] [-p PROCS] [-s MS] [-e MS] [--utc] [--full-paths] [--addrs] "
	    "[--symbols PATH] [--no-symbols] [-v] [--no-thread-time] [--member NAME] [--census] "
	    "[-j N] [--buffer-memory MB] [-o FILE] [FILE|- ...]\n");
	if (status == 0)
		fputs("Decodes ETW traces (.etl, .etl.zip, .diagsession; gzipped too) into evt text, in log order:\n"
		    "lines are ordered by end_ms= where they have it (intervals such as DPC and ISR,\n"
		    "whose time column is their start), else by the time column; it never decreases.\n"
		    "\n"
		    "  -k, --kinds=LIST     only events of these kinds (comma-separated; repeatable)\n"
		    "  -p, --process=LIST   only events of these processes (image names or pids; repeatable)\n"
		    "  -s, --start=MS       only events from MS (ms since the trace start, inclusive)\n"
		    "  -e, --end=MS         only events up to MS (inclusive)\n"
		    "      --utc            add utc=, the absolute time of each event\n"
		    "      --full-paths     frames name the image's full path, not its file name\n"
		    "      --addrs          frames outside every image as ?!0xADDRESS\n"
		    "      --symbols=PATH   also look for PDBs here (repeatable; must exist)\n"
		    "      --no-symbols     do not read PDBs (frames are module!0xRVA)\n"
		    "  -v, --verbose        with --symbols, one line per image left without names\n"
		    "      --no-thread-time no Running, Ready and Waiting lines (what each thread\n"
		    "                       was doing, derived from context switches)\n"
		    "      --member=NAME    decode only this member of a zip\n"
		    "      --census         count events per record kind instead of writing evt\n"
		    "  -j, --threads=N      1: read and decode on one thread; default: a second\n"
		    "                       thread reads ahead when there is a second core\n"
		    "      --buffer-memory=MB  decompressed buffers kept in memory between the\n"
		    "                       two passes (default 32); the rest go to a temporary file\n"
		    "  -o, --output=FILE    output file (default stdout)\n"
		    "  -h, --help, --version\n", stdout);
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
	uint64_t base;		/* where the trace starts in FD (a stored zip member) */
	uint64_t stored_len;	/* its length, or 0: the whole file */
	const uint8_t *data;
	size_t len;
	struct mapfile map;	/* the mapping DATA lies in (guarded: a file cut shorter exits 2) */
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

/* An unlinked temporary file for a copy of an input (stdin, a zip member, gunzipped bytes). */
static int
temp_file(void)
{
	int fd = temp_file_unlinked("etl2evt");
	if (fd < 0)
		cli_fatal("cannot create a temporary file in %s: %s", temp_dir(), strerror(errno));
	return fd;
}

/*
 * Copies IN (stdin, a pipe or FIFO named on the command line, a device:
 * what cannot be read at an offset or mapped) into a temporary file,
 * whose descriptor it returns; NAME is for messages.
 */
static int
spool(int in, const char *name)
{
	int fd = temp_file();
	char buf[1 << 16];
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			cli_fatal("%s: %s", name, strerror(errno));
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

/* The bytes of a member inflated into memory to check that it is a trace. */
enum { SNIFF_BYTES = 64 << 10 };

/* etl_open's error hook while sniffing: keeps the last (the fatal) message. */
static void
keep_message(void *ctx, uint64_t off, const char *msg)
{
	snprintf(ctx, 256, "offset %llu: %s", (unsigned long long)off, msg);
}

/*
 * Whether member I starts like an ETL trace (a header buffer with its
 * logfile header event), judged from its first SNIFF_BYTES inflated in
 * memory, before anything is written: a zip of gigabytes that are not
 * a trace costs 64 KiB of inflating.  Returns 0, or -1 with WHY.
 */
static int
sniff_member(const struct zip_archive *z, size_t i, char *why, size_t whylen)
{
	struct zip_stream *s = zip_stream_open(z, i, why, whylen);
	if (!s)
		return -1;
	uint8_t *head = xmalloc(SNIFF_BYTES);
	size_t n = 0;
	ssize_t got = 1;
	while (n < SNIFF_BYTES && (got = zip_stream_read(s, head + n, SNIFF_BYTES - n, why, whylen)) > 0)
		n += (size_t)got;
	zip_stream_close(s);
	char msg[256] = "not an ETL file";
	struct etl_reader *r = got < 0 ? NULL : etl_open(head, n, keep_message, msg);
	if (got >= 0 && !r)
		snprintf(why, whylen, "member %s is not an ETL trace (%s)", z->m[i].name, msg);
	etl_close(r);
	free(head);
	return r ? 0 : -1;
}

/* Writes all of P to FD (a temporary file), or exits naming it. */
static void
write_temp(int fd, const void *p, size_t n)
{
	if (write_full(fd, p, n) < 0)
		cli_fatal("temporary file in %s: %s", temp_dir(), strerror(errno));
}

/*
 * What a gzip input holds, judged from its first SNIFF_BYTES inflated:
 * 0 a trace or a zip, or exits saying what it is instead, before the
 * rest is inflated (gzipped evt text belongs to the other tools).
 */
static void
sniff_gzip(const char *name, const uint8_t *head, size_t n)
{
	char msg[256] = "not an ETL file";
	if (zip_magic(head, n))
		return;
	struct etl_reader *r = etl_open(head, n, keep_message, msg);
	if (r) {
		etl_close(r);
		return;
	}
	if (n >= 4 && memcmp(head, "#evt", 4) == 0)
		cli_fatal("%s: gzip-compressed evt text, not a trace: the other tools read it as it is",
		    name);
	cli_fatal("%s: gzip-compressed, but what it holds is not an ETL trace or a zip (%s)", name,
	    msg);
}

/* zlib's message for GZ, without the "<fd:N>: " it puts before it */
static const char *
gz_why(gzFile gz, int *zerr)
{
	const char *m = gzerror(gz, zerr), *p;
	if (m && strncmp(m, "<fd:", 4) == 0 && (p = strstr(m, ": ")) != NULL)
		m = p + 2;
	return m && *m ? m : "damaged";
}

/*
 * A gzip-compressed input (an .etl.gz or .etl.zip.gz from a nightly
 * archive) is inflated through zlib, 64 KiB at a time, into a temporary
 * file, which is then read like any input.  Its first 64 KiB are checked
 * before the rest is inflated.  A damaged or truncated stream is
 * reported with the compressed offset, and what came before it is
 * decoded (exit 1).  gzip's size field is modulo 4 GiB, so there is no
 * room check before writing; a full disk is an error.
 */
static int
gunzip_to_temp(int fd, const char *name)
{
	int dfd = dup(fd);	/* gzclose closes it; FD (shared offset: rewound) stays open */
	gzFile gz = dfd < 0 || lseek(dfd, 0, SEEK_SET) < 0 ? NULL : gzdopen(dfd, "rb");
	if (!gz)
		cli_fatal("%s: cannot read: %s", name, strerror(errno));
	gzbuffer(gz, 1 << 16);
	uint8_t *buf = xmalloc(SNIFF_BYTES);
	int out = temp_file(), got, first = 1, zerr = Z_OK;
	size_t n = 0;
	uint64_t total = 0;
	for (;;) {
		got = gzread(gz, buf + n, (unsigned)(SNIFF_BYTES - n));
		if (got > 0)
			n += (size_t)got;
		if (got > 0 && n < SNIFF_BYTES)
			continue;
		if (first && got < 0)
			cli_fatal("%s: gzip stream damaged near compressed byte %lld, in its first "
			    "64 KiB: %s", name, (long long)gzoffset(gz), gz_why(gz, &zerr));
		if (first)
			sniff_gzip(name, buf, n);
		first = 0;
		write_temp(out, buf, n);
		total += n;
		n = 0;
		if (got <= 0)
			break;
	}
	const char *why = gz_why(gz, &zerr);
	if (got < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)) {
		nproblems++;
		cli_warn("%s: gzip stream %s near compressed byte %lld; decoding the %llu bytes "
		    "inflated before it", name, zerr == Z_BUF_ERROR ? "truncated" : "damaged",
		    (long long)gzoffset(gz), (unsigned long long)total);
		if (zerr != Z_BUF_ERROR)
			cli_warn("%s: zlib: %s", name, why);
	}
	gzclose(gz);
	free(buf);
	return out;
}

/* A member stored uncompressed is decoded in place: no copy. */
static void
add_stored_member(const char *name, int zfd, const struct zip_member *m)
{
	add_input(name, dup(zfd));
	inputs[ninputs - 1].base = m->data_offset;
	inputs[ninputs - 1].stored_len = m->usize;
}

/*
 * Refuses, before writing anything, members whose declared sizes would
 * not fit in the temporary directory.
 */
static void
check_temp_room(const char *zipname, uint64_t need)
{
	int probe = temp_file();
	uint64_t room = zip_free_space(probe);
	close(probe);
	if (need > room)
		cli_fatal("%s: the members to inflate declare %llu bytes; %s has only %llu free "
		    "(set TMPDIR to a larger file system)", zipname, (unsigned long long)need, temp_dir(),
		    (unsigned long long)room);
}

/* Member NAME, or the member whose last path component is NAME, or -1. */
static long
pick_member(const struct zip_archive *z, const char *member)
{
	long pick = zip_find(z, member);
	if (pick < 0)
		for (size_t i = 0; i < z->n; i++) {
			const char *b = strrchr(z->m[i].name, '/');
			const char *b2 = strrchr(z->m[i].name, '\\');
			if (b2 > b)
				b = b2;
			if (strcmp(b ? b + 1 : z->m[i].name, member) == 0)
				pick = (long)i;
		}
	return pick;
}

/*
 * The .etl members to decode: NAME if given, else every .etl in the zip
 * (a .diagsession holds a kernel and user files of one session: they are
 * merged).  Each is checked to start like a trace, then a stored one is
 * read in place and a deflated one inflated into a temporary file.
 */
static void
add_zip_members(int zfd, const char *zipname, const char *member)
{
	struct zip_archive z;
	char err[512], name[4096];
	long pick = -1;

	if (zip_open_fd(&z, zfd, err, sizeof err) < 0)
		cli_fatal("%s: %s", zipname, err);
	if (member && (pick = pick_member(&z, member)) < 0)
		cli_fatal("%s: no member named %s", zipname, member);
	size_t *use = xcalloc(z.n ? z.n : 1, sizeof *use), nuse = 0, candidates = 0;
	for (size_t i = 0; i < z.n; i++)
		if (pick >= 0 ? (long)i == pick : ends_with(z.m[i].name, ".etl"))
			use[candidates++] = i;
	if (!candidates)
		cli_fatal("%s: the zip holds no .etl file", zipname);
	if (pdbs_ahead)
		(void)zip_inflate_ahead(zfd, "symbols", ".pdb");	/* speed only: used or not */
	/* one member that is no trace is fatal; among several, it is skipped */
	uint64_t need = 0;
	for (size_t k = 0; k < candidates; k++) {
		size_t i = use[k];
		if (sniff_member(&z, i, err, sizeof err) < 0) {
			if (candidates == 1)
				cli_fatal("%s: %s", zipname, err);
			cli_warn("%s: %s; skipped", zipname, err);
			skipped_members++;
			continue;
		}
		use[nuse++] = i;
		if (z.m[i].method != 0)	/* saturating: declared sizes are untrusted */
			need = z.m[i].usize > UINT64_MAX - need ? UINT64_MAX : need + z.m[i].usize;
	}
	if (!nuse)
		cli_fatal("%s: no .etl member of the zip is an ETL trace", zipname);
	check_temp_room(zipname, need);
	for (size_t k = 0; k < nuse; k++) {
		const struct zip_member *m = &z.m[use[k]];
		snprintf(name, sizeof name, "%s:%s", zipname, m->name);
		if (m->method == 0) {
			add_stored_member(name, zfd, m);
			continue;
		}
		int fd = temp_file();
		if (zip_extract_fd(&z, use[k], fd, err, sizeof err) < 0)
			cli_fatal("%s: %s", zipname, err);
		add_input(name, fd);
	}
	free(use);
	zip_close(&z);
}

/*
 * Maps the trace of IN: the whole file, or the stored member's bytes
 * (lib/base/mapfile: a file cut shorter by another process while it is
 * read is named on one line, exit 2, not a SIGBUS).
 */
static void
map_input(struct input *in)
{
	uint64_t len = in->stored_len;
	if (!len) {
		struct stat st;
		if (fstat(in->fd, &st) < 0)
			cli_fatal("%s: %s", in->name, strerror(errno));
		len = (uint64_t)st.st_size;
	}
	if (len == 0)
		return;
	if (!mapfile_map_fd(&in->map, in->fd, in->base, len, in->name))
		cli_fatal("%s: cannot map: %s", in->name, errno == EFBIG ?
		    "too large for the address space" : strerror(errno));
	map_sequential(in->map.map, in->map.maplen);
	in->data = (const uint8_t *)in->map.p;
	in->len = in->map.n;
}

static int
is_regular(const char *name)
{
	struct stat st;
	return strcmp(name, "-") != 0 && stat(name, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 * Opens the input NAME ("-": stdin) as a descriptor that can be read at
 * any offset and mapped: a regular file as it is; stdin, a FIFO or a
 * pipe given by name (/dev/stdin, a shell's <(...)), a device, copied
 * into a temporary file first.  A directory is no trace.
 */
static int
open_input(const char *name)
{
	struct stat st;
	int fd;
	if (strcmp(name, "-") == 0)
		return spool(0, "stdin");
	if ((fd = open(name, O_RDONLY)) < 0)
		cli_fatal("%s: %s", name, strerror(errno));
	if (fstat(fd, &st) < 0)
		cli_fatal("%s: %s", name, strerror(errno));
	if (S_ISDIR(st.st_mode))
		cli_fatal("%s: a directory, not a trace", name);
	if (!S_ISREG(st.st_mode)) {
		int copy = spool(fd, name);
		close(fd);
		fd = copy;
	}
	return fd;
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
	struct evtw_line l = { 0 };
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
		l.n = 0;
		evtw_str(&l, "#symbols");
		for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
			const char *v = fields[f][1];
			if (!v || !*v)
				continue;
			size_t len = strlen(v);
			if (len > 1000)
				len = 1000;
			evtw_key(&l, fields[f][0]);
			evtw_esc(&l, v, len, 0);
		}
		evtw_kv_u(&l, "lookups", in.lookups);
		evtw_kv_u(&l, "resolved", in.resolved);
		evtw_end(&l);
		ob_write(ob, l.b, l.n);
	}
	evtw_free(&l);
	free(info);
}

/*
 * -k and -p add up when repeated (-k DPC -k ISR is -k DPC,ISR), as
 * xperf's and evtfilter's users expect: the lists are joined by a comma.
 */
static const char *
add_to_list(const char *list, const char *more)
{
	char *both;

	if (list == NULL)
		return more;
	both = xmalloc(strlen(list) + strlen(more) + 2);
	sprintf(both, "%s,%s", list, more);
	return both;	/* lives as long as the options: never freed */
}

/*
 * The files of one session come from one machine, so their pointer
 * sizes agree.  Merged anyway, a 32-bit file's kernel addresses would
 * fall in the 64-bit file's user space and name nothing: refused.
 */
static void
same_machine(const struct input *in, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		unsigned a = etl_info(in[0].r)->pointer_size, b = etl_info(in[i].r)->pointer_size;
		if (a != b)
			cli_fatal("%s is %u-bit and %s is %u-bit: one session's files come from one "
			    "machine; convert each on its own", in[0].name, a * 8, in[i].name, b * 8);
	}
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
		{ "no-thread-time", no_argument, NULL, 'T' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "threads", required_argument, NULL, 'j' },
		{ "buffer-memory", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct etl2evt_opts o;
	const char *out = NULL, *member = NULL;
	int ch, census = 0, use_symbols = 1, explicit_symbols = 0, verbose = 0, threads = 0;
	struct symctx *sym = NULL;
	const char *bad_dir;

	cli_init(argv[0]);
	memset(&o, 0, sizeof o);
	long n;
	while ((ch = getopt_long(argc, argv, "k:p:s:e:o:hvj:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'k': o.kinds = add_to_list(o.kinds, optarg); break;
		case 'p': o.procs = add_to_list(o.procs, optarg); break;
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
		case 'T': o.no_thread_time = 1; break;
		case 'v': verbose = 1; break;
		case 'j':
			if ((n = cli_integer("--threads", optarg)) < 1)
				cli_usage_error("--threads takes 1 or more, not %s", optarg);
			threads = n > 2 ? 2 : (int)n;
			etl_set_threads(threads);
			break;
		case 'B':
			if ((n = cli_integer("--buffer-memory", optarg)) < 0 || n > (1L << 16))
				cli_usage_error("--buffer-memory takes MiB from 0 to 65536, not %s", optarg);
			etl_set_keep((size_t)n << 20);
			break;
		case 'h': usage(0); break;
		case 'V': cli_version(); break;
		default: usage(2);
		}
	}
	argc -= optind;
	argv += optind;
	if (sym && (bad_dir = sym_unreadable_dir(sym)) != NULL)
		cli_fatal("--symbols %s: %s", bad_dir, strerror(errno));
	input_name = argc >= 1 ? argv[0] : "-";
	if (o.has_from && o.has_to && o.to_ms < o.from_ms)
		cli_usage_error("--end is before --start");

	/* the PDBs of a PerfView .etl.zip are inflated while the trace is read, if there is a core */
	pdbs_ahead = use_symbols && !census && (threads ? threads > 1 : cli_cores() > 1);
	for (int a = 0; a < (argc ? argc : 1); a++) {
		const char *name = argc ? argv[a] : "-";
		int fd = open_input(name);
		unsigned char magic[4] = { 0 };
		if (pread(fd, magic, 4, 0) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
			int plain = gunzip_to_temp(fd, name);
			close(fd);
			fd = plain;
			memset(magic, 0, sizeof magic);
		}
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
		map_input(in);
		in->r = in->data ? etl_open_mapped_at(in->data, in->len, on_error, in->name, in->fd,
		    in->base) : etl_open((const uint8_t *)"", 0, on_error, in->name);
		if (!in->r)
			exit(EXIT_FATAL);
		readers[i] = in->r;
	}
	same_machine(inputs, ninputs);
	struct etl_reader *r = readers[0];

	struct outbuf ob;
	ob_open(&ob, out);
	/* (evt is large: its copy into a pipe or a file runs beside the conversion) */
	if (!census && (threads ? threads > 1 : 1))
		ob_write_behind(&ob);
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
		o.tt_behind = threads ? threads > 1 : 1;
		if (use_symbols) {
			/* --symbols paths, then _NT_SYMBOL_PATH, the trace's directory and a .etl.zip's symbols\ */
			if (!sym)
				sym = sym_new();
			sym_add_env(sym);
			/* (not stdin or a pipe: read once, copied; opening one again would wait) */
			for (int a = 0; a < argc; a++)
				if (is_regular(argv[a]))
					sym_add_trace(sym, argv[a]);
			o.sym = sym_etl_hook;
			o.symcount = sym_etl_count;
			o.symctx = sym;
		}
		partial = etl2evt_convert(readers, ninputs, &o, &ob, NULL);
		free(joined);
		if (use_symbols)
			write_symbol_lines(&ob, sym);
		evtw_skipped(&ob, "member", skipped_members,
		    ".etl members of a zip that are not ETL traces");
	}
	ob_close(&ob);
	if (sym && use_symbols && explicit_symbols && !census) {
		/* per image only with -v: a real trace has hundreds; #symbols lines keep them */
		if (verbose)
			sym_report(sym, stderr, "etl2evt", 0);
		else
			sym_report_remote(sym, stderr, "etl2evt");
		sym_summary(sym, stderr, "etl2evt");
	}
	sym_free(sym);
	zip_inflate_ahead_end();
	if (nproblems)
		cli_warn("%s: %lu problem%s; the rest was decoded", ninputs > 1 ? "input" : inputs[0].name, nproblems,
		    nproblems == 1 ? "" : "s");
	for (size_t i = 0; i < ninputs; i++) {
		etl_close(inputs[i].r);
		mapfile_close(&inputs[i].map);
		close(inputs[i].fd);
		free(inputs[i].name);
	}
	free(inputs);
	free(readers);
	return partial || nproblems || skipped_members ? EXIT_PARTIAL : 0;
}
