/*
 * pam_client.c - runs the gateway's PAM front half (ag_pamauth_start) the
 * way front/forcecommand.c does, and prints what the stack decided, so the shell
 * tests can check the identity and profile pam_agentgate.so put in the PAM
 * environment (pamtester cannot show it).
 *
 *   pam_client --config FILE --user USER [--rhost ADDR] [--auth-info FILE]
 *              [--token TOKEN] [--env] [--interactive] [--log-stderr]
 *
 * --log-stderr: what the modules log to syslog goes to stderr as well, for
 * a test that cannot read this machine's syslog.
 *
 * Success: "identity=..." and "profile=..." lines (and with --env the PAM
 * environment), exit 0.  Refused: "denied stage=... pam=..." and
 * "message=..." (what the client would see), exit 1.  Usage or config
 * errors: exit 2.
 */
#include "agconfig.h"

#include <stdio.h>
#include <syslog.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/err.h"
#include "auth/pamauth.h"

/* What sshd would put in SSH_AUTH_INFO_0, from a file (at most 64 KiB). */
static char *
read_file(const char *path)
{
	FILE *fp;
	char *buf;
	size_t n;

	if ((fp = fopen(path, "r")) == NULL)
		return NULL;
	if ((buf = malloc(65537)) == NULL) {
		fclose(fp);
		return NULL;
	}
	n = fread(buf, 1, 65536, fp);
	fclose(fp);
	buf[n] = '\0';
	return buf;
}

int
main(int argc, char **argv)
{
	struct ag_pamauth_params p;
	struct ag_pamauth_failure fail;
	struct ag_pamauth *pa;
	struct ag_config *cfg;
	struct ag_err err;
	const char *config = NULL, *info_path = NULL;
	char *info = NULL, **env, **e;
	int i, show_env = 0, interactive = 0;

	memset(&p, 0, sizeof(p));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--env") == 0) {
			show_env = 1;
			continue;
		}
		if (strcmp(a, "--log-stderr") == 0) {
			openlog("pam_client", LOG_PERROR, LOG_AUTHPRIV);
			continue;
		}
		if (strcmp(a, "--interactive") == 0) {
			interactive = 1;
			continue;
		}
		if (v == NULL) {
			fprintf(stderr, "pam_client: %s needs a value\n", a);
			return 2;
		}
		i++;
		if (strcmp(a, "--config") == 0)
			config = v;
		else if (strcmp(a, "--user") == 0)
			p.user = v;
		else if (strcmp(a, "--rhost") == 0)
			p.rhost = v;
		else if (strcmp(a, "--auth-info") == 0)
			info_path = v;
		else if (strcmp(a, "--token") == 0)
			p.token = v;
		else {
			fprintf(stderr, "pam_client: unknown option %s\n", a);
			return 2;
		}
	}
	if (config == NULL || p.user == NULL) {
		fprintf(stderr, "usage: pam_client --config FILE --user USER [--rhost ADDR] "
		    "[--auth-info FILE] [--token TOKEN] [--env] [--interactive] [--log-stderr]\n");
		return 2;
	}
	ag_err_clear(&err);
	if ((cfg = ag_config_load(config, 0, &err)) == NULL) {
		ag_err_print(stderr, &err);
		return 2;
	}
	if (info_path != NULL && (info = read_file(info_path)) == NULL) {
		printf("denied stage=auth_info pam=-\nmessage=cannot read %s\n", info_path);
		ag_config_free(cfg);
		return 1;
	}
	p.auth_info = info;
	p.interactive = interactive;
	pa = ag_pamauth_start(cfg, &p, &err, &fail);
	free(info);
	if (pa == NULL) {
		printf("denied stage=%s pam=%s\nmessage=%s\n", fail.stage, fail.pam_error,
		    err.msg);
		ag_config_free(cfg);
		return 1;
	}
	printf("identity=%s\nprofile=%s\n",
	    ag_pamauth_identity(pa) ? ag_pamauth_identity(pa) : "",
	    ag_pamauth_profile(pa) ? ag_pamauth_profile(pa) : "");
	if (show_env && (env = ag_pamauth_envlist(pa)) != NULL) {
		for (e = env; *e != NULL; e++) {
			printf("env %s\n", *e);
			free(*e);
		}
		free(env);
	}
	ag_pamauth_end(pa);
	ag_config_free(cfg);
	return 0;
}
