/*
 * policy.h - the decision: a parsed command line + a profile → allow, deny
 * or ask, with a reason written for the agent that reads it and the rule
 * that decided.  Pure: no I/O but stat(2)/realpath(3) for path resolution.
 */
#ifndef AG_POLICY_H
#define AG_POLICY_H

#include <stddef.h>

#include "common/config.h"
#include "common/err.h"
#include "parse/shparse.h"

enum ag_verdict {
	AG_ALLOW = 0,
	AG_DENY = 1,
	AG_ASK = 2,
};

/* What the decision needs to know about the session. */
struct ag_policy_ctx {
	const struct ag_profile	*profile;
	const char		*cwd;		/* absolute */
	const char		*home;		/* the account's home, for ~ */
	const char		*user;
	char *const		*env;		/* tracked environment, "KEY=VALUE", NULL-terminated;
						 * PATH from here resolves command names */
	int			 remote;	/* the files are another host's: judged
						 * as written (ag_path_set_lexical()) */
	int			 record;	/* fill the decision's writes[] and
						 * inner[] (policy suggest); the gateway
						 * leaves it 0 */
	int			 rollout;	/* the second pass of a profile in
						 * rollout: its relaxed rules refuse
						 * nothing (decision.would_run) */
	int			 one_pass;	/* no second pass (the exec judge, which
						 * counts deny rules only) */
	int			 approving;	/* the second pass of a profile with
						 * rules that wait for approval: they
						 * refuse nothing (decision.approve) */
	int			 cleanup;	/* a clean-up line while /tmp is past
						 * limits.tmp_disk (core/tmpclean.h):
						 * what bash evaluates unseen (a
						 * subscript, arithmetic, test -v)
						 * refused as in the strict tier */
};

struct ag_arena;

/* The verdict for one simple command found anywhere in the tree.  Its
 * strings belong to the decision (ag_decision_free). */
struct ag_policy_cmd {
	char		*name;		/* argv[0] after quote removal; NULL if not a literal */
	char		*path;		/* resolved program, "builtin", "keyword", or NULL */
	char		*text;		/* the command's source text */
	char		*sub;		/* its subcommand, where its rule or descriptor
					 * knows them and the word is literal; or NULL */
	enum ag_verdict	 verdict;
	char		*reason;
	char		*rule;		/* rule id that decided, or a built-in reason tag */
	size_t		 off;
};

struct ag_decision {
	enum ag_verdict		 verdict;
	int			 parse_error;	/* 1: the line did not parse (verdict DENY) */
	int			 incomplete;	/* 1: the parser wanted more input */
	char			 reason[2048];	/* the first refusal, or "allowed" */
	char			 rule[256];	/* e.g. "profiles.readonly.deny[0]", "builtin:eval",
						 * "feature:background", "parse" */
	int			 would_run;	/* a refusal the profile's rollout lets
						 * run: only its relaxed rules refused
						 * (rollout.c), nothing the gateway checks */
	/* the line waits for a person's approval (approvals.h): allowed, but
	 * by rules that say decision: approve, or refused only by such rules
	 * (and unknown: approve), nothing the gateway checks.  approve_rule:
	 * every rule of the line that says decision: approve, wherever it
	 * matched (a wrapper's command, `find -exec`'s, a refusing one), ids
	 * joined by ','; filled by every walk, approve only by the first
	 * decision of a line.  A person's answer covers them all. */
	int			 approve;
	char			 approve_rule[256];
	struct ag_policy_cmd	*cmds;
	size_t			 ncmds;
	size_t			 refused_part;	/* 1 + the index in cmds of the
						 * command whose refusal is the
						 * line's; 0: none */
	/* with ctx->record: each file the line writes (a redirection, a
	 * program's output file the registry knows), absolute, as the walk
	 * resolved it; and the name of each program a wrapper of the line
	 * runs (timeout 5 make: make), which has no entry in cmds[]; in
	 * strings */
	const char		**writes;
	size_t			 nwrites;
	const char		**inner;
	size_t			 ninner;
	struct ag_arena		*strings;	/* every string of cmds[] */
};

