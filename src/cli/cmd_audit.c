/*
 * cmd_audit.c - agentgate audit verify FILE: check an audit file's hash
 * chain (record/chain.h) and say where it breaks.
 */
#include "agconfig.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "record/chain.h"

static void
usage(FILE *fp)
{
	fprintf(fp, "Usage: agentgate audit verify FILE\n"
	    "\n"
	    "Check the hash chain of an audit file: exit 0 when every record is\n"
	    "as the gateway wrote it, 1 with the first line where a record was\n"
	    "altered, removed or reordered, the start cut off or the end torn,\n"
	    "2 on a usage or read error.\n");
}

int
ag_cmd_audit(int argc, char **argv)
{
	struct ag_chain_result res;
	FILE *fp;
	int rc;

	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		usage(stdout);
		return 0;
	}
	if (argc != 3 || strcmp(argv[1], "verify") != 0) {
		usage(stderr);
		return 2;
	}
	if ((fp = fopen(argv[2], "re")) == NULL) {
		fprintf(stderr, "agentgate: audit verify: %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	rc = ag_chain_verify(fp, &res);
	fclose(fp);
	if (rc < 0) {
		fprintf(stderr, "agentgate: audit verify: %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	if (rc > 0) {
		printf("%s: line %lu: %s\n", argv[2], res.line, res.what);
		return 1;
	}
	printf("%s: %lu records, the chain is intact\n", argv[2], res.records);
	return 0;
}
