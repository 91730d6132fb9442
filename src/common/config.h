/*
 * config.h - the policy file (agentgate.yaml) as C structures.
 *
 * ag_config_load() reads and validates the whole file at once: every error
 * a later stage could hit (unknown profile, bad CIDR, bad size) is reported
 * here with FILE:LINE:COL, never at first use.  The result is immutable and
 * owned by the caller (ag_config_free).  Shared by the gateway and the PAM
 * module, so nothing here may depend on anything but libyaml and libc.
 */
#ifndef AG_CONFIG_H
#define AG_CONFIG_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "common/err.h"
#include "common/tokenhash.h"

#define AG_CONFIG_MAX_BYTES	(4 * 1024 * 1024)	/* larger files are refused */
#define AG_CONFIG_MAX_DEPTH	32			/* YAML nesting */
#define AG_CONFIG_MAX_NODES	200000			/* YAML events */

#ifndef AG_SYSCONFDIR
#define AG_SYSCONFDIR "/etc"
#endif
#define AG_DEFAULT_CONFIG AG_SYSCONFDIR "/agentgate/agentgate.yaml"

struct ag_pos;
struct ag_strlist {
	char	**v;
	size_t	  n;
	/* where v[i] was written, for i < npos: the policy's lists have them,
	 * a list built in code need not */
	struct ag_pos	*pos;
	size_t		 npos;
};

enum ag_sandbox_mode { AG_SANDBOX_REQUIRED = 0, AG_SANDBOX_BEST_EFFORT, AG_SANDBOX_OFF };
/* approve: a program no rule names waits for a person's approval
 * (record/approvals.h); judged as deny everywhere else */
enum ag_unknown      { AG_UNKNOWN_DENY = 0, AG_UNKNOWN_ASK, AG_UNKNOWN_ALLOW, AG_UNKNOWN_APPROVE };
enum ag_tier         { AG_TIER_STRICT = 0, AG_TIER_DEVELOPER };
/* enforce: a refusal refuses; audit (rollout): a line the rules would
 * refuse runs, under the same sandbox, and is recorded as would_deny */
enum ag_enforce      { AG_ENFORCE_ON = 0, AG_ENFORCE_AUDIT };
enum ag_feature      { AG_FEATURE_ALLOW = 0, AG_FEATURE_DENY };
/* features.write_redirections: every redirection may write a file (within
 * paths.write), only those of a command an allow rule names, or none */
enum ag_wredir       { AG_WREDIR_ALLOW = 0, AG_WREDIR_RULES, AG_WREDIR_DENY };
enum ag_transfer     { AG_TRANSFER_OFF = 0, AG_TRANSFER_READ, AG_TRANSFER_WRITE };
/* paths.tmp: what /tmp is in a sandboxed session; unset means the tier's
 * default (developer: persistent, strict: session) */
enum ag_tmp          { AG_TMP_UNSET = 0, AG_TMP_PERSISTENT, AG_TMP_SESSION };

/* Where a thing was written, for messages and audit "rule". */
struct ag_pos {
	const char	*file;	/* the policy file or a fragment; the config's */
	int		 line;
	int		 col;
};

/*
 * One allow or deny rule.  A plain string in the YAML ("ls") is a rule with
 * only `command` set.  Semantics (implemented in policy/rules.c):
 *  allow: the program may run when every constraint holds:
 *    subcommands   non-empty → the first non-option argument must be one of them
 *    args          non-empty → every argument must match one of these globs
 *    argv          (has_argv) the arguments are exactly this many words, each
 *                  matching the glob at its position (sudoers' "cmd arg arg");
 *                  excludes subcommands, args and allow_options
 *    deny_args     any argument matching one of these globs refuses the command
 *    allow_options global options otherwise refused (git -c, --git-dir, ...)
 *  deny: refuses when `command` matches and either no constraint is given,
 *    or a subcommand is in `subcommands`, or an argument matches `args`, or
 *    the arguments match `argv` exactly.
 */
struct ag_rule {
	char			*command;	/* bare name or absolute path */
	const char		*base;		/* its last component, in command */
	struct ag_strlist	 subcommands;
	struct ag_strlist	 args;
	struct ag_strlist	 argv;		/* when has_argv; n == 0: no arguments */
	int			 has_argv;
	struct ag_strlist	 deny_args;
	struct ag_strlist	 allow_options;
	char			*name;		/* the rule's own `name:`, or NULL */
	char			*id;		/* "profiles.readonly.allow[3]", or with a
						 * name "profiles.readonly.allow.NAME" */
	char			*label;		/* for people: id and the program,
						 * "profiles.readonly.allow[3] (git)" */
	enum ag_enforce		 enforce;	/* audit: what it refuses runs, recorded */
	int			 approve;	/* decision: approve: a line it allows
						 * (allow rule) or refuses (deny rule)
						 * waits for a person's approval */
	struct ag_pos		 pos;
};

