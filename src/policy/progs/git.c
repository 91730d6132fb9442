/*
 * git.c - git: the global options before its subcommand (-c, --git-dir,
 * --exec-path ... change what git runs or which configuration it reads,
 * so they need the rule's allow_options), the options anywhere that write
 * a file (--output, -o DIR) or run another program (--upload-pack, -O,
 * --ext-diff, ...), and what the sandbox fixes in its environment.
 */
#include "agconfig.h"

#include <string.h>

#include "policy/prog.h"
#include "policy/walker.h"

static const struct ag_gopt git_opts[] = {
	{ "-C", AG_GO_VAL | AG_GO_CHDIR },
	{ "-c", AG_GO_VAL | AG_GO_RISKY },
	{ "--git-dir", AG_GO_VAL | AG_GO_RISKY },
	{ "--work-tree", AG_GO_VAL | AG_GO_RISKY },
	{ "--namespace", AG_GO_VAL },
	{ "--super-prefix", AG_GO_VAL },
	{ "--config-env", AG_GO_VAL | AG_GO_RISKY },
	{ "--exec-path", AG_GO_RISKY_SET },
	{ "--list-cmds", AG_GO_VAL },
	{ "--attr-source", AG_GO_VAL },
	{ "-p", AG_GO_RISKY },
	{ "--paginate", AG_GO_RISKY },
	{ "-P", 0 }, { "--no-pager", 0 }, { "--bare", 0 }, { "--literal-pathspecs", 0 },
	{ "--glob-pathspecs", 0 }, { "--noglob-pathspecs", 0 }, { "--icase-pathspecs", 0 },
	{ "--no-replace-objects", 0 }, { "--no-optional-locks", 0 }, { "--no-lazy-fetch", 0 },
	{ "--no-advice", 0 }, { "--version", 0 }, { "--help", 0 }, { "-h", 0 }, { "-v", 0 },
	{ "--html-path", 0 }, { "--man-path", 0 }, { "--info-path", 0 },
	{ NULL, 0 }
};

/* Options whose value may be a word the gateway cannot see. */
static const char *const git_valopts[] = {
	"-m", "--message", "--author", "--date", "-n", "--max-count", "--grep",
	"--format", "--pretty", "-S", "-G", "--since", "--until", "--after",
	"--before", "--committer", "-b", "-B", "--branch", "-C", NULL
};

static void
check_git(struct ag_walker *w, const struct ag_progcall *c)
{
	static const char *const git_out[] = { "--output", "--output-directory", NULL };
	static const char *const git_run[] = {
		"--upload-pack", "--receive-pack", "--exec", "--open-files-in-pager",
		"--ext-diff", NULL
	};
	struct ag_arg *a = c->a;
	size_t i, bi = 0, na = c->na;
	char ex[80];

	if (c->flags & AG_CF_UNKNOWN_TAIL) {
		ag_walk_refuse(w, AG_DENY, "program:git",
		    "git would get arguments from xargs or find that the gateway cannot check");
		return;
	}
	if (ag_prog_nonlit_option(a, na, c->prog->valopts, &bi)) {
		ag_walk_refuse(w, AG_DENY, "program:git",
		    "'%s' could be a git option that writes a file or runs a program; write it literally (or after --)",
		    ag_walk_excerpt(a[bi].w->raw, ex, sizeof(ex)));
		return;
	}
	for (i = 1; i < na; i++) {
		const char *s = a[i].lit, *eq;
		size_t nl;

		if (s == NULL || strcmp(s, "--") == 0)
			break;		/* pathspecs follow */
		if (strcmp(s, "-O") == 0 || (s[0] == '-' && s[1] == 'O')) {
			ag_walk_refuse(w, AG_DENY, "program:git",
			    "'git ... %s' makes git run another program",
			    ag_walk_excerpt(s, ex, sizeof(ex)));
			break;
		}
		/* format-patch -o DIR; relative to -C DIR when given */
		if (strcmp(s, "-o") == 0 && i + 1 < na && a[i + 1].lit != NULL) {
			ag_walk_write(w, c->cdir, a[i + 1].lit, 0);
			continue;
		}
		if (s[0] != '-' || s[1] != '-')
			continue;
		eq = strchr(s, '=');
		nl = eq ? (size_t)(eq - s) : strlen(s);
		if (ag_prog_canon_long(s, nl, git_run, NULL) != NULL && nl >= 4) {
			ag_walk_refuse(w, AG_DENY, "program:git",
			    "'git ... %s' makes git run another program",
			    ag_walk_excerpt(s, ex, sizeof(ex)));
			break;
		}
		if (ag_prog_canon_long(s, nl, git_out, NULL) != NULL && nl >= 5) {
			if (eq != NULL)
				ag_walk_write(w, c->cdir, eq + 1, 0);
			else if (i + 1 < na && a[i + 1].lit != NULL)
				ag_walk_write(w, c->cdir, a[i + 1].lit, 0);
		}
	}
}

