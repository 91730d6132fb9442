/*
 * test_fragments.c - the policy file's agentgate.d: fragments are read in
 * byte order of their names after the policy file, may add identities,
 * users, profiles and upstreams but nothing gateway-wide, name nothing
 * twice across files, report errors at their own FILE:LINE:COL, pass the
 * same permission checks, and refer to each other's profiles freely.
 */
#include "agconfig.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/config.h"
#include "testutil.h"

#define TOK1	"6894ddb902c671b97aae683c7e776d4925e275610ff086faa6d00dd2bfe20e7a"
#define TOK2	"1111111111111111111111111111111111111111111111111111111111111111"
#define TOK3	"2222222222222222222222222222222222222222222222222222222222222222"
#define ED_KEY	"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINrXyg89u0RTKzCfG5oaLlwMiB2wWgZ5XtFHefEtE2SD"

/* The identity 'a' is at 6:5, the profile 'r' at 3:3, the user 'alice' at 9:3. */
static const char main_yaml[] =
    "version: 1\n"
    "profiles:\n"
    "  r:\n"
    "    allow: [ls]\n"
    "identities:\n"
    "  - name: a\n"
    "    profile: r\n"
    "    token_sha256: " TOK1 "\n"
    "users:\n"
    "  alice: r\n";

struct tree {
	char	dir[256];
	char	file[300];	/* dir/agentgate.yaml */
	char	frag[300];	/* dir/agentgate.d */
};

static void
put_frag(const struct tree *t, const char *name, const char *text)
{
	char p[400];

	snprintf(p, sizeof(p), "%s/%s", t->frag, name);
	write_file(p, text, 0644);
}

static int
setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));

	if (t == NULL || tu_tmpdir(t->dir, sizeof(t->dir), "frag") < 0)
		return -1;
	snprintf(t->file, sizeof(t->file), "%s/agentgate.yaml", t->dir);
	snprintf(t->frag, sizeof(t->frag), "%s/agentgate.d", t->dir);
	write_file(t->file, main_yaml, 0644);
	if (mkdir(t->frag, 0755) < 0)
		return -1;
	*state = t;
	return 0;
}

static int
teardown(void **state)
{
	struct tree *t = *state;

	chmod(t->frag, 0755);
	(void)tu_rm_rf(t->dir);
	free(t);
	return 0;
}

static struct ag_config *
load_ok(const struct tree *t, unsigned flags)
{
	struct ag_err err;
	struct ag_config *cfg = ag_config_load(t->file, flags, &err);

	if (cfg == NULL)
		fail_msg("%s:%d:%d: %s", err.file, err.line, err.col, err.msg);
	return cfg;
}

/* The load fails in fragment name at line:col with msg in the message. */
static void
load_fails_at(const struct tree *t, const char *name, int line, int col, const char *msg)
{
	struct ag_err err;
	char want[400];

	assert_null(ag_config_load(t->file, AG_CONFIG_NO_PERMCHECK, &err));
	snprintf(want, sizeof(want), "%s/%s", t->frag, name);
	if (strcmp(err.file, want) != 0 || err.line != line || err.col != col ||
	    strstr(err.msg, msg) == NULL)
		fail_msg("got %s:%d:%d: %s\nwant %s:%d:%d: ...%s...", err.file, err.line,
		    err.col, err.msg, want, line, col, msg);
}

static void
merges_in_byte_order_of_names(void **state)
{
	struct tree *t = *state;
	struct ag_config *cfg;
	char want[400];

	put_frag(t, "20-b.yaml", "identities:\n  - {name: b, profile: r, token_sha256: "
	    TOK2 "}\n");
	put_frag(t, "10-c.yaml", "identities:\n  - {name: c, profile: p2, token_sha256: "
	    TOK3 "}\nprofiles:\n  p2: {allow: [cat]}\nusers:\n  '%staff': p2\n");
	put_frag(t, "Z-empty.yaml", "# nothing yet\n");
	cfg = load_ok(t, AG_CONFIG_NO_PERMCHECK);
	assert_true(cfg->has_fragdir);
	assert_int_equal(cfg->files.n, 4);
	/* byte order: digits before capitals */
	snprintf(want, sizeof(want), "%s/10-c.yaml", t->frag);
	assert_string_equal(cfg->files.v[1], want);
	assert_int_equal(cfg->nidentities, 3);
	assert_string_equal(cfg->identities[0].name, "a");
	assert_string_equal(cfg->identities[1].name, "c");
	assert_string_equal(cfg->identities[2].name, "b");
	/* where each was written */
	assert_string_equal(cfg->identities[0].pos.file, t->file);
	assert_string_equal(cfg->identities[1].pos.file, want);
	assert_int_equal(cfg->identities[1].pos.line, 2);
	assert_int_equal(cfg->nprofiles, 2);
	assert_int_equal(cfg->nusers, 2);
	assert_true(cfg->users[1].is_group);
	assert_ptr_equal(cfg->users[1].profile, ag_config_profile(cfg, "p2"));
	ag_config_free(cfg);
}