/* No subcommand or argument condition: the rule names the program whole. */
static inline int
ag_rule_is_plain(const struct ag_rule *r)
{
	return r->subcommands.n == 0 && r->args.n == 0 && r->deny_args.n == 0 &&
	    !r->has_argv;
}

struct ag_features {
	enum ag_feature	command_substitution;	/* default allow */
	enum ag_feature	process_substitution;	/* default allow */
	enum ag_feature	functions;		/* default deny */
	enum ag_feature	background;		/* default deny */
	enum ag_feature	coproc;			/* default deny */
	enum ag_feature	subshell;		/* default allow */
	enum ag_wredir	write_redirections;	/* > >> &> <> to a file; default allow */
};

struct ag_limits {			/* 0 = not set (no limit / built-in default) */
	long		timeout;	/* seconds per command */
	long long	max_output;	/* bytes per stream */
	long		idle_timeout;	/* seconds at the REPL prompt */
	long		processes;	/* RLIMIT_NPROC */
	long		open_files;	/* RLIMIT_NOFILE */
	long long	file_size;	/* RLIMIT_FSIZE, bytes */
	long		cpu;		/* RLIMIT_CPU, seconds */
	long long	address_space;	/* RLIMIT_AS, bytes */
	long long	memory;		/* RLIMIT_DATA, bytes; -1 "unlimited" */
	long long	tmp_size;	/* developer tier: the private /tmp's size */
	long		tmp_age;	/* seconds an entry of a persistent /tmp
					 * stays unused before it is removed */
	long long	tmp_disk;	/* bytes a persistent /tmp may hold */
};

/*
 * profiles.NAME.validator: who is asked about a command the rules leave
 * unknown when `unknown: ask` (validate/validator.h).  There is no
 * fail-open setting: whatever goes wrong asking is a refusal.
 */
enum ag_validator_kind {
	AG_VK_OPENAI = 0,	/* Chat Completions (also Ollama, llama.cpp, vLLM) */
	AG_VK_ANTHROPIC,	/* the Messages API */
	AG_VK_OPA,		/* Open Policy Agent's data API */
	AG_VK_WEBHOOK,		/* the request document, answered with a decision */
};

struct ag_validator {
	char			*name;		/* for messages and the audit; default: the kind */
	char			*url;
	enum ag_validator_kind	 kind;		/* default openai */
	char			*model;		/* openai, anthropic: required */
	char			*api_key_file;
	char			*prompt_file;	/* LLM kinds: the system prompt; NULL: built in */
	long			 timeout_ms;	/* the whole budget, retry included; default 4000 */
	long			 max_command_bytes;	/* longer commands are refused unasked */
	long			 max_answer_bytes;	/* a longer answer is a refusal */
	long			 max_per_minute;	/* asks per session per minute; 0: none */
	long			 max_tokens;	/* anthropic's max_tokens */
	int			 has_min_confidence;
	double			 min_confidence;	/* 0..1; an answer below it is a deny */
	long			 approval_timeout;	/* webhook: seconds a "pending" answer
						 * may wait for a person; 0: not accepted */
	struct ag_pos		 pos;
};

/* "openai", "anthropic", "opa", "webhook" */
const char *ag_validator_kind_name(enum ag_validator_kind k);

/*
 * One host rule of network.allow (policy/netrules.h judges a connection
 * against them; the egress proxy enforces them).  "HOST[:PORT]",
 * "*.DOMAIN[:PORT]", "*[:PORT]", an address literal "ADDR[:PORT]" or
 * "[V6]:PORT", or "METHOD[,METHOD...] HOST[:PORT][/PATH-GLOB]" for plain
 * HTTP.  No port: 443, or 80 for a method rule.
 */
