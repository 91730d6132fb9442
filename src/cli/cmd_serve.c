/*
 * cmd_serve.c - `agentgate serve`: the built-in SSH server (server.c).
 *
 *   agentgate serve [--config FILE] [--listen ADDR:PORT ...] [--foreground] [-e]
 *   agentgate serve --generate-host-key FILE
 */
#include "agconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "common/config.h"
#include "common/lastgood.h"
#include "common/proctitle.h"
#include "common/log.h"
#include "front/server.h"

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: agentgate serve [--config FILE] [--listen ADDR:PORT ...] [--foreground] [-e]\n"
	    "       agentgate serve --generate-host-key FILE\n"
	    "\n"
	    "  --config FILE            policy file (default %s)\n"
	    "  --listen ADDR:PORT       listen here instead of gateway.server.listen\n"
	    "                           (repeatable; \"[::1]:2222\" for IPv6)\n"
	    "  -D, --foreground         do not detach (for systemd and tests)\n"
	    "  -e                       log to stderr instead of syslog\n"
	    "  --generate-host-key FILE write a new ed25519 host key (FILE, FILE.pub)\n",
	    AG_DEFAULT_CONFIG);
}

int
ag_cmd_serve(int argc, char **argv)
{
	const char *config_path = AG_DEFAULT_CONFIG, *genkey = NULL;
	const char *listen[AG_SERVER_MAX_LISTEN];
	struct ag_server_opts o;
	struct ag_config *cfg;
	struct ag_err err;
	int i, rc;

	argv = ag_proctitle_init(argc, argv);
	memset(&o, 0, sizeof(o));
	ag_err_clear(&err);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--config") == 0 && i + 1 < argc)
			config_path = argv[++i];
		else if (strncmp(a, "--config=", 9) == 0)
			config_path = a + 9;
		else if ((strcmp(a, "--listen") == 0 && i + 1 < argc) ||
		    strncmp(a, "--listen=", 9) == 0) {
			if (o.nlisten == AG_SERVER_MAX_LISTEN) {
				fprintf(stderr, "agentgate: at most %d --listen addresses\n",
				    AG_SERVER_MAX_LISTEN);
				return 2;
			}
			listen[o.nlisten++] = a[8] == '=' ? a + 9 : argv[++i];
		} else if (strcmp(a, "--foreground") == 0 || strcmp(a, "-D") == 0)
			o.foreground = 1;
		else if (strcmp(a, "-e") == 0)
			o.log_stderr = 1;
		else if (strcmp(a, "--generate-host-key") == 0 && i + 1 < argc)
			genkey = argv[++i];
		else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "agentgate: serve: %s: %s\n", a, a[0] == '-' ?
			    "unknown option or missing argument" : "unexpected argument");
			usage(stderr);
			return 2;
		}
	}
	if (genkey != NULL) {
		if (ag_server_generate_host_key(genkey, &err) < 0) {
			ag_err_print(stderr, &err);
			return 1;
		}
		printf("wrote %s and %s.pub\n", genkey, genkey);
		return 0;
	}
	o.listen = o.nlisten > 0 ? listen : NULL;
	o.config_path = config_path;
	ag_log_open("agentgate", o.log_stderr, LOG_AUTHPRIV);
	if ((cfg = ag_config_load(config_path, 0, &err)) == NULL) {
		char msg[AG_ERR_MSG_MAX + 512];

		ag_err_print(stderr, &err);
		ag_log(LOG_ERR, "policy not loaded: %s", ag_err_format(&err, msg, sizeof(msg)));
		return 1;
	}
	if (ag_lastgood_save(config_path, &err) < 0)
		ag_log(LOG_WARNING, "not kept as the last good policy: %s", err.msg);
	rc = ag_server_run(cfg, &o, &err);
	if (rc < 0) {
		ag_err_print(stderr, &err);
		ag_log(LOG_ERR, "%s", err.msg);
	}
	ag_config_free(cfg);
	return rc < 0 ? 1 : 0;
}
