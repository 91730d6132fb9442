/*
 * cmd_token.c - `agentgate token new NAME`: a token for an identity, and
 * the line that puts its salted hash in the policy; `agentgate token
 * rotate NAME`: a new token, installed in the policy file that holds the
 * identity with the old one kept as previous_token for an overlap window.
 * A token is printed once and stored nowhere.
 */
#include "agconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/config.h"
#include "common/err.h"
#include "common/lastgood.h"
#include "common/misc.h"
#include "common/strbuf.h"
#include "common/tokenhash.h"
#include "common/tokenrotate.h"

#define DEFAULT_OVERLAP	(24 * 3600)
#define MAX_OVERLAP	(366L * 86400)

/* 1 when s can name an identity; else says so. */
static int
name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n > 0 && n < 128 && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@-") == n)
		return 1;
	fprintf(stderr, "agentgate: token: '%s' is not an identity name (letters, "
	    "digits, '.', '_', '-', '@')\n", s);
	return 0;
}

static void
token_usage(FILE *fp)
{
	fprintf(fp,
	    "Usage: agentgate token new NAME\n"
	    "       agentgate token rotate [--config FILE] [--overlap DURATION] [--print] NAME\n"
	    "\n"
	    "new     Make a token for identity NAME (256 random bits) and the token_hash\n"
	    "        line for that identity in the policy (salted scrypt).\n"
	    "rotate  Make a new token for identity NAME and install it in the policy\n"
	    "        file (or agentgate.d fragment) that holds NAME, keeping the old\n"
	    "        token as previous_token for DURATION (default 24h; 0: it stops\n"
	    "        at once).  The result is checked as the gateway will load it and\n"
	    "        installed atomically, as agentgate edit does.  Root only; with\n"
	    "        --print (or when the file cannot be edited safely) it prints the\n"
	    "        lines to put in the identity instead.\n"
	    "\n"
	    "The token is shown once and kept nowhere.  The agent sends it as\n"
	    "AGENTGATE_TOKEN (ssh -o SendEnv) or at the prompt.  DURATION is a number\n"
	    "with s, m, h, d or w (seconds if none).\n");
}

/* "90", "90s", "30m", "24h", "2d", "1w" into seconds; -1 when not one. */
static long
duration(const char *s)
{
	static const struct { char unit; long mult; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 'w', 604800 },
	};
	unsigned long n;
	char *end;
	size_t i;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno != 0 || n > (unsigned long)MAX_OVERLAP)
		return -1;
	if (*end == '\0')
		return (long)n;
	if (end[1] != '\0')
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (*end == units[i].unit)
			return n * units[i].mult <= (unsigned long)MAX_OVERLAP ?
			    (long)(n * units[i].mult) : -1;
	return -1;
}

static void
print_token(const char *name, const char *token)
{
	printf("token for %s (give it to the agent; it is not kept anywhere):\n  %s\n",
	    name, token);
}

/* The lines an admin puts in the identity by hand. */
static void
print_lines(const char *name, const char *new_hash, const char *old_hash, time_t until)
{
	char when[32];

	ag_token_until_text(until, when, sizeof(when));
	printf("in identity %s of the policy, in place of its token_hash and any "
	    "previous_token:\n  token_hash: \"%s\"\n", name, new_hash);
	if (old_hash != NULL)
		printf("  previous_token: { hash: \"%s\", until: \"%s\" }\n", old_hash, when);
}

/*
 * Install text as file, a file of the policy at main: locked as agentgate
 * edit locks it, checked unchanged since it was read (st), written beside
 * it with its owner, group and mode, renamed over it.  0, or -1 with err.
 */
