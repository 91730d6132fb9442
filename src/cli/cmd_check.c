/*
 * cmd_check.c - `agentgate check`: validate a policy file the way the
 * gateway and the PAM module will load it (permissions included), for
 * admins and config-management pipelines.  Output is plain text: the
 * result on stdout, errors on stderr, exit 0 (valid) or 1 (invalid).
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/account.h"
#include "common/config.h"
#include "common/lastgood.h"
#include "common/err.h"
#include "common/utf8.h"
#include "common/strbuf.h"
#include "policy/grantable.h"
#include "policy/setid.h"

static void
check_usage(FILE *fp)
{
	fprintf(fp,
	    "Usage: agentgate check [--config FILE] [--fragment FILE [--as NAME]] [-q]\n"
	    "\n"
	    "Validate the policy file and the fragments of the agentgate.d directory\n"
	    "beside it: YAML syntax, every key and value, profile references, and the\n"
	    "ownership and mode of each file and every directory above it.  Prints\n"
	    "\"OK: N profiles, M identities\" (and how many fragments were read, when\n"
	    "agentgate.d is there) and exits 0, or prints the first error as\n"
	    "FILE:LINE:COL: message and exits 1.\n"
	    "\n"
	    "  -f, --config FILE  policy file (default %s)\n"
	    "  -F, --fragment FILE  validate the policy as it would be with FILE\n"
	    "                     installed as agentgate.d/NAME (replacing a fragment\n"
	    "                     of that name); errors name FILE (for config\n"
	    "                     management's validate hook)\n"
	    "  -a, --as NAME      the fragment's name (default: FILE's base name)\n"
	    "  -q, --quiet        print nothing when the file is valid\n"
	    "  -h, --help         show this help and exit\n"
	    "\n"
	    "See agentgate.yaml(5).\n", AG_DEFAULT_CONFIG);
}

static void
warn_no_account(const struct ag_identity *id, const char *path)
{
	size_t j;

	for (j = 0; j < id->accounts.n; j++) {
		const char *a = id->accounts.v[j];

		if (a[0] == '%' ? getgrnam(a + 1) != NULL : getpwnam(a) != NULL)
			continue;
		ag_utf8_line(stderr, "agentgate: %s:%d:%d: warning: identity '%s': accounts: names "
		    "%s '%s', which this host does not have\n",
		    id->pos.file != NULL ? id->pos.file : path, id->pos.line, id->pos.col,
		    id->name, a[0] == '%' ? "group" : "account", a[0] == '%' ? a + 1 : a);
	}
}

static void
warn_setid(const struct ag_rule *r, const char *why, void *arg)
{
	ag_utf8_line(stderr, "agentgate: %s:%d:%d: warning: %s allows %s, but %s\n",
	    r->pos.file != NULL ? r->pos.file : *(const char **)arg, r->pos.line, r->pos.col,
	    r->id, r->command, why);
}

/*
 * The policy at path with file as the fragment agentgate.d/name: what the
 * gateway would load once config management installed it.
 */