#define AG_NET_M_GET	0x01
#define AG_NET_M_HEAD	0x02
#define AG_NET_M_POST	0x04
#define AG_NET_M_PUT	0x08
#define AG_NET_M_DELETE	0x10
#define AG_NET_M_PATCH	0x20
#define AG_NET_M_OPTIONS 0x40
struct ag_net_rule {
	char			*text;		/* as written: the audit's and messages' rule */
	char			*host;		/* lower case; "*", "*.domain", a name or an address */
	int			 is_addr;	/* host is an address literal */
	unsigned char		 addr[16];	/* it, network order */
	int			 family;	/* AF_INET, AF_INET6 when is_addr */
	int			 port;		/* 1..65535; 0: any (legacy "*:PORT" has one) */
	unsigned		 methods;	/* AG_NET_M_*: plain HTTP only; 0: any tunnel */
	char			*path;		/* glob for the request path, or NULL */
	const char		*preset;	/* the preset it came from, or NULL */
	struct ag_pos		 pos;
};

/* One gateway.egress.resolve entry: HOST[:PORT] -> ADDR[:PORT]. */
struct ag_egress_map {
	char			*host;		/* lower case */
	int			 port;		/* 0: any */
	char			*addr;		/* numeric */
	int			 to_port;	/* 0: the requested one */
};

struct ag_egress_conf {
	struct ag_egress_map	*resolve;
	size_t			 nresolve;
	long			 connect_timeout;	/* seconds; default 10 */
};

struct ag_profile {
	char			*name;
	/*
	 * strict: only the allowed programs execute, anywhere in a command's
	 * tree.  developer: the typed line is judged the same way, but what
	 * allowed programs start (make recipes, configure, test runners,
	 * compilers, files beneath paths.exec) may execute too; the kernel
	 * (writes, protected paths, network) and exec-time deny rules bound
	 * the whole tree.  See doc/sandbox.md.
	 */
	enum ag_tier		 tier;
	struct ag_rule		*allow;
	size_t			 nallow;
	struct ag_rule		*deny;
	size_t			 ndeny;
	struct ag_features	 features;
	struct ag_strlist	 paths_read;	/* as written; "~" expanded at use */
	struct ag_strlist	 paths_write;
	struct ag_strlist	 paths_protect;	/* added to the built-in list */
	struct ag_strlist	 paths_exec;	/* developer tier: files beneath may run */
	enum ag_tmp		 paths_tmp;	/* paths.tmp */
	int			 has_network;	/* 0: key absent → no network at all */
	int			*net_connect;	/* legacy TCP ports: "*:PORT" rules below */
	size_t			 nnet_connect;
	int			*net_bind;
	size_t			 nnet_bind;
	struct ag_net_rule	*net_allow;	/* network.allow, then the presets' */
	size_t			 nnet_allow;
	struct ag_strlist	 net_presets;	/* network.presets, as written */
	struct ag_strlist	 net_unix;	/* network.unix: host sockets (or their
						 * directories) commands may connect to */
	enum ag_transfer	 sftp;		/* file_transfer.sftp */
	int			 scp_legacy;	/* file_transfer.scp: true */
	int			 rsync;		/* file_transfer.rsync: true */
	int			 redact;	/* output.redact: secrets' shapes hidden */
	struct ag_strlist	 redact_patterns; /* output.redact_patterns: more (POSIX ERE) */
	struct ag_strlist	 env_deny;	/* globs, added to the built-in set */
	struct ag_strlist	 env_allow;	/* names a profile lets through the guard */
	struct ag_strlist	 env_set_keys;	/* env.set, parallel arrays */
	struct ag_strlist	 env_set_vals;
	struct ag_limits	 limits;
	enum ag_unknown		 unknown;	/* default deny */
	enum ag_enforce		 enforce;	/* audit: the profile is in rollout */
	struct ag_validator	*validator;	/* NULL when absent */
	struct ag_strlist	 targets;	/* upstreams this profile's callers may
						 * reach, and "local"; empty = local only */
	int			 is_target;	/* an upstream's profile: judged by name
						 * and as written (upstream/upstream.h) */
	struct ag_strlist	 selectable_by;	/* who `--profile NAME` may give it to:
						 * identities, accounts, "%group" */
	struct ag_strlist	 approvers;	/* who may approve its lines: accounts,
						 * "%group"; empty: approvals.approvers */
	struct ag_pos		 pos;
};

/*
 * The developer tier with `unknown: allow`: the kernel holds every file
 * the command's processes touch, and the exec supervisor judges the deny
 * rules again at every exec with the words the program really gets.  What
 * the typed line cannot see is left to them, and PATH may be changed
 * between lines (it only picks which file a name runs).
 */
static inline int
ag_profile_exec_judged(const struct ag_profile *p)
{
	return p != NULL && p->tier == AG_TIER_DEVELOPER && p->unknown == AG_UNKNOWN_ALLOW;
}

