/*
 * terminal.h - the terminal side of a session (core-private): the PTY
 * handlers and the session's recording.
 *
 * With a terminal on stdin and stdout each command gets a PTY of its own
 * (exec/pty.h) and gateway.recordings asks for an asciicast of the whole
 * session (record/recording.h).  The prompt and the typed line are
 * libedit's output, not a command's, so they are written into the
 * recording here.  audit.required decides whether a session may go on
 * once its recording cannot be written.
 */
#ifndef AG_CORE_TERMINAL_H
#define AG_CORE_TERMINAL_H

#include <stddef.h>

#include "core/core.h"

/*
 * The PTY handlers, and the recording when gateway.recordings asks for
 * one.  -1 when the session must not start (a required recording that
 * cannot be created; message printed).
 */
int	ag_core_term_start(struct ag_core *core);

/*
 * The prompt and command line as the terminal showed them, into the
 * recording, and the same as a marker (recording.h) that output cannot
 * forge or erase.
 */
void	ag_core_term_echo(struct ag_core *core, const char *line, size_t len);

/* A refusal's message, as the caller saw it on stderr, and as a marker. */
void	ag_core_term_refusal(struct ag_core *core, const char *reason);

/* The recording failed during a command: close it; end the session if required. */
void	ag_core_term_failed(struct ag_core *core, const char *why, int *end_session);

/* Close the recording at the end of the session. */
void	ag_core_term_end(struct ag_core *core);

#endif