static void
duplicate_names_across_files_say_both_places(void **state)
{
	struct tree *t = *state;
	char want[400];

	snprintf(want, sizeof(want), "first defined at %s:6:5", t->file);
	put_frag(t, "10-x.yaml", "# a second a\nidentities:\n  - name: a\n    profile: r\n"
	    "    token_sha256: " TOK2 "\n");
	load_fails_at(t, "10-x.yaml", 3, 5, want);
	load_fails_at(t, "10-x.yaml", 3, 5, "duplicate identity 'a'");

	snprintf(want, sizeof(want), "duplicate profile 'r' (first defined at %s:3:3)",
	    t->file);
	put_frag(t, "10-x.yaml", "profiles:\n  r: {allow: [id]}\n");
	load_fails_at(t, "10-x.yaml", 2, 3, want);

	snprintf(want, sizeof(want), "duplicate user 'alice' (first defined at %s:10:3)",
	    t->file);
	put_frag(t, "10-x.yaml", "users:\n  alice: r\n");
	load_fails_at(t, "10-x.yaml", 2, 3, want);

	/* between two fragments: the later one is the error */
	snprintf(want, sizeof(want), "duplicate profile 'q' (first defined at %s/10-x.yaml:"
	    "2:3)", t->frag);
	put_frag(t, "10-x.yaml", "profiles:\n  q: {allow: [id]}\n");
	put_frag(t, "20-y.yaml", "\n\nprofiles:\n  q: {allow: [id]}\n");
	load_fails_at(t, "20-y.yaml", 4, 3, want);

	/* a user and a group of the same name are two names */
	put_frag(t, "20-y.yaml", "users:\n  '%alice': r\n");
	ag_config_free(load_ok(t, AG_CONFIG_NO_PERMCHECK));
}

static void
key_of_another_files_identity_is_refused(void **state)
{
	struct tree *t = *state;
	char want[400];

	put_frag(t, "10-k.yaml", "identities:\n  - {name: k1, profile: r, keys: [\"" ED_KEY
	    "\"]}\n");
	put_frag(t, "20-k.yaml", "identities:\n  - name: k2\n    profile: r\n    keys: [\""
	    ED_KEY "\"]\n");
	snprintf(want, sizeof(want), "has a key of identity 'k1' (at %s/10-k.yaml:2:5)",
	    t->frag);
	load_fails_at(t, "20-k.yaml", 4, 11, want);
}

static void
refuses_gateway_wide_keys_in_a_fragment(void **state)
{
	struct tree *t = *state;

	put_frag(t, "50-gw.yaml", "identities: []\ngateway:\n  sandbox: off\n");
	load_fails_at(t, "50-gw.yaml", 2, 1, "'gateway' may not be set in a fragment");
	put_frag(t, "50-gw.yaml", "version: 1\n");
	load_fails_at(t, "50-gw.yaml", 1, 1, "'version' may not be set in a fragment");
	put_frag(t, "50-gw.yaml", "profile:\n  x: {allow: [ls]}\n");
	load_fails_at(t, "50-gw.yaml", 1, 1, "did you mean 'profiles'?");
	put_frag(t, "50-gw.yaml", "- just a list\n");
	load_fails_at(t, "50-gw.yaml", 1, 1, "expected a mapping at the top level");
}

static void
errors_point_into_the_fragment(void **state)
{
	struct tree *t = *state;

	put_frag(t, "30-bad.yaml", "# agent keys\nidentities:\n  - name: z\n"
	    "    profile: r\n    tokn_sha256: " TOK2 "\n");
	load_fails_at(t, "30-bad.yaml", 5, 5, "unknown key 'tokn_sha256'");
	put_frag(t, "30-bad.yaml", "profiles:\n  z:\n    allow: [ls\n");
	load_fails_at(t, "30-bad.yaml", 4, 1, "YAML syntax error");
	/* resolved after the merge, reported where the reference is */
	put_frag(t, "30-bad.yaml", "\nidentities:\n  - name: z\n    profile: nope\n"
	    "    token_sha256: " TOK2 "\n");
	load_fails_at(t, "30-bad.yaml", 4, 14, "refers to unknown profile 'nope'");
}

