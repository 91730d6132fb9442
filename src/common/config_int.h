/*
 * config_int.h - what the parts of the policy loader share: the YAML
 * tree with positions, the error and value readers that point at a node
 * (config_yaml.c), the schema walker that builds struct ag_config from
 * them (config.c: gateway, upstreams, the top level, names across files,
 * freeing and lookups), its sections in files of their own
 * (config_ident.c, config_profile.c, config_net.c), and reading the files
 * from disk (config_file.c).
 */
#ifndef AG_CONFIG_INT_H
#define AG_CONFIG_INT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/err.h"

#define MAX_SCALAR	(64 * 1024)	/* bytes per scalar */
#define MAX_NAME	64		/* profile, identity, user names */
#define MAX_DURATION	((long)INT_MAX)	/* seconds */

enum ytype { Y_SCALAR, Y_SEQ, Y_MAP };

struct ynode {
	enum ytype	  type;
	int		  line, col;	/* 1-based */
	int		  plain;	/* scalar written without quotes */
	char		 *s;		/* scalar text, NUL-terminated */
	size_t		  len;		/* scalar length (may contain NUL) */
	struct ynode	**kid;		/* list items; map: key, value, key, ... */
	size_t		  n, cap;
};

/* Deferred profile reference, resolved when all profiles are known. */
enum refkind { REF_DEFAULT, REF_IDENTITY, REF_USER, REF_UPSTREAM };

struct pref {
	enum refkind	 kind;
	size_t		 idx;
	const char	*name;		/* points into the config */
	const char	*file;		/* the config's: where it was written */
	int		 line, col;
};

struct ctx {
	const char	*name;		/* file name for messages: the one being read */
	unsigned	 flags;		/* AG_CONFIG_* */
	int		 root_line, root_col;	/* the main file's top mapping */
	struct ag_err	*err;
	struct ag_config *cfg;
	struct pref	*refs;
	size_t		 nrefs, caprefs;
	char		 qbuf[4][320];	/* rotating buffers for cf_quote(), cf_pos_text() */
	/* ag_config_load_replacing: this file's text in place of its own;
	 * ag_config_load_fragment: the fragment of this name (subst_frag)
	 * not read from disk but taken from subst_buf, named subst_shown */
	const char	*subst_name, *subst_buf, *subst_frag, *subst_shown;
	size_t		 subst_len;
	unsigned	 qi;
};

/* A mapping's value reader (cf_walk_map), a list item's check (cf_get_strlist). */
typedef int (*keyfn)(struct ctx *c, const char *key, const struct ynode *k,
    const struct ynode *v, void *arg);
typedef int (*itemfn)(struct ctx *c, const struct ynode *item, const char *key);

/*
 * The schema is tables of these, one per mapping: the key, how its value is
 * read and where it is stored (an offset into the section's struct), or a
 * reader of its own for what is more than a typed value.  One table drives
 * the walk, the "unknown key ... did you mean" message and
 * ag_config_each_key() (the documentation test): a key cannot be known
 * without a reader, nor read into another key's field.
 */
enum cf_type {
	CF_BOOL,	/* int */
	CF_STRING,	/* char *, any non-empty scalar */
	CF_ABS_PATH,	/* char * */
	CF_URL,		/* char *, http:// or https:// */
	CF_DURATION,	/* long, seconds */
	CF_SIZE,	/* long long, bytes */
	CF_COUNT,	/* long, 0 .. max */
	CF_STRLIST,	/* struct ag_strlist, each item checked by item */
	CF_ENUM,	/* an enum (int-sized), the index into names */
	CF_CUSTOM	/* read(c, key, k, v, arg) does it all */
};

struct cf_field {
	const char		*key;
	enum cf_type		 type;
	size_t			 off;
	long			 max;		/* CF_COUNT */
	itemfn			 item;		/* CF_STRLIST: NULL = any string */
	int			 allow_empty;	/* CF_STRLIST */
	const char *const	*names;		/* CF_ENUM */
	keyfn			 read;		/* CF_CUSTOM */
};

#define CF_FIELD(k, t, st, m)		{ (k), (t), offsetof(st, m), 0, NULL, 0, NULL, NULL }
#define CF_COUNT_OF(k, st, m, mx)	{ (k), CF_COUNT, offsetof(st, m), (mx), NULL, 0, NULL, NULL }
#define CF_LIST(k, st, m, chk, emp)	{ (k), CF_STRLIST, offsetof(st, m), 0, (chk), (emp), NULL, NULL }
#define CF_ENUM_OF(k, st, m, nm)	{ (k), CF_ENUM, offsetof(st, m), 0, NULL, 0, (nm), NULL }
#define CF_READ(k, fn)			{ (k), CF_CUSTOM, 0, 0, NULL, 0, NULL, (fn) }
#define CF_END				{ NULL, CF_CUSTOM, 0, 0, NULL, 0, NULL, NULL }

/*
 * Walk mapping m (the value of key) by the table: typed fields are stored
 * at base + off, custom readers get arg.  what and noun shape the messages
 * as for cf_walk_map().
 */
int	cf_walk_fields(struct ctx *c, const struct ynode *m, const char *key,
	    const char *what, const struct cf_field *fields, void *base, void *arg);

/* config.c: the walk's shared steps */
/* arr (n elements of size) with room for more; NULL with the error at v. */
void	*cf_grow(struct ctx *c, void *arr, size_t n, size_t more, size_t size,
	    const struct ynode *v);
/* v names a profile, resolved when every file is read: *out then points
 * at its name (kind and idx say whose reference it is for the message). */
int	cf_get_profile_ref(struct ctx *c, const struct ynode *v, const char *key,
	    enum refkind kind, size_t idx, char **out);
