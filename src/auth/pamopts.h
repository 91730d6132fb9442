/*
 * pamopts.h - the options pam_agentgate.so takes, one list for the module
 * (which refuses any other: a typo must not change who gets in) and for
 * agentgate doctor (which finds the typo before a login does).
 */
#ifndef AG_PAMOPTS_H
#define AG_PAMOPTS_H

/*
 * `bind` records a connection for the gateway only in sshd's own PAM stack:
 * the service named so, or by sshd_service=NAME (sshd names its service
 * after the program it runs as).  Anywhere else, the gateway's own stack
 * above all, the module refuses.
 */
#define AG_PAM_SSHD_SERVICE	"sshd"
#define AG_PAM_SSHD_SERVICE_OPT	"sshd_service="

/* 1 when arg is an option pam_agentgate.so knows, in a form it accepts. */
int	ag_pam_option_ok(const char *arg);

#endif
