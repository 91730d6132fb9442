/*
 * suggest.h - `agentgate policy suggest`: a profile drawn from audit
 * records.  Each command record of the selection is parsed and walked by
 * the policy itself (policy.h), so the programs, their subcommands and
 * the files a line writes are what the gateway would see; the program
 * registry (prog.h) says which of them run other programs or code.  The
 * result is YAML for an administrator to review: nothing here edits a
 * policy.
 */
#ifndef AG_POLICY_SUGGEST_H
#define AG_POLICY_SUGGEST_H

#include <stddef.h>

struct json_object;
struct ag_suggest;

struct ag_suggest_opts {
	const char	*identity;	/* records of this identity; NULL: any */
	const char	*account;	/* of this account ("user"); NULL: any */
	const char	*profile;	/* judged under this profile; NULL: any */
	long long	 since, until;	/* ms since the epoch, [since, until); -1: open */
	const char	*name;		/* the suggested profile's name */
	/* the account's home, for ~ and "outside the home"; NULL: the home
	 * of the first matching record's account (getpwnam) */
	const char	*home;
	const char	*source;	/* what was read, for the header comment */
};

/* NULL when out of memory. */
struct ag_suggest *ag_suggest_new(const struct ag_suggest_opts *o);
void	ag_suggest_free(struct ag_suggest *s);

/* One audit record, any event: those of the selection are counted.  0, or
 * -1 when out of memory. */
int	ag_suggest_record(struct ag_suggest *s, struct json_object *o);

/* How many records of the selection were seen (command, exec_denied, net). */
size_t	ag_suggest_matched(const struct ag_suggest *s);

/*
 * The suggestion, a `profiles:` mapping of one profile with comments
 * (counts, first and last use, "# RISK:" flags, what could not be drawn
 * from the records), malloc'd; NULL with why when out of memory or the
 * analysis profile does not load.
 */
char	*ag_suggest_yaml(struct ag_suggest *s, char *why, size_t whylen);

#endif