static int
install(const char *main, const char *file, int fd, const struct stat *st,
    const char *text, size_t len, struct ag_err *err)
{
	char tmp[PATH_MAX];
	const char *slash = strrchr(file, '/');
	struct stat now;
	int tfd;

	if (fstat(fd, &now) < 0 || now.st_ino != st->st_ino || now.st_size != st->st_size ||
	    now.st_mtim.tv_sec != st->st_mtim.tv_sec || now.st_mtim.tv_nsec != st->st_mtim.tv_nsec)
		return ag_err_set(err, "%s changed while the new token was being made; "
		    "try again", file);
	/* beside it, so that the rename is atomic */
	if ((slash == NULL ? snprintf(tmp, sizeof(tmp), ".%s.rotate-XXXXXX", file) :
	    snprintf(tmp, sizeof(tmp), "%.*s/.%s.rotate-XXXXXX", (int)(slash - file), file,
	    slash + 1)) >= (int)sizeof(tmp))
		return ag_err_set(err, "%s: path too long", file);
	if ((tfd = mkstemp(tmp)) < 0)
		return ag_err_set(err, "cannot create a copy beside %s: %s", file, strerror(errno));
	if (fchmod(tfd, 0600) < 0 || ag_write_all(tfd, text, len, NULL) < 0 ||
	    fchown(tfd, st->st_uid, st->st_gid) < 0 ||
	    fchmod(tfd, st->st_mode & 07777 & ~(mode_t)022) < 0 || fsync(tfd) < 0) {
		ag_err_set(err, "%s: %s", tmp, strerror(errno));
		goto fail;
	}
	if (rename(tmp, file) < 0) {
		ag_err_set(err, "cannot install %s: %s", file, strerror(errno));
		goto fail;
	}
	close(tfd);
	if (ag_lastgood_save(main, err) < 0)
		fprintf(stderr, "agentgate: token: not kept as the last good policy: %s\n",
		    err->msg);
	return 0;
fail:
	close(tfd);
	(void)unlink(tmp);
	return -1;
}