struct ag_cidr {
	int		family;		/* AF_INET or AF_INET6 */
	unsigned char	addr[16];	/* network byte order, masked */
	int		prefix;
};

struct ag_identity {
	char			*name;
	struct ag_strlist	 keys;		/* "TYPE BASE64", comment dropped */
	int			 has_token;	/* token_sha256 (unsalted, older) */
	unsigned char		 token_sha256[32];
	int			 has_token_hash;	/* token_hash (salted scrypt) */
	struct ag_token_hash	 token_hash;
	/* previous_token: the hash rotated out, still taken before until */
	int			 has_prev_token;
	struct ag_token_hash	 prev_token_hash;
	time_t			 prev_until;	/* refused from this second on */
	/* where token_hash's key and value and previous_token's key are
	 * (agentgate token rotate edits them); line 0 = absent */
	struct ag_pos		 token_key_pos, token_val_pos, prev_pos;
	char			*profile_name;
	const struct ag_profile	*profile;	/* resolved at load time */
	struct ag_cidr		*from;
	size_t			 nfrom;		/* 0 = any address */
	int			 has_expires;
	time_t			 expires;	/* first second after the `expires` day, UTC */
	int			 disabled;
	struct ag_strlist	 accounts;	/* the accounts it may log in as: names and
						 * "%group"; empty = any account (older
						 * policies; check warns) */
	struct ag_pos		 pos;
};

struct ag_usermap {
	char			*name;		/* user, or group without the '%' */
	int			 is_group;
	char			*profile_name;
	const struct ag_profile	*profile;
	struct ag_pos		 pos;
};

struct ag_audit_conf {
	char	*file;			/* NULL = no file sink */
	int	 has_syslog;
	int	 syslog_facility;	/* LOG_AUTHPRIV, ... */
	int	 required;		/* default 1 */
	char	*group;			/* admin group that may read the file; NULL = none */
	char	*http_url;		/* optional collector; NULL = none */
	char	*spool;			/* directory for records the collector did not
					 * take; NULL = the file sink's directory */
	long long min_free;		/* bytes the file's file system keeps for the
					 * records that follow a refusal; 0 = none */
};

/* audit.min_free when the policy does not say */
#define AG_AUDIT_MIN_FREE_DEFAULT	(32LL << 20)

/* Authentication methods of the built-in server (gateway.server.auth_methods). */
#define AG_AUTH_PUBLICKEY	0x01
#define AG_AUTH_KBDINT		0x02	/* keyboard-interactive, through PAM */
#define AG_AUTH_PASSWORD	0x04	/* through PAM */
#define AG_AUTH_MAX_CHAINS	8
#define AG_AUTH_MAX_STEPS	3

/* One AuthenticationMethods-like chain: every step, in order. */
struct ag_auth_chain {
	int	step[AG_AUTH_MAX_STEPS];	/* AG_AUTH_* */
	size_t	nsteps;
};

/*
 * gateway.server: the built-in SSH server (`agentgate serve`).  Zero/NULL
 * means "not set": the server applies the defaults documented in
 * agentgate.yaml(5) (see server.h for the values).
 */
struct ag_server_conf {
	int			 present;	/* the key was in the file */
	struct ag_strlist	 listen;	/* "ADDR:PORT", "[V6ADDR]:PORT" */
	struct ag_strlist	 host_keys;	/* absolute paths of private keys */
	struct ag_strlist	 allow_users;	/* empty = any user (root only if named) */
	struct ag_strlist	 allow_groups;
	long			 max_connections;
	long			 max_per_source;
	long			 startups[3];	/* max_startups start:rate:full; 0 = default */
	long			 max_sessions;	/* session channels per connection */
	long			 login_grace_time;	/* seconds */
	long			 max_auth_tries;
	long			 keepalive;	/* seconds; 0 = off */
	char			*authorized_keys;	/* pattern with %u, %h, leading ~/ */
	struct ag_auth_chain	 chains[AG_AUTH_MAX_CHAINS];	/* alternatives */
	size_t			 nchains;	/* 0 = publickey alone */
	struct ag_strlist	 accept_env;	/* names or globs (AcceptEnv) */
	char			*ciphers;	/* comma lists for libssh; NULL = modern default */
	char			*kex;
	char			*macs;
	char			*hostkey_algorithms;
	struct ag_pos		 pos;
};

