/*
 * pamopts.h - the options pam_agentgate.so takes, one list for the module
 * (which refuses any other: a typo must not change who gets in) and for
 * agentgate doctor (which finds the typo before a login does).
 */
#ifndef AG_PAMOPTS_H
#define AG_PAMOPTS_H

/* 1 when arg is an option pam_agentgate.so knows, in a form it accepts. */
int	ag_pam_option_ok(const char *arg);

#endif
