/*
 * server_int.h - what the parts of the built-in SSH server share (the
 * public interface is server.h): server.c is the listener (host keys,
 * listening sockets, the accept loop, max_connections/max_startups, reload),
 * server_auth.c one connection's authentication (the method chains,
 * authorized keys, PAM, the drop to the user) and server_conn.c the rest of
 * a connection's life (channels, their requests, session processes, the
 * relay loop).
 */
#ifndef AG_SERVER_INT_H
#define AG_SERVER_INT_H

#include <signal.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "common/sshlib.h"

#include "auth/pamauth.h"
#include "common/config.h"
#include "core/core.h"
#include "record/audit.h"
#include "front/frame.h"

#define ADDR_MAX	(INET6_ADDRSTRLEN + 1)
#define CLIENT_MAX	(ADDR_MAX + 16)
#define INBUF_MAX	65536		/* client → command stdin, per channel */
#define RELAY_CHUNK	32768		/* command output → channel, per read */
#define FAIL_DELAY_MS	400		/* after a failed password / PAM step */
#define MAX_GROUPS	1024

/* ---- one connection: state ------------------------------------------------- */

struct conn;
struct chan;

/* What an fd callback needs to know: whose output, which stream. */
struct fdref {
	struct chan	*ch;
	int		 err;
};

struct chan {
	struct conn		*c;
	ssh_channel		 ch;
	struct ssh_channel_callbacks_struct cb;
	int			 used;
	/* requests */
	int			 pty;
	int			 pty_master, pty_slave;
	char			 tty_name[64];
	char			 term[64];
	struct winsize		 ws;
	char			*env_names[AG_SERVER_MAX_ENV];
	char			*env_vals[AG_SERVER_MAX_ENV];
	size_t			 nenv;
	int			 token_in_env;	/* AGENTGATE_TOKEN sent: refuse the session */
	/* the session process */
	pid_t			 pid;
	int			 exited, wstatus;
	int			 in_fd, out_fd, err_fd, st_fd;	/* our ends; -1 = closed */
	int			 out_reg, err_reg;		/* in the ssh_event */
	int			 out_eof, err_eof;
	int			 client_eof, client_closed, finished;
	char			 inbuf[INBUF_MAX];
	size_t			 inlen;
	int			 stalled;	/* libssh holds input we did not take */
	unsigned long		 ncommands;
	struct fdref		 ref_out, ref_err;
};

struct conn {
	struct ag_config		*cfg;
	const struct ag_server_conf	*sc;
	ssh_session			 s;
	int				 fd;
	char				 caddr[ADDR_MAX];
	int				 cport;
	char				 laddr[ADDR_MAX];
	int				 lport;
	char				 client[CLIENT_MAX];
	/* authentication */
	char				 user[64];
	const char			*fail_class;	/* the last PAM refusal's reason_class */
	char				 target[72];	/* "user:TARGET" named it (bastion), or "" */
	int				 have_user, user_ok;
	uid_t				 uid;
	gid_t				 gid;
	char				*home;
	int				 done[AG_AUTH_MAX_STEPS];
	size_t				 ndone;
	long				 tries;
	char				*auth_info;
	struct ag_pamauth		*pam;
	const struct ag_profile		*profile;
	char				*identity;
	ssh_message			 kbd_msg;	/* where the next kbd-int prompt goes */
	const char			*password;	/* during a password attempt */
	/* session */
	struct ag_audit			*preaudit;	/* records before authentication */
	struct ag_frame			 frame;		/* the session's audit and the rest */
	struct ssh_server_callbacks_struct scb;
	ssh_event			 ev;
	struct chan			*chans;
	size_t				 nchans;
	unsigned long			 ncommands;
};

/* server.c */
extern volatile sig_atomic_t srv_got_stop;	/* a signal asked this process to end */
/* A connection's: the listener read the policy again (SIGHUP) since it began,
 * so each new channel is judged against the policy file (SIGUSR2). */
extern volatile sig_atomic_t srv_policy_reloaded;
/* The root parent of an authenticated connection: its child, which serves
 * the channels, gets the SIGUSR2 in turn. */
extern volatile sig_atomic_t srv_forward_to;
extern int srv_authed_fd;	/* a connection's line to the listener (max_startups) */
long	srv_conf_long(long v, long def);
void	srv_sleep_ms(long ms);
void	srv_format_client(const struct sockaddr_storage *ss, char *addr, size_t alen,
	    int *port, char *client, size_t clen);
void	srv_default_signals(void);

/* server_auth.c */
int	srv_auth_phase(struct conn *c);
int	srv_drop_privileges(struct conn *c, struct ag_err *err);

/* server_conn.c */
void	srv_audit_event(struct conn *c, const char *event, const char *request,
	    const char *decision, const char *reason);
/* An auth_failure record with its reason_class (NULL: none known). */
void	srv_audit_auth_failure(struct conn *c, const char *method, const char *reason,
	    const char *reason_class);
int	srv_connection_main(struct ag_config *cfg, ssh_bind bind, int fd,
	    const struct sockaddr_storage *peer);

#endif
