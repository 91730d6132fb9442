/*
 * repl.h - the REPL's line readers: with a terminal, libedit with a prompt,
 * in-memory history and PS2 continuation; without one, silently, line by
 * line.  Either way lines are joined while the parser says the input is
 * incomplete, and each complete command goes to ag_core_command().
 */
#ifndef AG_REPL_H
#define AG_REPL_H

#include "core/core.h"

/* Read and run commands until EOF, a bare exit, idle timeout or hangup.
 * Returns the session's exit status. */
int	ag_repl_loop(struct ag_core *core);

#endif