static struct ag_config *
load_with_fragment(const char *path, const char *file, const char *name, struct ag_err *err)
{
	struct ag_config *cfg = NULL;
	struct ag_strbuf sb;
	struct stat st;
	int fd;

	ag_err_clear(err);
	if ((fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) < 0) {
		ag_err_set(err, "%s: %s", file, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ag_err_set(err, "%s: %s", file, errno != 0 ? strerror(errno) :
		    "not a regular file");
		close(fd);
		return NULL;
	}
	/* one byte past the loader's bound, so that it says the file is too large */
	ag_strbuf_init(&sb, AG_CONFIG_MAX_BYTES + 1);
	if (ag_strbuf_read_fd(&sb, fd) < 0 && errno != E2BIG)
		ag_err_set(err, "%s: %s", file, strerror(errno));
	else
		cfg = ag_config_load_fragment(path, name, file, sb.data != NULL ? sb.data : "",
		    sb.len, err);
	ag_strbuf_free(&sb);
	close(fd);
	return cfg;
}

static void
warn_missing(const struct ag_pos *pos, const char *why, void *arg)
{
	if (pos != NULL)
		ag_utf8_line(stderr, "agentgate: %s:%d:%d: warning: %s\n", pos->file != NULL ?
		    pos->file : *(const char **)arg, pos->line, pos->col, why);
	else
		ag_utf8_line(stderr, "agentgate: %s: warning: %s\n", *(const char **)arg, why);
}

/*
 * An exact profile (every allow rule an argv: rule) that can write: the
 * builtins no rule names (echo, true, :) still write through a redirection
 * unless features.write_redirections says otherwise.
 */
static void
warn_write_redirections(const struct ag_profile *p, const char *path)
{
	size_t i;

	if (p->tier != AG_TIER_STRICT || p->paths_write.n == 0 || p->nallow == 0 ||
	    p->features.write_redirections != AG_WREDIR_ALLOW)
		return;
	for (i = 0; i < p->nallow; i++)
		if (!p->allow[i].has_argv)
			return;
	ag_utf8_line(stderr, "agentgate: %s:%d:%d: warning: profile '%s' allows only exact "
	    "commands (argv:), but a redirection still writes inside paths.write from a "
	    "builtin no rule names (echo x > FILE, : > FILE); set features: "
	    "{ write_redirections: rules }\n", p->pos.file != NULL ? p->pos.file : path,
	    p->pos.line, p->pos.col, p->name);
}

void
ag_check_warnings(const struct ag_config *cfg, const char *path)
{
	size_t i;

	/* loads, but a rule allows what cannot work: said, not refused */
	for (i = 0; i < cfg->nprofiles; i++) {
		(void)ag_setid_rules(cfg, &cfg->profiles[i], warn_setid, &path);
		(void)ag_paths_missing(cfg, &cfg->profiles[i], warn_missing, &path);
		warn_write_redirections(&cfg->profiles[i], path);
	}
	/* a rotation's window that has closed: harmless, and the entry can go */
	for (i = 0; i < cfg->nidentities; i++) {
		const struct ag_identity *id = &cfg->identities[i];

		if (id->has_prev_token && time(NULL) >= id->prev_until)
			ag_utf8_line(stderr, "agentgate: %s:%d:%d: warning: the previous_token of "
			    "identity '%s' is past its until and refused; remove the entry\n",
			    id->prev_pos.file != NULL ? id->prev_pos.file : path,
			    id->prev_pos.line, id->prev_pos.col, id->name);
	}
	/* a policy of several accounts: an identity without accounts: opens
	 * them all (kept so for older policies, but said) */
	for (i = 0; i < cfg->nidentities && ag_policy_shared(cfg, NULL, 0); i++) {
		const struct ag_identity *id = &cfg->identities[i];

		if (id->accounts.n == 0)
			ag_utf8_line(stderr, "agentgate: %s:%d:%d: warning: identity '%s' has no "
			    "accounts:, so it may log in as every account of the gateway; name "
			    "its accounts (accounts: [NAME, \"%%GROUP\"])\n",
			    id->pos.file != NULL ? id->pos.file : path, id->pos.line,
			    id->pos.col, id->name);
	}
	/* accounts: that name no account of this host: harmless, but a typo
	 * locks the identity out */
	for (i = 0; i < cfg->nidentities; i++)
		warn_no_account(&cfg->identities[i], path);
}

int
ag_cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "fragment", required_argument, NULL, 'F' },
		{ "as", required_argument, NULL, 'a' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *path = AG_DEFAULT_CONFIG, *fragment = NULL, *as = NULL;
	struct ag_config *cfg;
	struct ag_err err;
	size_t i;
	int ch, quiet = 0, bad = 0;

	/* Our own messages: getopt's would name "check" as the program. */
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":f:F:a:qh", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			path = optarg;
			break;
		case 'F':
			fragment = optarg;
			break;
		case 'a':
			as = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			check_usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "agentgate: check: option '%s' needs an "
			    "argument\nTry 'agentgate check --help'.\n",
			    argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "agentgate: check: unknown option '%s'\n"
			    "Try 'agentgate check --help'.\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "agentgate: check: unexpected argument '%s' "
		    "(use --config FILE)\n", argv[optind]);
		return 2;
	}
	if (as != NULL && fragment == NULL) {
		fprintf(stderr, "agentgate: check: --as names the fragment given with "
		    "--fragment FILE\n");
		return 2;
	}
	if (fragment != NULL && as == NULL)
		as = strrchr(fragment, '/') != NULL ? strrchr(fragment, '/') + 1 : fragment;
	if (fragment != NULL)
		cfg = load_with_fragment(path, fragment, as, &err);
	else
		cfg = ag_config_load(path, 0, &err);
	if (cfg == NULL) {
		ag_err_print(stderr, &err);
		return 1;
	}
	/* what would only fail when serve starts: its host keys */
	for (i = 0; i < cfg->gw.server.host_keys.n; i++) {
		const char *k = cfg->gw.server.host_keys.v[i];
		struct stat st;

		if (stat(k, &st) < 0 || !S_ISREG(st.st_mode)) {
			fprintf(stderr, "agentgate: %s: gateway.server.host_keys: %s: %s (make it "
			    "with: agentgate serve --generate-host-key %s)\n", path, k,
			    errno == 0 ? "not a regular file" : strerror(errno), k);
			bad = 1;
		}
		errno = 0;
	}
	if (bad) {
		ag_config_free(cfg);
		return 1;
	}
	ag_check_warnings(cfg, path);
	/* as root: where a policy broken later still has its config_error
	 * recorded (lastgood.h); not a candidate that is not installed */
	if (fragment == NULL && ag_lastgood_save(path, &err) < 0)
		fprintf(stderr, "agentgate: check: not kept as the last good policy: %s\n",
		    err.msg);
	if (!quiet)
		printf("OK: %zu profiles, %zu identities", cfg->nprofiles, cfg->nidentities);
	if (!quiet && cfg->nupstreams > 0)
		printf(", %zu upstream%s", cfg->nupstreams, cfg->nupstreams == 1 ? "" : "s");
	if (!quiet && (cfg->has_fragdir || fragment != NULL))
		printf(", %zu fragment%s", cfg->files.n - 1, cfg->files.n == 2 ? "" : "s");
	if (!quiet && fragment != NULL)
		printf(" (with %s as %s/%s)", fragment, AG_CONFIG_FRAGDIR, as);
	if (!quiet)
		printf("\n");
	ag_config_free(cfg);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, "agentgate: check: cannot write to standard "
		    "output\n");
		return 1;
	}
	return 0;
}
