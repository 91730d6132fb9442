/*
 * cmd_audit.c - agentgate audit verify [FILE...]: check the hash chain
 * (record/chain.h) of an audit file, or of a rotated series of them as
 * one chain, and say where it breaks.  zlib, for rotated files that
 * logrotate compressed, is loaded only when one is read (lazylib.h).
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "cli/commands.h"
#include "common/config.h"
#include "common/err.h"
#include "common/lazylib.h"
#include "record/chain.h"

static void
usage(FILE *fp)
{
	fprintf(fp, "Usage: agentgate audit verify [--config FILE] [--from-start] [FILE...]\n"
	    "\n"
	    "Check the hash chain of audit files: exit 0 when every record is as the\n"
	    "gateway wrote it, 1 with the file and line where a record was altered,\n"
	    "removed or reordered, or the end torn, 2 on a usage or read error (also\n"
	    "a line longer than 64 MiB, which no record is).\n"
	    "\n"
	    "Several FILEs are one series, oldest first: the chain goes on from each\n"
	    "into the next.  Names as logrotate numbers them (audit.jsonl.2.gz\n"
	    "audit.jsonl.1 audit.jsonl) are put in that order whatever order they are\n"
	    "given in.  A FILE ending in .gz is decompressed; - is standard input\n"
	    "(compressed or not).  A first file that goes on from a chain begun in a\n"
	    "file not given verifies, and verify says so.  The last FILE, when it is\n"
	    "the log gateways write, must end with the record the chain's state file\n"
	    "beside it (.NAME.chain) names, or records were removed from its end.\n"
	    "\n"
	    "  -f, --config FILE  without FILE, verify the policy's gateway.audit.file\n"
	    "                     (policy default %s)\n"
	    "  -s, --from-start   the first file must hold the chain's start (its seed)\n"
	    "  -h, --help         show this help and exit\n", AG_DEFAULT_CONFIG);
}

/* ---- reading .gz and standard input through zlib ------------------------- */

static struct ag_lazylib zlib_lib = { "libz.so.1", 0, "" };

static struct {
	__typeof__(gzdopen)	*dopen;
	__typeof__(gzread)	*read;
	__typeof__(gzerror)	*error;
	__typeof__(gzclose)	*close;
} zl;

struct gz_cookie {
	gzFile	 gz;
	char	*why;		/* zlib's message on a read error */
	size_t	 whylen;
};

static ssize_t
gz_cookie_read(void *c, char *buf, size_t n)
{
	struct gz_cookie *g = c;
	int got, zerr;

	if (n > (size_t)1 << 30)
		n = (size_t)1 << 30;
	if ((got = zl.read(g->gz, buf, (unsigned)n)) < 0) {
		const char *m = zl.error(g->gz, &zerr);

		snprintf(g->why, g->whylen, "%s", zerr == Z_ERRNO ? strerror(errno) : m);
		errno = EIO;
		return -1;
	}
	/* gzread ends a stream cut short like a whole one: only gzerror
	 * tells them apart */
	if (got == 0 && (zl.error(g->gz, &zerr), zerr == Z_BUF_ERROR)) {
		snprintf(g->why, g->whylen, "the compressed file is cut short (unexpected end "
		    "of file)");
		errno = EIO;
		return -1;
	}
	return got;
}

static int
gz_cookie_close(void *c)
{
	struct gz_cookie *g = c;
	int rc = zl.close(g->gz);

	free(g);
	return rc == Z_OK ? 0 : EOF;
}

/*
 * fd as a stream of what it holds decompressed (or as it is, when it is
 * not gzip's), for getline.  NULL with why; fd is closed either way.
 */