/* one load: a config for name, each file's text added (the main one first,
 * then fragments), the references resolved and the names checked at the
 * end; cf_cfg_done() returns it, or frees it and returns NULL unless ok */
struct ag_config *cf_cfg_new(struct ctx *c, const char *name, unsigned flags,
	    struct ag_err *err);
int	cf_cfg_add(struct ctx *c, const char *buf, size_t len, const char *name,
	    int fragment);
int	cf_cfg_finish(struct ctx *c);
struct ag_config *cf_cfg_done(struct ctx *c, int ok);

/* config_ident.c: `identities`, `users` */
extern const struct cf_field cf_identity_fields[];
extern const struct cf_field cf_prev_token_fields[];
int	cf_load_identities(struct ctx *c, const struct ynode *v);
int	cf_load_users(struct ctx *c, const struct ynode *v);
/* an item of a who-list: an account name, or what (e.g. "an identity") */
int	cf_check_who(struct ctx *c, const struct ynode *it, const char *key, const char *what);

/* config_profile.c: `profiles` */
extern const struct cf_field cf_profile_fields[];
extern const struct cf_field cf_rule_fields[];
extern const struct cf_field cf_feature_fields[];
extern const struct cf_field cf_paths_fields[];
extern const struct cf_field cf_transfer_fields[];
extern const struct cf_field cf_output_fields[];
extern const struct cf_field cf_env_fields[];
extern const struct cf_field cf_limits_fields[];
extern const struct cf_field cf_validator_fields[];
int	cf_load_profiles(struct ctx *c, const struct ynode *v);

/* config_net.c: a profile's `network`, gateway.egress */
extern const struct cf_field cf_network_fields[];
extern const struct cf_field cf_egress_fields[];
int	cf_network_finish(struct ctx *c, struct ag_profile *p, const struct ynode *at);
void	cf_network_free(struct ag_profile *p);
void	cf_egress_free(struct ag_egress_conf *e);

int	cf_build_tree(struct ctx *c, const char *buf, size_t len, struct ynode **rootp);
int	cf_check_abs_path(struct ctx *c, const struct ynode *v, const char *key);
int	cf_check_env_glob(struct ctx *c, const struct ynode *it, const char *key);
int	cf_check_env_name(struct ctx *c, const struct ynode *it, const char *key);
int	cf_check_option(struct ctx *c, const struct ynode *it, const char *key);
int	cf_check_policy_path(struct ctx *c, const struct ynode *it, const char *key);
int	cf_check_word(struct ctx *c, const struct ynode *it, const char *key);
int	cf_check_approver(struct ctx *c, const struct ynode *it, const char *key);
int	cf_close_enough(const char *typo, const char *cand, size_t *best);
int	cf_dupstr(struct ctx *c, const struct ynode *v, char **out);
int	cf_env_name_ok(const char *s);
int	cf_err_at(struct ctx *c, int line, int col, const char *fmt, ...) AG_PRINTF(4, 5);
int	cf_err_node(struct ctx *c, const struct ynode *y, const char *fmt,
	    ...) AG_PRINTF(3, 4);
int	cf_err_pos(struct ctx *c, const struct ag_pos *pos, const char *fmt,
	    ...) AG_PRINTF(3, 4);
int	cf_find_dup(struct ctx *c, const struct ynode *const *keys, size_t n,
	    size_t stride, const struct ynode **dup, const struct ynode **first);
int	cf_get_abs_path(struct ctx *c, const struct ynode *v, const char *key, char **out);
int	cf_get_bool(struct ctx *c, const struct ynode *v, const char *key, int *out);
int	cf_get_count(struct ctx *c, const struct ynode *v, const char *key, long max,
	    long *out);
int	cf_get_duration(struct ctx *c, const struct ynode *v, const char *key, long *out);
int	cf_get_enum(struct ctx *c, const struct ynode *v, const char *key,
	    const char *const *names, int *out);
int	cf_get_ports(struct ctx *c, const struct ynode *v, const char *key, int **out,
	    size_t *nout);
int	cf_get_size(struct ctx *c, const struct ynode *v, const char *key, long long *out);
int	cf_get_string(struct ctx *c, const struct ynode *v, const char *key, char **out);
int	cf_get_strlist(struct ctx *c, const struct ynode *v, const char *key,
	    struct ag_strlist *out, itemfn check, int allow_empty);
int	cf_get_url(struct ctx *c, const struct ynode *v, const char *key, char **out);
int	cf_is_null(const struct ynode *y);
const char *cf_kind_of(const struct ynode *y);
const struct ynode *cf_map_get(const struct ynode *m, const char *key);
int	cf_name_ok(const char *s, const char *extra);
int	cf_oom(struct ctx *c, const struct ynode *y);
void	cf_pos(struct ctx *c, struct ag_pos *pos, const struct ynode *y);
const char *cf_pos_text(struct ctx *c, const struct ag_pos *pos);
int	cf_parse_uint(const char *s, size_t n, unsigned long long max,
	    unsigned long long *out);
const char *cf_quote(struct ctx *c, const char *s);
int	cf_scalar_has_nul(const struct ynode *y);
void	cf_strlist_free(struct ag_strlist *l);
const char *cf_suggest(struct ctx *c, const char *typo, const char *const *cands);
int	cf_unhandled(struct ctx *c, const struct ynode *k, const char *key);
int	cf_walk_map(struct ctx *c, const struct ynode *m, const char *key,
	    const char *what, const char *noun, const char *const *known, keyfn fn,
	    void *arg);
int	cf_want_scalar(struct ctx *c, const struct ynode *v, const char *key,
	    const char *expect);
void	cf_ynode_free(struct ynode *y);

#endif
