/*
 * sshd.h - what `agentgate doctor` and `agentgate setup` ask of OpenSSH's
 * sshd: its effective configuration for one user (sshd -T), whether a
 * configuration loads (sshd -t), and the name of its PAM service.  sshd
 * is always run without a shell, with bounded output and a deadline.
 */
#ifndef AG_CLI_SSHD_H
#define AG_CLI_SSHD_H

#include <stddef.h>

#include "common/err.h"

#ifndef AG_SSHD
#define AG_SSHD "/usr/sbin/sshd"
#endif

/* sshd -T output, one "keyword value" per line (keywords lower case). */
struct ag_sshd_conf {
	char	*text;		/* NUL-separated lines */
	size_t	 len;
};

/*
 * sshd -T -C user=USER,... [-f FILE]: the configuration sshd would apply
 * to a connection of user from 127.0.0.1.  0 with out filled (free with
 * ag_sshd_conf_free), -1 with sshd's first line of complaint at err.
 */
int	ag_sshd_dump(const char *sshd, const char *user, const char *file,
	    struct ag_sshd_conf *out, struct ag_err *err);
void	ag_sshd_conf_free(struct ag_sshd_conf *c);

/* sshd -t [-f FILE]: 0 when the configuration loads; -1 with sshd's words at err. */
int	ag_sshd_test(const char *sshd, const char *file, struct ag_err *err);

/* The value of the idx-th line for keyword (0-based, lower case), or NULL. */
const char *ag_sshd_get_nth(const struct ag_sshd_conf *c, const char *kw, int idx);
const char *ag_sshd_get(const struct ag_sshd_conf *c, const char *kw);
int	ag_sshd_is(const struct ag_sshd_conf *c, const char *kw, const char *want);
/* A "Subsystem name ..." line is in effect. */
int	ag_sshd_has_subsystem(const struct ag_sshd_conf *c, const char *name);

/*
 * sshd's own PAM service: sshd names it after the program it was started
 * as (lower case), so "sshd" and /etc/pam.d/sshd for /usr/sbin/sshd.  The
 * lines of that file: auth/pamconf.h.
 */
void	ag_sshd_pam_service(const char *sshd, char *buf, size_t len);
void	ag_sshd_pam_path(const char *sshd, char *buf, size_t len);

#endif