static void
profiles_are_shared_across_files(void **state)
{
	struct tree *t = *state;
	static const char main2[] =
	    "version: 1\n"
	    "gateway:\n"
	    "  default_profile: dev\n"
	    "identities:\n"
	    "  - {name: a, profile: dev, token_sha256: " TOK1 "}\n";
	struct ag_config *cfg;
	struct ag_err err;

	write_file(t->file, main2, 0644);
	/* nothing defines 'dev' yet */
	assert_null(ag_config_load(t->file, AG_CONFIG_NO_PERMCHECK, &err));
	assert_non_null(strstr(err.msg, "'profiles' is missing"));
	put_frag(t, "10-prof.yaml", "profiles:\n  dev: {allow: [make]}\n  ro: {allow: [ls]}\n");
	put_frag(t, "20-ids.yaml", "identities:\n  - {name: b, profile: ro, token_sha256: "
	    TOK2 "}\n");
	cfg = load_ok(t, AG_CONFIG_NO_PERMCHECK);
	assert_ptr_equal(cfg->gw.default_profile, ag_config_profile(cfg, "dev"));
	assert_ptr_equal(cfg->identities[0].profile, ag_config_profile(cfg, "dev"));
	assert_ptr_equal(cfg->identities[1].profile, ag_config_profile(cfg, "ro"));
	ag_config_free(cfg);
	/* the last good copy's way: the policy file alone, for its gateway */
	cfg = load_ok(t, AG_CONFIG_NO_PERMCHECK | AG_CONFIG_GATEWAY_ONLY);
	assert_int_equal(cfg->files.n, 1);
	assert_int_equal(cfg->nprofiles, 0);
	assert_null(cfg->gw.default_profile);
	ag_config_free(cfg);
}

static void
ignores_other_names_and_a_missing_directory(void **state)
{
	struct tree *t = *state;
	struct ag_config *cfg;
	static const char junk[] = "gateway: {sandbox: off}\n: : :\n";
	char p[1024];

	put_frag(t, "x.yml", junk);
	put_frag(t, ".hidden.yaml", junk);
	put_frag(t, ".yaml", junk);
	put_frag(t, "b.yaml~", junk);
	put_frag(t, "c.yaml.dpkg-old", junk);
	put_frag(t, "README", junk);
	snprintf(p, sizeof(p), "%s/dir.yaml.d", t->frag);
	assert_int_equal(mkdir(p, 0755), 0);
	cfg = load_ok(t, AG_CONFIG_NO_PERMCHECK);
	assert_true(cfg->has_fragdir);
	assert_int_equal(cfg->files.n, 1);
	ag_config_free(cfg);
	/* no directory: no fragments, no error */
	snprintf(p, sizeof(p), "mv %s %s.away", t->frag, t->frag);
	assert_int_equal(system(p), 0);
	cfg = load_ok(t, AG_CONFIG_NO_PERMCHECK);
	assert_false(cfg->has_fragdir);
	ag_config_free(cfg);
	snprintf(p, sizeof(p), "mv %s.away %s", t->frag, t->frag);
	assert_int_equal(system(p), 0);
}

static int
tmp_is_sticky(void)
{
	struct stat st;

	return stat("/tmp", &st) == 0 && st.st_uid == 0 && (st.st_mode & S_ISVTX);
}

static void
unsafe_fragments_are_refused(void **state)
{
	struct tree *t = *state;
	struct ag_config *cfg;
	struct ag_err err;
	char frag[400], want[1024];

	if (!tmp_is_sticky())
		skip();
	put_frag(t, "10-ok.yaml", "identities:\n  - {name: b, profile: r, token_sha256: "
	    TOK2 "}\n");
	cfg = load_ok(t, 0);
	assert_int_equal(cfg->nidentities, 2);
	ag_config_free(cfg);

	snprintf(frag, sizeof(frag), "%s/10-ok.yaml", t->frag);
	assert_int_equal(chmod(frag, 0664), 0);
	assert_null(ag_config_load(t->file, 0, &err));
	snprintf(want, sizeof(want), "unsafe: file %s is writable by its group (mode 0664); "
	    "fix: chmod go-w %s", frag, frag);
	assert_string_equal(err.msg, want);
	assert_string_equal(err.file, frag);
	assert_int_equal(chmod(frag, 0644), 0);

	/* the directory, even when it holds no fragment yet */
	assert_int_equal(unlink(frag), 0);
	assert_int_equal(chmod(t->frag, 0777), 0);
	assert_null(ag_config_load(t->file, 0, &err));
	snprintf(want, sizeof(want), "unsafe: directory %s is writable by everyone (mode "
	    "0777); fix: chmod go-w %s", t->frag, t->frag);
	assert_string_equal(err.msg, want);
	assert_int_equal(chmod(t->frag, 0755), 0);

	/* a symlinked fragment is judged by what it points to */
	snprintf(want, sizeof(want), "%s/elsewhere.yaml", t->dir);
	write_file(want, "identities:\n  - {name: s, profile: r, token_sha256: " TOK2 "}\n", 0666);
	assert_int_equal(symlink(want, frag), 0);
	assert_null(ag_config_load(t->file, 0, &err));
	assert_non_null(strstr(err.msg, "elsewhere.yaml is writable by everyone"));
	assert_string_equal(err.file, frag);
	assert_int_equal(chmod(want, 0644), 0);
	cfg = load_ok(t, 0);
	assert_non_null(ag_config_identity(cfg, "s"));
	ag_config_free(cfg);

	/* a directory in its place is not a policy file */
	assert_int_equal(unlink(frag), 0);
	assert_int_equal(mkdir(frag, 0755), 0);
	assert_null(ag_config_load(t->file, 0, &err));
	assert_non_null(strstr(err.msg, "is not a regular file"));
}