/*
 * Rollout (rollout.c): 1 when every rule id of rules (joined by ',') is
 * one of p's own rules (or its unknown) that p or the rule itself puts in
 * rollout (`enforce: audit`).  The gateway's own checks (a parse error, a
 * word it cannot see, a protected path, a dangerous variable, the audit)
 * are never among them.  A decision that only such rules refused is
 * would_run (the decision is made again with them refusing nothing), and
 * the exec judge lets an exec they refuse go on, recorded.
 */
int	ag_policy_rollout_rules(const struct ag_profile *p, const char *rules);
/* 1 when p or one of its rules is in rollout. */
int	ag_profile_in_rollout(const struct ag_profile *p);
/*
 * Approvals, the same way: 1 when every rule id of rules is one of p's
 * rules that says decision: approve (or its unknown, with unknown:
 * approve).  A refusal only such rules made is decided again with them
 * refusing nothing; an allowed line one of them allowed waits too.
 */
int	ag_policy_approve_rules(const struct ag_profile *p, const char *rules);
/* 1 when every id of rules (joined by ',') is also one of set's. */
int	ag_policy_rules_within(const char *rules, const char *set);
/* Add each id of rules missing from list (a buffer of listsz bytes):
 * 0, or -1 when it does not fit (list unchanged from then on). */
int	ag_policy_rules_add(char *list, size_t listsz, const char *rules);
/* 1 when p has a rule that waits for approval, or unknown: approve. */
int	ag_profile_has_approvals(const struct ag_profile *p);

/* Decide on an already-parsed tree. 0 ok (out filled), -1 internal error (out = DENY). */
int	ag_policy_decide(const struct ag_policy_ctx *ctx, const struct ag_sh_node *tree,
	    struct ag_decision *out);
/* The same, with the line the tree was parsed from (srclen bytes at src):
 * each command of out->cmds then has its source text. */
int	ag_policy_decide_text(const struct ag_policy_ctx *ctx, const struct ag_sh_node *tree,
	    const char *src, size_t srclen, struct ag_decision *out);
/* Parse and decide in one call; a parse error is a DENY with parse_error set. */
int	ag_policy_check(const struct ag_policy_ctx *ctx, const char *line, size_t len,
	    struct ag_decision *out);
/* The DENY (rule "parse") of a line ag_sh_parse() said st of, in err's words. */
void	ag_policy_parse_refusal(enum ag_sh_status st, const struct ag_err *err,
	    struct ag_decision *out);
void	ag_decision_free(struct ag_decision *d);
const char *ag_verdict_name(enum ag_verdict v);	/* "allow", "deny", "ask" */

/*
 * The built-in protected paths (shell, ssh and git startup files, git
 * config and hooks), as globs: "~/" is home, a leading "**" any directory.  Never
 * written by a redirection; the developer tier's sandbox binds them
 * read-only.  NULL-terminated, static.
 */
const char *const *ag_policy_protected(void);

/*
 * Why writing the file at abs (absolute, with no symbolic link in it) is
 * refused in profile prof for an account whose home is home: the rule
 * ("path:protect", "path:write") with the text in msg, or NULL when it may
 * be written.  For a write made after the decision, where the file is
 * really opened (the MCP write_file tool, exec/runner.h), so that a link
 * swapped in after the decision cannot reach a name the decision refused.
 */
const char *ag_policy_write_refusal(const struct ag_profile *prof, const char *home,
	    const char *abs, char *msg, size_t msgsz);

/*
 * The wrappers the policy unwraps without a rule naming them (env, nice,
 * nohup, timeout, stdbuf, setsid, xargs, time), as program names to
 * resolve through PATH.  What a wrapper line runs is judged like a command
 * of its own, after the wrapper's options: `timeout 5 make` is allowed
 * only where `make` is, deny rules included; xargs and find -exec add
 * words the gateway cannot see, so a program with argument rules (allow
 * or deny) behind them is refused unless its subcommand is already
 * written; `xargs` without a command runs the program echo, judged so in
 * the strict tier.  The strict tier's sandbox lets these programs execute,
 * which lends no right to what they run: it must be executable on its own.
 * NULL-terminated, static.
 */
const char *const *ag_policy_wrappers(void);

#endif
