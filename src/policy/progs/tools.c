/*
 * tools.c - programs driven by a subcommand (docker ps, kubectl get,
 * systemctl status, apt install): the options that
 * may come before the subcommand, so that a rule's subcommand list is
 * checked against the right word, and the ones among them that change
 * which configuration the tool reads (refused unless allow_options).
 * And other tools whose environment variables make them run other
 * programs or read other configuration (envsan.c refuses them).
 */
#include "agconfig.h"

#include <stddef.h>

#include "policy/prog.h"

static const struct ag_gopt docker_opts[] = {
	{ "-H", AG_GO_VAL }, { "--host", AG_GO_VAL }, { "-c", AG_GO_VAL },
	{ "--context", AG_GO_VAL }, { "--config", AG_GO_VAL | AG_GO_RISKY },
	{ "-l", AG_GO_VAL }, { "--log-level", AG_GO_VAL },
	{ NULL, 0 }
};
static const char *const docker_names[] = { "docker", "podman", NULL };
const struct ag_prog ag_prog_docker = { .names = docker_names, .global_opts = docker_opts };

static const struct ag_gopt kubectl_opts[] = {
	{ "-n", AG_GO_VAL }, { "--namespace", AG_GO_VAL }, { "--context", AG_GO_VAL },
	{ "--kubeconfig", AG_GO_VAL | AG_GO_RISKY }, { "-s", AG_GO_VAL },
	{ "--server", AG_GO_VAL }, { "--cluster", AG_GO_VAL }, { "--user", AG_GO_VAL },
	{ NULL, 0 }
};
static const char *const kubectl_names[] = { "kubectl", NULL };
const struct ag_prog ag_prog_kubectl = { .names = kubectl_names, .global_opts = kubectl_opts };

static const struct ag_gopt systemctl_opts[] = {
	{ "-H", AG_GO_VAL }, { "--host", AG_GO_VAL }, { "-M", AG_GO_VAL },
	{ "--machine", AG_GO_VAL }, { "-t", AG_GO_VAL }, { "--type", AG_GO_VAL },
	{ "-p", AG_GO_VAL }, { "--property", AG_GO_VAL }, { "-n", AG_GO_VAL },
	{ "--lines", AG_GO_VAL }, { "-o", AG_GO_VAL }, { "--output", AG_GO_VAL },
	{ "--state", AG_GO_VAL },
	{ NULL, 0 }
};
static const char *const systemctl_names[] = { "systemctl", "journalctl", NULL };
static const char *const systemctl_env[] = { "SYSTEMD_PAGER*", NULL };
const struct ag_prog ag_prog_systemctl = {
	.names = systemctl_names, .global_opts = systemctl_opts, .env_filter = systemctl_env,
};

static const struct ag_gopt apt_opts[] = {
	{ "-o", AG_GO_VAL | AG_GO_RISKY }, { "-c", AG_GO_VAL | AG_GO_RISKY }, { "-t", AG_GO_VAL },
	{ NULL, 0 }
};
static const char *const apt_names[] = { "apt", "apt-get", "apt-cache", NULL };
const struct ag_prog ag_prog_apt = { .names = apt_names, .global_opts = apt_opts };

static const char *const make_names[] = { "make", "gmake", NULL };
/* the options whose value is not a target (make -C dir install) */
static const struct ag_gopt make_opts[] = {
	{ "-C", AG_GO_VAL | AG_GO_CHDIR }, { "--directory", AG_GO_VAL | AG_GO_CHDIR },
	{ "-f", AG_GO_VAL }, { "--file", AG_GO_VAL }, { "--makefile", AG_GO_VAL },
	{ "-I", AG_GO_VAL }, { "--include-dir", AG_GO_VAL }, { "-o", AG_GO_VAL },
	{ "--old-file", AG_GO_VAL }, { "-W", AG_GO_VAL }, { "--what-if", AG_GO_VAL },
	{ "--new-file", AG_GO_VAL }, { "--assume-new", AG_GO_VAL }, { "--eval", AG_GO_VAL },
	{ NULL, 0 }
};
static const char *const make_env[] = {
	"MAKEFLAGS", "MAKEFILES", "MFLAGS", "GNUMAKEFLAGS", NULL
};
/* in the developer tier what a recipe runs is judged at its exec */
const struct ag_prog ag_prog_make = {
	.names = make_names, .flags = AG_PROG_SUBS_ALL, .global_opts = make_opts,
	.env_filter = make_env, .env_developer = make_env,
	.runs = "the recipes of the Makefile, through sh",
};

static const char *const tar_names[] = { "tar", NULL };
static const char *const tar_env[] = { "TAR_OPTIONS", NULL };
const struct ag_prog ag_prog_tar = { .names = tar_names, .env_filter = tar_env };

static const char *const grep_names[] = { "grep", "egrep", "fgrep", NULL };
static const char *const grep_env[] = { "GREP_OPTIONS", NULL };
const struct ag_prog ag_prog_grep = { .names = grep_names, .env_filter = grep_env };

static const char *const rsync_names[] = { "rsync", NULL };
static const char *const rsync_env[] = { "RSYNC_RSH", "RSYNC_CONNECT_PROG", NULL };
const struct ag_prog ag_prog_rsync = { .names = rsync_names, .env_filter = rsync_env };

static const char *const cvs_names[] = { "cvs", NULL };
static const char *const cvs_env[] = { "CVS_RSH", NULL };
const struct ag_prog ag_prog_cvs = { .names = cvs_names, .env_filter = cvs_env };

static const char *const curl_names[] = { "curl", NULL };
static const char *const curl_env[] = { "CURL_HOME", NULL };
const struct ag_prog ag_prog_curl = { .names = curl_names, .env_filter = curl_env };

static const char *const wget_names[] = { "wget", NULL };
static const char *const wget_env[] = { "WGETRC", NULL };
const struct ag_prog ag_prog_wget = { .names = wget_names, .env_filter = wget_env };

/* ssh asks for passwords through a program, and reaches the agent's keys */
static const char *const ssh_names[] = { "ssh", "scp", "sftp", NULL };
static const char *const ssh_env[] = { "SSH_ASKPASS*", "SSH_AUTH_SOCK", NULL };
const struct ag_prog ag_prog_ssh = { .names = ssh_names, .env_filter = ssh_env };

static const char *const gpg_names[] = { "gpg", "gpg2", NULL };
static const char *const gpg_env[] = { "GNUPGHOME", "GPG_AGENT_INFO", NULL };
const struct ag_prog ag_prog_gpg = { .names = gpg_names, .env_filter = gpg_env };
