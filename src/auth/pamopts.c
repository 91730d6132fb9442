/*
 * pamopts.c - the options of pam_agentgate.so (pamopts.h).
 */
#include "agconfig.h"

#include <string.h>

#include "auth/pamopts.h"

int
ag_pam_option_ok(const char *arg)
{
	static const char *const flags[] = {
		"debug", "use_key", "use_token", "try_first_pass", "use_first_pass",
		"allow_unidentified", "bind",
	};
	size_t i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (strcmp(arg, flags[i]) == 0)
			return 1;
	if (strncmp(arg, "config=", 7) == 0)
		return arg[7] == '/';
	if (strncmp(arg, "allow_unidentified=", 19) == 0)
		return arg[19] != '\0';
	if (strncmp(arg, AG_PAM_SSHD_SERVICE_OPT, sizeof(AG_PAM_SSHD_SERVICE_OPT) - 1) == 0)
		return arg[sizeof(AG_PAM_SSHD_SERVICE_OPT) - 1] != '\0';
	return 0;
}