struct ag_gateway {
	char			*runner;	/* default /bin/bash */
	char			*pam_service;	/* default "agentgate" */
	char			*pam_confdir;	/* NULL = system default */
	enum ag_sandbox_mode	 sandbox;	/* default required */
	char			*default_profile_name;
	const struct ag_profile	*default_profile;	/* NULL = refuse */
	struct ag_audit_conf	 audit;
	char			*recordings;	/* NULL = off */
	int			 recordings_input;
	struct ag_strlist	 observers;	/* who may `agentgate join`: users, %groups */
	struct ag_server_conf	 server;	/* gateway.server */
	struct ag_egress_conf	 egress;	/* gateway.egress */
};

/*
 * A host behind the gateway (bastion mode, upstream/upstream.h): where it
 * is, which account and key the gateway logs in with, the only host keys
 * it accepts, and the profile commands are judged against there.
 */
#define AG_TARGET_LOCAL	"local"
struct ag_upstream {
	char			*name;
	char			*host;
	long			 port;		/* default 22 */
	char			*user;
	char			*key;		/* private key file, the gateway group's */
	char			*known_hosts;	/* pinned host keys; nothing else is trusted */
	char			*hostkey_algorithms;	/* NULL: libssh's defaults */
	long			 connect_timeout;	/* seconds, default 10 */
	char			*profile_name;
	const struct ag_profile	*profile;	/* resolved at load time */
	int			 verbatim;	/* each line alone as the exec request: no
						 * runner script, no tracked state (an upstream
						 * whose key runs agentgate as its command=) */
	struct ag_strlist	 env_keys;	/* env: exported for every command there */
	struct ag_strlist	 env_vals;
	struct ag_pos		 pos;
};

/* approvals: who may approve a line an approve rule holds, and how long
 * it waits (record/approvals.h). */
#define AG_APPROVALS_TIMEOUT_DEFAULT	600	/* seconds */
struct ag_approvals_conf {
	struct ag_strlist	 approvers;	/* accounts and "%group"; root always may */
	long			 timeout;	/* seconds; 0: the default */
};

struct ag_config {
	char			*path;		/* the main policy file */
	struct ag_strlist	 files;		/* it, then the fragments read, in order */
	int			 has_fragdir;	/* its agentgate.d was there */
	int			 version;	/* must be 1 */
	struct ag_gateway	 gw;
	struct ag_identity	*identities;
	size_t			 nidentities;
	struct ag_usermap	*users;
	size_t			 nusers;
	struct ag_profile	*profiles;
	size_t			 nprofiles;
	struct ag_upstream	*upstreams;
	size_t			 nupstreams;
	struct ag_approvals_conf approvals;
};

/* Who may approve p's lines: its own approvers, else the policy's. */
static inline const struct ag_strlist *
ag_profile_approvers(const struct ag_config *cfg, const struct ag_profile *p)
{
	return p != NULL && p->approvers.n > 0 ? &p->approvers : &cfg->approvals.approvers;
}

/* The seconds a line waits for approval. */
static inline long
ag_approvals_timeout(const struct ag_config *cfg)
{
	return cfg != NULL && cfg->approvals.timeout > 0 ? cfg->approvals.timeout :
	    AG_APPROVALS_TIMEOUT_DEFAULT;
}

/* Flags for ag_config_load(). */
#define AG_CONFIG_NO_PERMCHECK	0x01	/* tests and fuzzing only */
/*
 * path alone, without its agentgate.d, and what the fragments could have
 * supplied (profiles, what names one) is not required: the result is good
 * for its gateway section only (the last good copy, lastgood.h).
 */
#define AG_CONFIG_GATEWAY_ONLY	0x02

/* The fragments' directory beside a policy file, and how many it may hold. */
#define AG_CONFIG_FRAGDIR	"agentgate.d"
#define AG_CONFIG_MAX_FRAGMENTS	4096

/*
 * Load and validate path, then the fragments in its directory's
 * agentgate.d (the files named *.yaml, not starting with '.', in byte
 * order of their names), which add identities, users, profiles and
 * upstreams; a directory that is not there is none.  Unless
 * AG_CONFIG_NO_PERMCHECK, first checks that each file and every directory
 * above it are owned by root (or by the owner of the running executable)
 * and not group- or world-writable.
 * Returns NULL with err filled ("FILE:LINE:COL: message").
 */
struct ag_config *ag_config_load(const char *path, unsigned flags, struct ag_err *err);
/*
 * The same, also handing back what was read of path (text, initialized
 * here, the caller's to ag_strbuf_free also on failure; the fragments'
 * bytes are not in it) and the file's stat: for a copy of exactly the
 * bytes that loaded (lastgood.h).
 */