/* Every GIT_* variable can point git at other programs, hooks or
 * repositories, except the ones that only label a commit. */
static const char *const git_env[] = { "GIT_*", NULL };
/* the developer tier's: programs git runs by exec, judged there */
static const char *const git_env_developer[] = { "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", NULL };
static const char *const git_env_harmless[] = {
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
	"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
	NULL
};

/*
 * The sandbox's settings where git is allowed: every configuration key
 * that names a program, fixed at the "command" level (GIT_CONFIG_KEY_n),
 * which outranks system, global, repository and included files.
 * diff.external is not here: git treats any value, even "", as an
 * external diff; like textconv and filter drivers it is left to the
 * execute allow-list.
 */
#define GITCFG(n, k, v)	"GIT_CONFIG_KEY_" #n "=" k, "GIT_CONFIG_VALUE_" #n "=" v

static const char *const git_drop[] = { "GIT_CONFIG*", NULL };
static const char *const git_set[] = {
	"GIT_CONFIG_NOSYSTEM=1", "GIT_PAGER=cat", "GIT_EDITOR=:", "GIT_SEQUENCE_EDITOR=:",
	"GIT_ASKPASS=", "GIT_TERMINAL_PROMPT=0",
	GITCFG(0, "core.fsmonitor", "false"),
	GITCFG(1, "core.hooksPath", "/dev/null"),
	GITCFG(2, "core.pager", "cat"),
	GITCFG(3, "core.editor", ":"),
	GITCFG(4, "sequence.editor", ":"),
	GITCFG(5, "core.askPass", ""),
	GITCFG(6, "core.sshCommand", "ssh"),
	GITCFG(7, "credential.helper", ""),
	GITCFG(8, "protocol.ext.allow", "never"),
	GITCFG(9, "gpg.program", "gpg"),
	GITCFG(10, "gpg.ssh.program", "ssh-keygen"),
	GITCFG(11, "gpg.x509.program", "gpgsm"),
	GITCFG(12, "commit.gpgSign", "false"),
	GITCFG(13, "tag.gpgSign", "false"),
	GITCFG(14, "log.showSignature", "false"),
	GITCFG(15, "safe.bareRepository", "explicit"),
	"GIT_CONFIG_COUNT=16",
	NULL
};

static const char *const git_names[] = { "git", NULL };
/* plumbing that does what porcelain does: a rule against `push` is against
 * every way of pushing (send-pack over any transport, http-push for DAV) */
static const char *const git_same_as[] = {
	"send-pack", "push", "http-push", "push", NULL
};

/*
 * Its own commands (git --list-cmds=main of git 2.39: builtins, git-core's
 * programs and the helpers git runs as `git NAME--helper`).  Any other
 * word may be an alias, or, with help.autocorrect set anywhere git reads
 * configuration (the environment, a repository in /tmp, -c), the command
 * git guesses from it, which git then runs in its own process (`git pusj`
 * is a push that no exec shows): while a deny rule names a git action
 * such words are refused (rules.c).  Only commands a git has are listed:
 * git never guesses for a word it has, and one it lacks might be guessed
 * into an action (so no externals, git-lfs and the like, and no later
 * gits' commands: they run as git-NAME).  A dashed git-NAME is no such
 * word: git dies on one it does not have.
 */
