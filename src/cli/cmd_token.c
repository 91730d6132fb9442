/*
 * cmd_token.c - `agentgate token new NAME`: a token for an identity, and
 * the line that puts its salted hash in the policy.  The token itself is
 * printed once and stored nowhere: give it to the agent, put the line in
 * the identity (agentgate edit), and rotating is running this again.
 */
#include "agconfig.h"

#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/err.h"
#include "common/tokenhash.h"

static int
name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < 128 && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@-") == n;
}

int
ag_cmd_token(int argc, char **argv)
{
	char token[256], hash[AG_TOKEN_HASH_MAX];
	struct ag_err err;

	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("Usage: agentgate token new NAME\n\n"
		    "Make a token for identity NAME (256 random bits) and the token_hash\n"
		    "line for that identity in the policy (salted scrypt).  The token is\n"
		    "shown once and kept nowhere.  The agent sends it as AGENTGATE_TOKEN\n"
		    "(ssh -o SendEnv) or at the prompt.\n");
		return 0;
	}
	if (argc != 3 || strcmp(argv[1], "new") != 0) {
		fprintf(stderr, "usage: agentgate token new NAME\n");
		return 2;
	}
	if (!name_ok(argv[2])) {
		fprintf(stderr, "agentgate: token: '%s' is not an identity name (letters, "
		    "digits, '.', '_', '-', '@')\n", argv[2]);
		return 2;
	}
	ag_err_clear(&err);
	if (ag_token_new(argv[2], token, sizeof(token), hash, &err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	printf("token for %s (give it to the agent; it is not kept anywhere):\n  %s\n"
	    "in identity %s of the policy (agentgate edit), in place of any token line:\n"
	    "  token_hash: \"%s\"\n", argv[2], token, argv[2], hash);
	explicit_bzero(token, sizeof(token));
	return fflush(stdout) == 0 ? 0 : 1;
}
