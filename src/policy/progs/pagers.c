/*
 * pagers.c - pagers and editors: programs other programs start for the
 * user (git's pager, man's, an editor for a commit message), and which can
 * themselves start a shell.  Their variables are refused as assignments
 * (envsan.c), and the sandbox defuses them in every command's environment
 * whatever the profile allows, since they are reached through others.
 */
#include "agconfig.h"

#include <stddef.h>

#include "policy/prog.h"

static const char *const man_names[] = { "man", NULL };
static const char *const man_env[] = { "MANPAGER", "MANOPT", NULL };
static const char *const man_set[] = { "MANPAGER=cat", NULL };
const struct ag_prog ag_prog_man = {
	.names = man_names, .env_filter = man_env, .env_set = man_set,
};

/* less runs LESSOPEN/LESSCLOSE preprocessors, an editor (v) and shell
 * commands (!); LESSSECURE turns the last two off */
static const char *const less_names[] = { "less", NULL };
static const char *const less_env[] = { "LESS*", NULL };
static const char *const less_drop[] = {
	"LESSOPEN", "LESSCLOSE", "LESSKEY*", "LESSEDIT", NULL
};
static const char *const less_set[] = { "LESSSECURE=1", NULL };
const struct ag_prog ag_prog_less = {
	.names = less_names, .env_filter = less_env, .env_drop = less_drop,
	.env_set = less_set,
};

static const char *const more_names[] = { "more", NULL };
static const char *const more_env[] = { "MORE", NULL };
const struct ag_prog ag_prog_more = { .names = more_names, .env_filter = more_env };

/* vim: no vimrc, no modelines, no shell escapes even if the shell were
 * reachable */
static const char *const vim_names[] = { "vim", "vi", "ex", NULL };
static const char *const vim_env[] = { "VIMINIT", "EXINIT", "MYVIMRC", NULL };
static const char *const vim_set[] = {
	"VIMINIT=set nomodeline secure", "EXINIT=set nomodeline secure", NULL
};
const struct ag_prog ag_prog_vim = {
	.names = vim_names, .env_filter = vim_env, .env_set = vim_set,
};

static const char *const emacs_names[] = { "emacs", NULL };
static const char *const emacs_env[] = { "EMACSLOADPATH", NULL };
const struct ag_prog ag_prog_emacs = { .names = emacs_names, .env_filter = emacs_env };
