/*
 * forcecommand.h - the gateway as sshd starts it (ForceCommand, a login
 * shell's -c, the REPL): the front end the command line's default
 * dispatch runs (cli/agentgate.c).
 */
#ifndef AG_FORCECOMMAND_H
#define AG_FORCECOMMAND_H

/* Run the session sshd handed over; the process's exit status. */
int	ag_cmd_session(int argc, char **argv);

#endif
