/*
 * sshd.h - what `agentgate doctor` and `agentgate setup` ask of OpenSSH's
 * sshd: its effective configuration for one user (sshd -T), whether a
 * configuration loads (sshd -t), and the pam_agentgate.so lines of its PAM
 * service.  sshd is always run without a shell, with bounded output and a
 * deadline.
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
 * sshd's own PAM service file: sshd names its service after the program
 * it was started as (lower case), so /etc/pam.d/sshd for /usr/sbin/sshd.
 */
void	ag_sshd_pam_path(const char *sshd, char *buf, size_t len);

/*
 * fn(type, option, arg) for each option of each pam_agentgate.so line of
 * the PAM service file at path, and of the files it @includes (one level:
 * as Debian's /etc/pam.d/sshd does); option is NULL once per line with
 * none.  Stops when fn returns nonzero, and returns that.
 */
int	ag_pam_each_agentgate_option(const char *path,
	    int (*fn)(const char *type, const char *option, void *arg), void *arg);
/* The service has a "session ... pam_agentgate.so bind" line. */
int	ag_pam_has_bind(const char *path);

#endif
