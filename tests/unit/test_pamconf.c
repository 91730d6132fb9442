/*
 * test_pamconf.c - PAM service files as the doctor and setup read them
 * (auth/pamconf.h): what a gateway stack lets through when pam_agentgate.so
 * refuses, where sshd's bind line is, and what reads ~/.pam_environment
 * before it.
 */
#include "agconfig.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "auth/pamconf.h"
#include "testutil.h"

static char dir[] = "/tmp/test_pamconf.XXXXXX";

static const char *
service(const char *name, const char *text)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	write_file(path, text, 0644);
	return path;
}

/* auth phase: does a refusal of the module refuse, and the reason's words */
static const struct {
	const char	*name;
	const char	*text;
	int		 holds;
	const char	*why;		/* in the reason when it does not */
} stacks[] = {
	{ "shipped", "auth required pam_agentgate.so\nauth required pam_permit.so\n"
	    "account required pam_agentgate.so\naccount required pam_permit.so\n", 1, NULL },
	{ "requisite", "auth requisite pam_agentgate.so use_key\n", 1, NULL },
	{ "bracket_bad", "auth [success=ok default=bad] pam_agentgate.so\n"
	    "auth required pam_permit.so\n", 1, NULL },
	{ "bracket_die_jump_on_success", "auth [success=1 default=die] pam_agentgate.so\n"
	    "auth requisite pam_deny.so\nauth required pam_permit.so\n", 1, NULL },
	{ "required_before_is_harmless", "auth required pam_env.so\n"
	    "auth required pam_agentgate.so\n", 1, NULL },
	{ "sufficient_after_a_refusal", "auth required pam_agentgate.so\n"
	    "auth sufficient pam_permit.so\n", 1, NULL },
	{ "sufficient", "auth sufficient pam_agentgate.so\nauth required pam_permit.so\n",
	    0, "does not fail the stack" },
	{ "optional", "auth optional pam_agentgate.so\nauth required pam_permit.so\n",
	    0, "does not fail the stack" },
	{ "bracket_ignore", "auth [success=ok default=ignore] pam_agentgate.so\n"
	    "auth required pam_permit.so\n", 0, "does not fail the stack" },
	{ "bracket_one_failure_ok", "auth [success=ok auth_err=ok default=bad] "
	    "pam_agentgate.so\n", 0, "does not fail the stack" },
	{ "bracket_no_default", "auth [success=ok auth_err=bad] pam_agentgate.so\n",
	    0, "does not fail the stack" },
	{ "bracket_jump_on_failure", "auth [success=ok default=1] pam_agentgate.so\n"
	    "auth requisite pam_deny.so\n", 0, "does not fail the stack" },
	{ "dash", "-auth required pam_agentgate.so\n", 0, "does not load" },
	{ "permit_sufficient_before", "auth sufficient pam_permit.so\n"
	    "auth required pam_agentgate.so\n", 0, "can end the stack" },
	{ "jump_before", "auth [success=1 default=ignore] pam_succeed_if.so uid = 0\n"
	    "auth required pam_agentgate.so\n", 0, "jump past it" },
	{ "include_before", "auth include common-auth\nauth required pam_agentgate.so\n",
	    0, "does not follow" },
	{ "reset_after", "auth required pam_agentgate.so\n"
	    "auth [success=reset default=ignore] pam_permit.so\nauth required pam_permit.so\n",
	    0, "'reset'" },
	{ "absent", "account required pam_agentgate.so\nauth required pam_permit.so\n",
	    0, "no auth line" },
	{ "commented_out", "#auth required pam_agentgate.so\nauth required pam_permit.so\n",
	    0, "no auth line" },
	{ "case_and_comment", "AUTH required /x/pam_agentgate.so # the gateway\n", 1, NULL },
};

