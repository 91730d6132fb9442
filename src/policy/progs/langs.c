/*
 * langs.c - interpreters and their package tools: the variables that make
 * them load code at start-up or from elsewhere (PYTHONSTARTUP, PERL5OPT,
 * NODE_OPTIONS, JAVA_TOOL_OPTIONS, ...), refused as assignments and
 * dropped from captured environments (envsan.c).  The developer tier lets
 * through the few a test runner needs, never the ones that run code at
 * start-up (PYTHONSTARTUP).
 */
#include "agconfig.h"

#include <stddef.h>

#include "policy/prog.h"

static const char *const python_names[] = { "python", "python3", NULL };
static const char *const python_env[] = { "PYTHON*", NULL };
static const char *const python_dev[] = {
	"PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONHASHSEED",
	"PYTHONWARNINGS", NULL
};
const struct ag_prog ag_prog_python = {
	.names = python_names, .env_filter = python_env, .env_developer = python_dev,
};

static const char *const pip_names[] = { "pip", "pip3", NULL };
static const char *const pip_env[] = { "PIP_*", NULL };
const struct ag_prog ag_prog_pip = { .names = pip_names, .env_filter = pip_env };

static const char *const perl_names[] = { "perl", NULL };
static const char *const perl_env[] = { "PERL5*", "PERLLIB", "PERL_*", NULL };
const struct ag_prog ag_prog_perl = { .names = perl_names, .env_filter = perl_env };

static const char *const ruby_names[] = { "ruby", "gem", "bundle", NULL };
static const char *const ruby_env[] = { "RUBY*", "GEM_*", "BUNDLE_*", NULL };
const struct ag_prog ag_prog_ruby = { .names = ruby_names, .env_filter = ruby_env };

static const char *const node_names[] = { "node", "nodejs", NULL };
static const char *const node_env[] = { "NODE_OPTIONS", "NODE_PATH", NULL };
const struct ag_prog ag_prog_node = { .names = node_names, .env_filter = node_env };

static const char *const npm_names[] = { "npm", "npx", NULL };
static const char *const npm_env[] = { "NPM_CONFIG_*", "npm_config_*", NULL };
const struct ag_prog ag_prog_npm = { .names = npm_names, .env_filter = npm_env };

static const char *const java_names[] = { "java", NULL };
static const char *const java_env[] = {
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", NULL
};
const struct ag_prog ag_prog_java = { .names = java_names, .env_filter = java_env };

static const char *const lua_names[] = { "lua", NULL };
static const char *const lua_env[] = { "LUA_INIT*", "LUA_PATH*", "LUA_CPATH*", NULL };
const struct ag_prog ag_prog_lua = { .names = lua_names, .env_filter = lua_env };

static const char *const tclsh_names[] = { "tclsh", NULL };
static const char *const tclsh_env[] = { "TCLLIBPATH", NULL };
const struct ag_prog ag_prog_tclsh = { .names = tclsh_names, .env_filter = tclsh_env };

static const char *const tex_names[] = { "tex", "latex", "pdflatex", NULL };
static const char *const tex_env[] = { "TEXINPUTS", NULL };
const struct ag_prog ag_prog_tex = { .names = tex_names, .env_filter = tex_env };
