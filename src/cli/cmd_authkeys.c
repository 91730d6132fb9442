/*
 * cmd_authkeys.c - `agentgate authorized-keys USER`: sshd's
 * AuthorizedKeysCommand.  The policy's identities are then the only keys
 * sshd accepts for the gateway's accounts: adding an identity lets its key
 * in at the next login, deleting or disabling it keeps the key out, with
 * one edit and no authorized_keys file to keep in step.
 *
 * Each key is printed with `restrict,pty` (no forwarding of any kind, no
 * ~/.ssh/rc; a terminal for the REPL) and, when the identity has them, its
 * `from` networks and expiry, so sshd refuses those logins before any
 * process of the account exists.  An identity whose `accounts:` do not
 * name USER (or a group of it) has no key here: like a key in one
 * account's authorized_keys, it opens that account only.  The PAM module
 * and the gateway check the same again.
 */
#include "agconfig.h"

#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/account.h"
#include "common/config.h"
#include "common/err.h"
#include "common/lastgood.h"
#include "common/privsep.h"
#include "record/audit.h"

static void
authkeys_usage(FILE *fp)
{
	fprintf(fp,
	    "Usage: agentgate authorized-keys [--config FILE] USER\n"
	    "\n"
	    "Print the public keys of the policy's identities in authorized_keys\n"
	    "format, for sshd_config:\n"
	    "    AuthorizedKeysCommand /usr/bin/agentgate authorized-keys %%u\n"
	    "    AuthorizedKeysCommandUser %s\n"
	    "Disabled and expired identities, and those whose accounts: do not\n"
	    "name USER, are left out; certificates are not\n"
	    "keys (use TrustedUserCAKeys).  Exits 0 with nothing printed when no\n"
	    "identity has a key, 1 when the policy cannot be used (sshd then\n"
	    "accepts no key: fail closed).\n"
	    "\n"
	    "  -f, --config FILE  policy file (default %s)\n"
	    "  -h, --help         show this help and exit\n"
	    "\n"
	    "See agentgate(8).\n", AG_GROUP, AG_DEFAULT_CONFIG);
}

/* from="a/n,b/m": sshd matches CIDR masks in from= (addr_match_list). */
static void
print_from(const struct ag_identity *id)
{
	size_t i;

	if (id->nfrom == 0)
		return;
	fputs(",from=\"", stdout);
	for (i = 0; i < id->nfrom; i++) {
		char a[INET6_ADDRSTRLEN];

		if (inet_ntop(id->from[i].family, id->from[i].addr, a, sizeof(a)) == NULL)
			continue;
		printf("%s%s/%d", i ? "," : "", a, id->from[i].prefix);
	}
	putchar('"');
}

/* expiry-time= is in the system's time zone; the key is good up to and
 * including that second, and `expires` is the first second it is not. */
static void
print_expiry(const struct ag_identity *id)
{
	time_t last = id->expires - 1;
	struct tm tm;
	char buf[32];

	if (!id->has_expires || localtime_r(&last, &tm) == NULL ||
	    strftime(buf, sizeof(buf), "%Y%m%d%H%M%S", &tm) == 0)
		return;
	printf(",expiry-time=\"%s\"", buf);
}

/*
 * No key at all for anyone: the agent sees only sshd's "Permission
 * denied", so the audit the admin watches says why, at the last good
 * policy's destinations (lastgood.h).
 */
static void
config_error(const char *path, const char *user, const struct ag_err *err)
{
	struct ag_audit_info info;
	struct ag_config *last;
	struct ag_err lerr;
	char msg[AG_ERR_MSG_MAX + 512];

	memset(&info, 0, sizeof(info));
	info.user = user;
	ag_err_format(err, msg, sizeof(msg));
	if ((last = ag_lastgood_load(path, &lerr)) == NULL)
		fprintf(stderr, "agentgate: config_error to syslog only: %s\n", lerr.msg);
	(void)ag_audit_config_error(&info, "authorized-keys",
	    last != NULL ? &last->gw.audit : NULL, path, msg);
	ag_config_free(last);
}

int
ag_cmd_authkeys(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *path = AG_DEFAULT_CONFIG;
	struct ag_config *cfg;
	struct ag_err err;
	time_t now = time(NULL);
	size_t i, k;
	int ch, own_config = 0;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":f:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			path = optarg;
			own_config = 1;
			break;
		case 'h':
			authkeys_usage(stdout);
			return 0;
		default:
			authkeys_usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		authkeys_usage(stderr);
		return 2;
	}
	ag_err_clear(&err);
	/* The group reads the policy for sshd (root, or the dedicated
	 * AuthorizedKeysCommandUser); anyone else, or any other file, gets the
	 * caller's own access. */
	if ((own_config || !ag_privsep_keys_caller()) && ag_privsep_drop(&err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	if ((cfg = ag_config_load(path, 0, &err)) == NULL) {
		ag_err_print(stderr, &err);
		config_error(path, argv[optind], &err);
		return 1;
	}
	/* sshd may run us as root: then this is a policy that loads */
	if (ag_lastgood_save(path, &err) < 0)
		ag_err_print(stderr, &err);
	for (i = 0; i < cfg->nidentities; i++) {
		const struct ag_identity *id = &cfg->identities[i];

		if (id->disabled || (id->has_expires && now >= id->expires) ||
		    !ag_identity_allows_account(id, argv[optind]))
			continue;
		for (k = 0; k < id->keys.n; k++) {
			const char *key = id->keys.v[k];

			if (strstr(key, "-cert-v01@openssh.com ") != NULL)
				continue;
			fputs("restrict,pty", stdout);
			print_from(id);
			print_expiry(id);
			printf(" %s agentgate:%s\n", key, id->name);
		}
	}
	ag_config_free(cfg);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "agentgate: authorized-keys: cannot write the keys\n");
		return 1;
	}
	return 0;
}