static int
rotate(const char *path, const char *name, long overlap, int print_only)
{
	char token[256], hash[AG_TOKEN_HASH_MAX], old[AG_TOKEN_HASH_MAX], when[32];
	char real[PATH_MAX];
	struct ag_config *cfg = NULL, *before = NULL, *after = NULL;
	const struct ag_identity *id;
	struct ag_strbuf sb;
	struct ag_err err;
	struct stat st, lst;
	const char *file;
	char *text = NULL;
	size_t len;
	time_t until;
	int fd = -1, status = 1;

	ag_err_clear(&err);
	ag_strbuf_init(&sb, AG_CONFIG_MAX_BYTES);
	if (!print_only && (getuid() != 0 || geteuid() != 0)) {
		fprintf(stderr, "agentgate: token: rotate writes the policy, which is root's: "
		    "run it as root, or with --print for the lines to paste\n");
		return 1;
	}
	if ((cfg = ag_config_load(path, 0, &err)) == NULL) {
		ag_err_print(stderr, &err);
		fprintf(stderr, "agentgate: token: the policy does not load; fix it first "
		    "(agentgate check)\n");
		return 1;
	}
	if ((id = ag_config_identity(cfg, name)) == NULL) {
		fprintf(stderr, "agentgate: token: no identity '%s' in %s or its %s\n", name,
		    path, AG_CONFIG_FRAGDIR);
		goto out;
	}
	if (!id->has_token_hash) {
		fprintf(stderr, "agentgate: token: identity '%s' has no token_hash to rotate%s "
		    "(make one with: agentgate token new %s)\n", name, id->has_token ?
		    " (its token_sha256 has no previous_token: replace it)" : "", name);
		goto out;
	}
	ag_err_clear(&err);
	if (ag_token_new(name, token, sizeof(token), hash, &err) < 0) {
		ag_err_print(stderr, &err);
		goto out;
	}
	until = time(NULL) + overlap;
	ag_token_until_text(until, when, sizeof(when));
	ag_token_hash_format(&id->token_hash, old);
	print_token(name, token);
	explicit_bzero(token, sizeof(token));
	if (print_only) {
		print_lines(name, hash, old, until);
		status = 0;
		goto out;
	}

	/* the file that holds the identity, as agentgate edit would open it */
	file = id->token_key_pos.file != NULL ? id->token_key_pos.file : path;
	if (lstat(file, &lst) < 0) {
		ag_err_set(&err, "%s: %s", file, strerror(errno));
		goto by_hand;
	}
	if (S_ISLNK(lst.st_mode)) {
		ag_err_set(&err, "%s is a symbolic link: edit the file it points to", file);
		goto by_hand;
	}
	if ((fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0 || fstat(fd, &st) < 0 ||
	    !S_ISREG(st.st_mode)) {
		ag_err_set(&err, "%s: %s", file, fd < 0 ? strerror(errno) : "not a regular file");
		goto by_hand;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		ag_err_set(&err, "%s is being edited by someone else (agentgate edit holds a "
		    "lock on it)", file);
		goto by_hand;
	}
	if (ag_strbuf_read_fd(&sb, fd) < 0) {
		ag_err_set(&err, "%s: cannot read: %s", file, strerror(errno));
		goto by_hand;
	}
	/* positions of exactly these bytes, and what they load as */
	ag_err_clear(&err);
	if ((before = ag_config_load_replacing(path, file, sb.data, sb.len, &err)) == NULL ||
	    (id = ag_config_identity(before, name)) == NULL ||
	    memcmp(&id->token_hash, &ag_config_identity(cfg, name)->token_hash,
	    sizeof(id->token_hash)) != 0) {
		if (err.msg[0] == '\0')
			ag_err_set(&err, "%s changed while it was read", file);
		goto by_hand;
	}
	if (ag_token_rotate_text(sb.data, sb.len, id, hash, until, &text, &len, &err) < 0)
		goto by_hand;
	/* the new text as the gateway will load it, saying what was meant */
	if ((after = ag_config_load_replacing(path, file, text, len, &err)) == NULL) {
		fprintf(stderr, "agentgate: token: the edited policy would not load:\n");
		ag_err_print(stderr, &err);
		ag_err_set(&err, "%s is unchanged", file);
		goto by_hand;
	}
	if (ag_token_rotate_check(before, after, name, hash, until, &err) < 0 ||
	    install(path, file, fd, &st, text, len, &err) < 0)
		goto by_hand;
	printf("agentgate: token: %s installed: identity %s takes the new token%s%s%s\n",
	    file, name, overlap > 0 ? ", and the old one until " : "; the old one is refused "
	    "from now on", overlap > 0 ? when : "", overlap > 0 ? " (UTC)" : "");
	/* without an overlap, the sessions on the old token end now, as
	 * agentgate edit ends what it revokes (a leaked token is why) */
	if (overlap <= 0 && realpath(path, real) != NULL &&
	    ag_sessions_end_revoked(before, after, real, "agentgate token rotate") > 0)
		printf("agentgate: token: the sessions above were ended: they logged in with "
		    "the old token\n");
	status = 0;
	goto out;
by_hand:
	fprintf(stderr, "agentgate: token: not installed: %s\n", err.msg);
	print_lines(name, hash, old, until);
out:
	free(text);
	ag_strbuf_free(&sb);
	if (fd >= 0)
		close(fd);
	ag_config_free(after);
	ag_config_free(before);
	ag_config_free(cfg);
	return status;
}

int
ag_cmd_token(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "overlap", required_argument, NULL, 'o' },
		{ "print", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char token[256], hash[AG_TOKEN_HASH_MAX];
	const char *path = AG_DEFAULT_CONFIG;
	struct ag_err err;
	long overlap = DEFAULT_OVERLAP;
	int ch, print_only = 0;

	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		token_usage(stdout);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "rotate") == 0) {
		optind = 2;
		opterr = 0;
		while ((ch = getopt_long(argc, argv, ":f:o:ph", opts, NULL)) != -1) {
			switch (ch) {
			case 'f':
				path = optarg;
				break;
			case 'o':
				if ((overlap = duration(optarg)) < 0) {
					fprintf(stderr, "agentgate: token: --overlap '%s' is not a "
					    "duration up to a year (24h, 30m, 0)\n", optarg);
					return 2;
				}
				break;
			case 'p':
				print_only = 1;
				break;
			case 'h':
				token_usage(stdout);
				return 0;
			default:
				token_usage(stderr);
				return 2;
			}
		}
		if (optind != argc - 1) {
			token_usage(stderr);
			return 2;
		}
		if (!name_ok(argv[optind]))
			return 2;
		return rotate(path, argv[optind], overlap, print_only);
	}
	if (argc != 3 || strcmp(argv[1], "new") != 0) {
		token_usage(stderr);
		return 2;
	}
	if (!name_ok(argv[2]))
		return 2;
	ag_err_clear(&err);
	if (ag_token_new(argv[2], token, sizeof(token), hash, &err) < 0) {
		ag_err_print(stderr, &err);
		return 1;
	}
	print_token(argv[2], token);
	printf("in identity %s of the policy (agentgate edit), in place of any token line:\n"
	    "  token_hash: \"%s\"\n", argv[2], hash);
	explicit_bzero(token, sizeof(token));
	return fflush(stdout) == 0 ? 0 : 1;
}