static FILE *
gz_stream(int fd, char *why, size_t whylen)
{
#define SYM(f, m)	AG_LAZYSYM(__typeof__(zl), f, m)
	static const struct ag_lazysym sym[] = {
		SYM(gzdopen, dopen), SYM(gzread, read), SYM(gzerror, error), SYM(gzclose, close),
	};
#undef SYM
	static const cookie_io_functions_t io = {
		.read = gz_cookie_read, .close = gz_cookie_close,
	};
	struct gz_cookie *g;
	FILE *fp;

	if (ag_lazylib_load(&zlib_lib, sym, sizeof(sym) / sizeof(sym[0]), &zl) < 0) {
		snprintf(why, whylen, "%s", zlib_lib.why);
		close(fd);
		return NULL;
	}
	if ((g = calloc(1, sizeof(*g))) == NULL || (g->gz = zl.dopen(fd, "rb")) == NULL) {
		snprintf(why, whylen, "%s", strerror(ENOMEM));
		free(g);
		close(fd);
		return NULL;
	}
	g->why = why;
	g->whylen = whylen;
	if ((fp = fopencookie(g, "r", io)) == NULL) {
		snprintf(why, whylen, "%s", strerror(errno));
		gz_cookie_close(g);
	}
	return fp;
}

static int
has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* name opened for reading ("-": standard input); NULL with why. */
static FILE *
open_input(const char *name, char *why, size_t whylen)
{
	FILE *fp;
	int fd;

	why[0] = '\0';
	if (strcmp(name, "-") == 0) {
		if ((fd = dup(STDIN_FILENO)) < 0) {
			snprintf(why, whylen, "%s", strerror(errno));
			return NULL;
		}
		return gz_stream(fd, why, whylen);
	}
	if (has_suffix(name, ".gz")) {
		if ((fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
			snprintf(why, whylen, "%s", strerror(errno));
			return NULL;
		}
		return gz_stream(fd, why, whylen);
	}
	if ((fp = fopen(name, "re")) == NULL)
		snprintf(why, whylen, "%s", strerror(errno));
	return fp;
}

/* ---- the order of a series -------------------------------------------- */

/*
 * logrotate's number of name: N for "BASE.N" or "BASE.N.gz", 0 for BASE
 * itself; the length of BASE in *baselen.
 */
static unsigned long
rotation_number(const char *name, size_t *baselen)
{
	size_t n = strlen(name), end, i;

	if (has_suffix(name, ".gz"))
		n -= 3;
	for (i = n; i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9'; i--)
		;
	end = i;
	if (end == n || end < 2 || name[end - 1] != '.' || n - end > 9 ||
	    (name[end] == '0' && n - end > 1)) {
		*baselen = strlen(name);
		return 0;
	}
	*baselen = end - 1;
	return strtoul(name + end, NULL, 10);
}

/*
 * Names that are all one log as logrotate numbers it (FILE, FILE.1,
 * FILE.2.gz, ...) are put oldest first, the order a shell's glob does not
 * give; any other set is left in the caller's order.
 */
static void
order_series(char **names, int n)
{
	unsigned long *num;
	size_t len0 = 0, len;
	int i, j, numbered = 0;

	if (n < 2 || (num = calloc((size_t)n, sizeof(*num))) == NULL)
		return;
	for (i = 0; i < n; i++) {
		num[i] = rotation_number(names[i], &len);
		if (strcmp(names[i], "-") == 0 || (has_suffix(names[i], ".gz") && num[i] == 0))
			goto out;
		if (i == 0)
			len0 = len;
		if (len != len0 || strncmp(names[i], names[0], len) != 0)
			goto out;
		numbered |= num[i] > 0;
		for (j = 0; j < i; j++)
			if (num[j] == num[i])
				goto out;
	}
	if (!numbered)
		goto out;
	/* a few files: insertion sort, highest number (oldest) first */
	for (i = 1; i < n; i++) {
		char *name = names[i];
		unsigned long k = num[i];

		for (j = i; j > 0 && num[j - 1] < k; j--) {
			names[j] = names[j - 1];
			num[j] = num[j - 1];
		}
		names[j] = name;
		num[j] = k;
	}
out:
	free(num);
}

/* ---- verify ------------------------------------------------------------- */

static const char *
shown(const char *name)
{
	return strcmp(name, "-") == 0 ? "(standard input)" : name;
}

/* The policy's audit file, for verify without FILE; NULL after saying why. */
static char *
configured_file(const char *config)
{
	struct ag_config *cfg;
	struct ag_err err;
	char *file;

	if ((cfg = ag_config_load(config, 0, &err)) == NULL) {
		ag_err_print(stderr, &err);
		return NULL;
	}
	if (cfg->gw.audit.file == NULL) {
		fprintf(stderr, "agentgate: audit verify: %s configures no audit file "
		    "(gateway.audit.file): name the files to verify\n", config);
		ag_config_free(cfg);
		return NULL;
	}
	if ((file = strdup(cfg->gw.audit.file)) == NULL)
		fprintf(stderr, "agentgate: audit verify: %s\n", strerror(ENOMEM));
	ag_config_free(cfg);
	return file;
}

static int
verify(char **names, int n, int from_start)
{
	char last[AG_CHAIN_HEX] = "", why[256];
	struct ag_chain_result res;
	unsigned long total = 0;
	int i, rc, live;

	for (i = 0; i < n; i++) {
		const char *name = shown(names[i]);
		FILE *fp;

		if ((fp = open_input(names[i], why, sizeof(why))) == NULL) {
			fprintf(stderr, "agentgate: audit verify: %s: %s\n", name, why);
			return 2;
		}
		rc = ag_chain_verify(fp, last, &res);
		/* the newest file, the one gateways write: its end against the
		 * chain's state beside it */
		live = i == n - 1 && strcmp(names[i], "-") != 0 && !has_suffix(names[i], ".gz");
		if (live && (rc == 0 || (rc == 1 && res.torn)))
			rc = ag_chain_verify_end(fp, names[i], last, &res);
		if (rc < 0) {
			fprintf(stderr, "agentgate: audit verify: %s: %s\n", name,
			    res.what[0] != '\0' ? res.what : why[0] != '\0' ? why : strerror(errno));
			fclose(fp);
			return 2;
		}
		if (fclose(fp) == EOF && rc == 0) {
			fprintf(stderr, "agentgate: audit verify: %s: %s\n", name,
			    why[0] != '\0' ? why : "cannot read it to the end");
			return 2;
		}
		if (rc == 0 && res.mid_chain && from_start)
			rc = 1, res.line = 1, snprintf(res.what, sizeof(res.what),
			    "no seed: the chain does not start here (the start was removed, or is "
			    "in a file not given)");
		if (rc > 0 && res.line == 0) {
			printf("%s: %s\n", name, res.what);
			return 1;
		}
		if (rc > 0) {
			printf("%s: line %lu: %s\n", name, res.line, res.what);
			return 1;
		}
		total += res.records;
		if (i > 0)
			printf("%s: %lu records, the chain goes on from %s and is intact\n",
			    name, res.records, shown(names[i - 1]));
		else if (res.mid_chain)
			printf("%s: %lu records, the chain is intact; it starts mid-chain, going on "
			    "from the record whose hash is %s (the file before it was not given)\n",
			    name, res.records, res.from);
		else
			printf("%s: %lu records, the chain is intact\n", name, res.records);
		if (live && res.end_checked)
			printf("%s: its last record is the one the chain's state names: none is "
			    "missing at the end\n", name);
		else if (live)
			printf("%s: note: %s\n", name, res.note);
	}
	if (n > 1)
		printf("%d files, %lu records: the chain is intact across them\n", n, total);
	return 0;
}

int
ag_cmd_audit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "from-start", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *config = AG_DEFAULT_CONFIG;
	char *file = NULL;
	int ch, i, rc, from_start = 0, stdin_seen = 0;

	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		usage(stdout);
		return 0;
	}
	if (argc < 2 || strcmp(argv[1], "verify") != 0) {
		usage(stderr);
		return 2;
	}
	argc--;
	argv++;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":f:sh", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			config = optarg;
			break;
		case 's':
			from_start = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "agentgate: audit verify: option '%s' needs an argument\n",
			    argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "agentgate: audit verify: unknown option '%s'\n"
			    "Try 'agentgate audit --help'.\n", argv[optind - 1]);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	for (i = 0; i < argc; i++)
		if (strcmp(argv[i], "-") == 0 && stdin_seen++) {
			fprintf(stderr, "agentgate: audit verify: standard input (-) given twice\n");
			return 2;
		}
	if (argc == 0) {
		if ((file = configured_file(config)) == NULL)
			return 2;
		rc = verify(&file, 1, from_start);
		free(file);
		return rc;
	}
	order_series(argv, argc);
	return verify(argv, argc, from_start);
}