/*
 * agentgate check --fragment: a candidate is judged as if installed under
 * its name, replacing one of that name or added in name order, with its
 * errors at its own file's name; what is installed is left as it is.
 */
static void
candidate_fragment_loads_as_if_installed(void **state)
{
	struct tree *t = *state;
	struct ag_config *cfg;
	struct ag_err err;
	static const char good[] = "identities:\n  - {name: c, profile: r, token_sha256: "
	    TOK3 "}\n";
	static const char bad[] = "# ci\nidentities:\n  - name: c\n    profile: nope\n"
	    "    token_sha256: " TOK3 "\n";

	put_frag(t, "50-ci.yaml", "identities:\n  - {name: old, profile: r, token_sha256: "
	    TOK2 "}\n");
	/* replacing the installed fragment of that name: its identity is gone */
	cfg = ag_config_load_fragment(t->file, "50-ci.yaml", "/tmp/ansible.tmp", good,
	    strlen(good), &err);
	assert_non_null(cfg);
	assert_non_null(ag_config_identity(cfg, "c"));
	assert_null(ag_config_identity(cfg, "old"));
	assert_int_equal(cfg->files.n, 2);
	ag_config_free(cfg);
	/* added under a new name, beside the installed one */
	cfg = ag_config_load_fragment(t->file, "60-new.yaml", "cand.yaml", good, strlen(good),
	    &err);
	assert_non_null(cfg);
	assert_non_null(ag_config_identity(cfg, "c"));
	assert_non_null(ag_config_identity(cfg, "old"));
	assert_int_equal(cfg->files.n, 3);
	ag_config_free(cfg);
	/* errors at the candidate's own name, line and column */
	assert_null(ag_config_load_fragment(t->file, "50-ci.yaml", "/tmp/ansible.tmp", bad,
	    strlen(bad), &err));
	assert_string_equal(err.file, "/tmp/ansible.tmp");
	assert_int_equal(err.line, 4);
	assert_int_equal(err.col, 14);
	assert_non_null(strstr(err.msg, "refers to unknown profile 'nope'"));
	/* in a fragment, what only the policy file may set */
	assert_null(ag_config_load_fragment(t->file, "70-gw.yaml", "gw.yaml",
	    "gateway:\n  sandbox: off\n", 24, &err));
	assert_string_equal(err.file, "gw.yaml");
	assert_non_null(strstr(err.msg, "'gateway' may not be set in a fragment"));
	/* a name the loader would skip is said, not silently accepted */
	assert_null(ag_config_load_fragment(t->file, "tmpXYZ", "tmpXYZ", good, strlen(good),
	    &err));
	assert_non_null(strstr(err.msg, "ends in .yaml"));
	assert_null(ag_config_load_fragment(t->file, "../x.yaml", "x", good, strlen(good),
	    &err));
	/* without agentgate.d yet: the candidate is its first fragment */
	{
		char p[400];

		snprintf(p, sizeof(p), "%s/50-ci.yaml", t->frag);
		assert_int_equal(unlink(p), 0);
		assert_int_equal(rmdir(t->frag), 0);
	}
	cfg = ag_config_load_fragment(t->file, "50-ci.yaml", "c.yaml", good, strlen(good),
	    &err);
	assert_non_null(cfg);
	assert_non_null(ag_config_identity(cfg, "c"));
	ag_config_free(cfg);
	assert_int_equal(mkdir(t->frag, 0755), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(merges_in_byte_order_of_names, setup, teardown),
		cmocka_unit_test_setup_teardown(duplicate_names_across_files_say_both_places,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(key_of_another_files_identity_is_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(refuses_gateway_wide_keys_in_a_fragment, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(errors_point_into_the_fragment, setup, teardown),
		cmocka_unit_test_setup_teardown(profiles_are_shared_across_files, setup, teardown),
		cmocka_unit_test_setup_teardown(ignores_other_names_and_a_missing_directory, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(unsafe_fragments_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(candidate_fragment_loads_as_if_installed, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