static void
judges_what_a_stack_lets_through(void **state)
{
	char why[1024];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		const char *p = service(stacks[i].name, stacks[i].text);
		int rc = ag_pam_refusal_holds(p, "auth", why, sizeof(why));

		if ((rc == 0) != stacks[i].holds ||
		    (stacks[i].why != NULL && strstr(why, stacks[i].why) == NULL))
			fail_msg("%s: holds=%d why=%s", stacks[i].name, rc == 0, why);
	}
}

static void
judges_each_phase_apart(void **state)
{
	char why[1024];
	const char *p = service("phases", "auth required pam_agentgate.so\n"
	    "account optional pam_agentgate.so\naccount required pam_permit.so\n");

	(void)state;
	assert_int_equal(ag_pam_refusal_holds(p, "auth", why, sizeof(why)), 0);
	assert_int_equal(ag_pam_refusal_holds(p, "account", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "phases:2: account optional pam_agentgate.so"));
}

/* Debian 12's /etc/pam.d/sshd, shortened: pam_env reads the user's file
 * near the end of the session stack, common-session is @included. */
static const char debian_sshd[] =
    "@include common-auth\n"
    "account    required     pam_nologin.so\n"
    "@include common-account\n"
    "session [success=ok ignore=ignore module_unknown=ignore default=bad]        "
    "pam_selinux.so close\n"
    "session    required     pam_loginuid.so\n"
    "@include common-session\n"
    "session    required     pam_env.so # [1]\n"
    "# In Debian 4.0 (etch), locale-related environment variables were moved to\n"
    "session    required     pam_env.so user_readenv=1 envfile=/etc/default/locale\n"
    "%s"
    "session [success=ok ignore=ignore module_unknown=ignore default=bad]        "
    "pam_selinux.so open\n";

static void
finds_user_env_before_bind(void **state)
{
	char text[2048], buf[512];
	struct ag_pam_bind b;
	const char *p;

	(void)state;
	service("common-session", "session required pam_unix.so\n"
	    "session optional pam_agentgate.so bind\n");
	snprintf(text, sizeof(text), debian_sshd, "");
	p = service("sshd", text);
	/* the included file's bind line is the @include's line of the service */
	assert_int_equal(ag_pam_find_bind(p, &b), 6);
	assert_int_equal(b.depth, 1);
	assert_string_equal(b.service, "sshd");
	assert_non_null(strstr(b.where, "common-session:2"));
	assert_int_equal(ag_pam_user_env_line(p, 6, buf, sizeof(buf)), 0);
	assert_int_equal(ag_pam_user_env_line(p, 0, buf, sizeof(buf)), 9);
	assert_non_null(strstr(buf, "sshd:9: session required pam_env.so user_readenv=1"));

	service("common-session", "session required pam_unix.so\n");
	snprintf(text, sizeof(text), debian_sshd,
	    "session optional pam_agentgate.so bind sshd_service=sshd-test\n");
	p = service("sshd", text);
	assert_int_equal(ag_pam_find_bind(p, &b), 10);
	assert_int_equal(b.depth, 0);
	assert_string_equal(b.service, "sshd-test");
	assert_int_equal(ag_pam_user_env_line(p, 10, buf, sizeof(buf)), 9);

	/* an auth-phase reader counts wherever it is */
	p = service("sshd-auth", "session optional pam_agentgate.so bind\n"
	    "auth optional pam_env.so user_readenv=1\n");
	assert_int_equal(ag_pam_user_env_line(p, 1, buf, sizeof(buf)), 2);
	p = service("sshd-zero", "session required pam_env.so user_readenv=0\n"
	    "session optional pam_agentgate.so bind\n");
	assert_int_equal(ag_pam_user_env_line(p, 2, buf, sizeof(buf)), 0);
}

static int
teardown(void **state)
{
	(void)state;
	return tu_rm_rf(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(judges_what_a_stack_lets_through),
		cmocka_unit_test(judges_each_phase_apart),
		cmocka_unit_test(finds_user_env_before_bind),
	};

	if (mkdtemp(dir) == NULL)
		return 1;
	return cmocka_run_group_tests(tests, NULL, teardown);
}
