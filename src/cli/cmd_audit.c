/*
 * cmd_audit.c - agentgate audit verify [FILE...]: check the hash chain
 * (record/chain.h) of an audit file, or of a rotated series of them as
 * one chain, and say where it breaks; `audit show` is cmd_audit_show.c,
 * the reading of the files auditfile.c.
 */
#include "agconfig.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/auditfile.h"
#include "cli/commands.h"
#include "common/config.h"
#include "common/err.h"
#include "common/utf8.h"
#include "record/chain.h"

static void
usage(FILE *fp)
{
	fprintf(fp, "Usage: agentgate audit verify [--config FILE] [--from-start] [FILE...]\n"
	    "       agentgate audit show [OPTIONS] [FILE...]   (agentgate audit show --help)\n"
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

/* ---- verify ------------------------------------------------------------- */

static const char *
shown(const char *name)
{
	return strcmp(name, "-") == 0 ? "(standard input)" : name;
}


static int
verify(char **names, int n, int from_start)
{
	char last[AG_CHAIN_HEX] = "", why[256];
	struct ag_chain_result res;
	char vis[4 * sizeof(res.what) + 8];
	unsigned long total = 0;
	int i, rc, live;

	for (i = 0; i < n; i++) {
		const char *name = shown(names[i]);
		FILE *fp;

		if ((fp = ag_auditfile_open(names[i], why, sizeof(why))) == NULL) {
			fprintf(stderr, "agentgate: audit verify: %s: %s\n", name, why);
			return 2;
		}
		rc = ag_chain_verify(fp, last, &res);
		/* the newest file, the one gateways write: its end against the
		 * chain's state beside it */
		live = i == n - 1 && strcmp(names[i], "-") != 0 && !ag_auditfile_gz(names[i]);
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
		/* a damaged file's text is anyone's: shown made visible */
		if (rc > 0 && res.line == 0) {
			printf("%s: %s\n", name, ag_utf8_shown(res.what, vis, sizeof(vis)));
			return 1;
		}
		if (rc > 0) {
			printf("%s: line %lu: %s\n", name, res.line,
			    ag_utf8_shown(res.what, vis, sizeof(vis)));
			return 1;
		}
		total += res.records;
		if (i > 0)
			printf("%s: %lu records, the chain goes on from %s and is intact\n",
			    name, res.records, shown(names[i - 1]));
		else if (res.mid_chain)
			printf("%s: %lu records, the chain is intact; it starts mid-chain, going on "
			    "from the record whose hash is %s (the file before it was not given)\n",
			    name, res.records, ag_utf8_shown(res.from, vis, sizeof(vis)));
		else
			printf("%s: %lu records, the chain is intact\n", name, res.records);
		if (live && res.end_checked)
			printf("%s: its last record is the one the chain's state names: none is "
			    "missing at the end\n", name);
		else if (live)
			printf("%s: note: %s\n", name, ag_utf8_shown(res.note, vis, sizeof(vis)));
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
	char **owned, **names;
	int ch, rc, from_start = 0, n;

	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		usage(stdout);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "show") == 0)
		return ag_cmd_audit_show(argc - 1, argv + 1);
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
	if (ag_auditfile_args(argc, argv, config, "audit verify", 0, &names, &n, &owned) < 0)
		return 2;
	rc = verify(names, n, from_start);
	ag_auditfile_free(owned);
	return rc;
}