struct ag_strbuf;
struct stat;
struct ag_config *ag_config_load_text(const char *path, struct ag_strbuf *text,
    struct stat *st, struct ag_err *err);
/*
 * ag_config_load(path) with buf as the text of file (path itself or one of
 * its fragments, named as cfg->files names it), whose own bytes are not
 * used but whose ownership and mode are checked: a candidate is judged
 * exactly as the gateway would judge it installed.
 */
struct ag_config *ag_config_load_replacing(const char *path, const char *file,
    const char *buf, size_t len, struct ag_err *err);
/*
 * ag_config_load(path) as it would load with buf installed as the
 * fragment agentgate.d/name, in place of one of that name or added to
 * them: the installed one (if any) is not read, buf's messages name shown
 * (the candidate's own file), and the candidate's ownership and mode are
 * not judged (it is not installed yet).  A name the loader would not read
 * as a fragment is an error.  For `agentgate check --fragment`.
 */
struct ag_config *ag_config_load_fragment(const char *path, const char *name,
    const char *shown, const char *buf, size_t len, struct ag_err *err);
/* Parse a buffer; name is used in messages.  No permission checks, no
 * fragments. */
struct ag_config *ag_config_parse(const char *buf, size_t len, const char *name,
    struct ag_err *err);
/* The StrictModes-like check on its own: 0 ok, -1 with err naming the bad path. */
int	ag_config_check_perms(const char *path, struct ag_err *err);
void	ag_config_free(struct ag_config *cfg);

/*
 * Once a session knows who its caller is: every other identity's token
 * hashes wiped from this copy of the policy (they then have no token
 * here).  What the session forks copies its memory, and some of those
 * copies the account's other processes can read.
 */
void	ag_config_forget_tokens(struct ag_config *cfg, const char *keep);

const struct ag_profile *ag_config_profile(const struct ag_config *cfg, const char *name);
const struct ag_identity *ag_config_identity(const struct ag_config *cfg, const char *name);
const struct ag_upstream *ag_config_upstream(const struct ag_config *cfg, const char *name);
/* 1 when p's sessions get their identity's persistent /tmp (paths.tmp, whose
 * default is persistent in the developer tier and session in the strict). */
int	ag_profile_tmp_persistent(const struct ag_profile *p);
/* 1 when profile p lets its callers reach target (an upstream's name or "local"). */
int	ag_profile_may_target(const struct ag_profile *p, const char *target);
/* p's allow or deny rule whose id is the idlen bytes at id, or NULL. */
const struct ag_rule *ag_profile_rule(const struct ag_profile *p, const char *id,
	    size_t idlen);
/*
 * A decision's "rule" (ids joined by ','), each profile rule among them
 * shown by its label ("profiles.dev.allow[3] (git)"), joined by ", ", into
 * buf.  1 when
 * one was, 0 when buf says nothing more than rules.
 */
int	ag_config_rule_labels(const struct ag_config *cfg, const char *rules, char *buf,
	    size_t len);
/* p's targets as "local, web1, db1" (without "local" unless with_local) into
 * buf, cut at a whole name; "" for none.  Returns buf. */
const char *ag_profile_targets_text(const struct ag_profile *p, int with_local, char *buf,
	    size_t len);

/*
 * Network rules (config_net.c).  The rules a preset stands for (NULL for
 * an unknown name), every preset's name as "npm, pypi, ...", the
 * AG_NET_M_* bit of an HTTP method (0: not one a rule can name).
 * ag_net_split_hostport: "HOST[:PORT]", "[V6]:PORT" or a bare IPv6
 * address into host (brackets removed) and *port (0: none); 0, or -1 with
 * *why.
 */
const char *const *ag_net_preset_rules(const char *name);
const char *ag_net_preset_names(void);
unsigned ag_net_method_bit(const char *m, size_t n);
int	ag_net_split_hostport(const char *s, char *host, size_t hostsz, int *port,
	    const char **why);

/* Glob match as used for args, paths and env names (fnmatch(3) semantics, no FNM_PATHNAME). */
int	ag_glob_match(const char *pattern, const char *s);
int	ag_strlist_match(const struct ag_strlist *globs, const char *s);
int	ag_strlist_contains(const struct ag_strlist *l, const char *s);

/* Call fn for every key the policy file may hold, by section (the test that
 * holds agentgate.yaml(5) to the loader uses it). */
void	ag_config_each_key(void (*fn)(const char *section, const char *key, void *arg),
	    void *arg);

#endif