static const char *const git_subs[] = {
	"add", "add--interactive", "am", "annotate", "apply", "archive", "bisect",
	"bisect--helper", "blame", "branch", "bugreport", "bundle", "cat-file",
	"check-attr", "check-ignore", "check-mailmap", "check-ref-format", "checkout",
	"checkout--worker", "checkout-index", "cherry", "cherry-pick", "clean", "clone",
	"column", "commit", "commit-graph", "commit-tree", "config", "count-objects",
	"credential", "credential-cache", "credential-cache--daemon", "credential-store",
	"daemon", "describe", "diagnose", "diff", "diff-files", "diff-index", "diff-tree",
	"difftool", "difftool--helper", "env--helper", "fast-export", "fast-import",
	"fetch", "fetch-pack", "filter-branch", "fmt-merge-msg", "for-each-ref",
	"for-each-repo", "format-patch", "fsck", "fsck-objects", "fsmonitor--daemon", "gc",
	"get-tar-commit-id", "grep", "hash-object", "help", "hook", "http-backend",
	"http-fetch", "http-push", "imap-send", "index-pack", "init", "init-db",
	"instaweb", "interpret-trailers", "log", "ls-files", "ls-remote", "ls-tree",
	"mailinfo", "mailsplit", "maintenance", "merge", "merge-base", "merge-file",
	"merge-index", "merge-octopus", "merge-one-file", "merge-ours", "merge-recursive",
	"merge-recursive-ours", "merge-recursive-theirs", "merge-resolve", "merge-subtree",
	"merge-tree", "mergetool", "mergetool--lib", "mktag", "mktree", "multi-pack-index",
	"mv", "name-rev", "notes", "pack-objects", "pack-redundant", "pack-refs",
	"patch-id", "pickaxe", "prune", "prune-packed", "pull", "push", "quiltimport",
	"range-diff", "read-tree", "rebase", "receive-pack", "reflog", "remote",
	"remote-ext", "remote-fd", "remote-ftp", "remote-ftps", "remote-http",
	"remote-https", "repack", "replace", "request-pull", "rerere", "reset", "restore",
	"rev-list", "rev-parse", "revert", "rm", "send-pack", "sh-i18n",
	"sh-i18n--envsubst", "sh-setup", "shell", "shortlog", "show", "show-branch",
	"show-index", "show-ref", "sparse-checkout", "stage", "stash", "status",
	"stripspace", "submodule", "submodule--helper", "subtree", "switch",
	"symbolic-ref", "tag", "unpack-file", "unpack-objects", "update-index",
	"update-ref", "update-server-info", "upload-archive", "upload-archive--writer",
	"upload-pack", "var", "verify-commit", "verify-pack", "verify-tag", "version",
	"web--browse", "whatchanged", "worktree", "write-tree", NULL
};

/* what writes the repository's config: read-only in a sandbox (the
 * gateway's protected paths); `git init` again in a repository too */
static const char *const git_config_writers[] = {
	"config", "remote", "branch", "submodule", "init", NULL
};

/* the helper directory's own git (git --exec-path): its git-NAME are
 * links to it, and it is a file of its own beside /usr/bin/git */
static const char *const git_files[] = {
	"/usr/lib/git-core/git", "/usr/libexec/git-core/git", "/usr/local/libexec/git-core/git",
	NULL
};

const struct ag_prog ag_prog_git = {
	.names = git_names,
	.files = git_files,
	.flags = AG_PROG_DEFUSE_IF_ALLOWED,
	.global_opts = git_opts,
	.valopts = git_valopts,
	.check = check_git,
	.env_filter = git_env,
	.env_developer = git_env_developer,
	.env_harmless = git_env_harmless,
	.env_drop = git_drop,
	.env_set = git_set,
	.dashed = "git-",
	.same_as = git_same_as,
	.builtin_subs = git_subs,
	.alias_note = "git also runs the command its help.autocorrect guesses from an unknown word (git pusj is git push) inside its own process, where no exec shows it",
	.readonly_subs = git_config_writers,
	.readonly_note = "git cannot record settings here: a repository's .git/config "
	    "and ~/.gitconfig are read-only to every command (git would run programs "
	    "named there); the commit identity comes from GIT_AUTHOR_NAME, "
	    "GIT_AUTHOR_EMAIL, GIT_COMMITTER_NAME and GIT_COMMITTER_EMAIL (export them "
	    "to change it), and git fetch and git pull take a repository's URL or path "
	    "where a remote's name is not recorded",
};
