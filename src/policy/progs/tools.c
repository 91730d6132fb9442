/*
 * tools.c - programs driven by a subcommand (docker ps, kubectl get,
 * systemctl status, apt install, cargo build, go test): the options that
 * may come before the subcommand, so that a rule's subcommand list is
 * checked against the right word, and the ones among them that change
 * which configuration the tool reads (refused unless allow_options).
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
const struct ag_prog ag_prog_systemctl = {
	.names = systemctl_names, .global_opts = systemctl_opts,
};

static const struct ag_gopt apt_opts[] = {
	{ "-o", AG_GO_VAL | AG_GO_RISKY }, { "-c", AG_GO_VAL | AG_GO_RISKY }, { "-t", AG_GO_VAL },
	{ NULL, 0 }
};
static const char *const apt_names[] = { "apt", "apt-get", "apt-cache", NULL };
const struct ag_prog ag_prog_apt = { .names = apt_names, .global_opts = apt_opts };

static const struct ag_gopt cargo_go_opts[] = {
	{ "-C", AG_GO_VAL | AG_GO_CHDIR }, { "--config", AG_GO_VAL | AG_GO_RISKY },
	{ "-Z", AG_GO_VAL },
	{ NULL, 0 }
};
static const char *const cargo_names[] = { "cargo", NULL };
const struct ag_prog ag_prog_cargo = { .names = cargo_names, .global_opts = cargo_go_opts };

static const char *const go_names[] = { "go", NULL };
const struct ag_prog ag_prog_go = { .names = go_names, .global_opts = cargo_go_opts };
