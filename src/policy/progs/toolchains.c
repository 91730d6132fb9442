/*
 * toolchains.c - the language toolchains a coding agent drives (cargo,
 * go, npm, yarn, pnpm, pip, twine, poetry, pytest, ruff, mypy, maven,
 * gradle): the options before their subcommand, what each runs besides
 * itself, the actions a deny rule may name (`cargo publish`, `npm
 * publish`, `mvn deploy`), and every way each spells an action, so that a
 * rule naming the action refuses it however it is written: npm's
 * abbreviations and aliases (`npm pub`), gradle's task abbreviations
 * (`gradle pub`, `:app:publish`), maven's plugin goals (`deploy:deploy`),
 * several tasks on one line (`gradle build publish`), a rustup toolchain
 * word (`cargo +nightly publish`) and cargo's user-defined aliases, which
 * the gateway cannot read and therefore refuses while a rule names one of
 * cargo's actions.
 *
 * What a build runs (build.rs, npm scripts, a test binary) is judged at
 * its own exec.  What a program does over the network by itself (a
 * script that uploads with its own HTTP client) is not a spelling of an
 * action: hold that at the receiving end, or in the egress rules.
 */
#include "agconfig.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "policy/prog.h"

/* ---- spellings ------------------------------------------------------------ */

/* word is a non-empty prefix of s */
static int
is_prefix(const char *word, const char *s)
{
	size_t n = strlen(word);

	return n > 0 && strncmp(word, s, n) == 0;
}

/*
 * npm (its lib/utils/cmd-list.js, npm 11): a camel-cased word is read as
 * dashed (installTest), a command is itself, an alias stands for its
 * command (t is test, dist-tags is dist-tag), and any other word that
 * begins a command or an alias runs it when that is unambiguous (npm pub).
 * Taken towards refusing: every such beginning counts, ambiguous or not.
 */
static const char *const npm_commands[] = {
	"access", "adduser", "approve-scripts", "audit", "bugs", "cache", "ci",
	"completion", "config", "dedupe", "deny-scripts", "deprecate", "diff",
	"dist-tag", "docs", "doctor", "edit", "exec", "explain", "explore",
	"find-dupes", "fund", "get", "help", "help-search", "init", "install",
	"install-ci-test", "install-scripts", "install-test", "link", "ll", "login",
	"logout", "ls", "org", "outdated", "owner", "pack", "ping", "pkg", "prefix",
	"profile", "prune", "publish", "query", "rebuild", "repo", "restart", "root",
	"run", "sbom", "search", "set", "shrinkwrap", "stage", "star", "stars",
	"start", "stop", "team", "test", "token", "trust", "undeprecate", "uninstall",
	"unpublish", "unstar", "update", "version", "view", "whoami", NULL
};
static const char *const npm_aliases[] = {
	"author", "owner", "home", "docs", "issues", "bugs", "info", "view",
	"show", "view", "find", "search", "add", "install", "unlink", "uninstall",
	"remove", "uninstall", "rm", "uninstall", "r", "uninstall", "un", "uninstall",
	"rb", "rebuild", "list", "ls", "ln", "link", "create", "init", "i", "install",
	"it", "install-test", "cit", "install-ci-test", "u", "update", "up", "update",
	"c", "config", "s", "search", "se", "search", "tst", "test", "t", "test",
	"ddp", "dedupe", "v", "view", "run-script", "run", "clean-install", "ci",
	"clean-install-test", "install-ci-test", "x", "exec", "why", "explain",
	"la", "ll", "verison", "version", "ic", "ci", "innit", "init", "in", "install",
	"ins", "install", "inst", "install", "insta", "install", "instal", "install",
	"isnt", "install", "isnta", "install", "isntal", "install",
	"isntall", "install", "install-clean", "ci", "isntall-clean", "ci",
	"hlep", "help", "dist-tags", "dist-tag", "upgrade", "update",
	"udpate", "update", "rum", "run", "sit", "install-ci-test", "urn", "run",
	"ogr", "org", "add-user", "adduser", NULL
};

static int
npm_spells(const char *word, const char *action)
{
	char dashed[64];
	size_t i, n = 0;

	for (i = 0; word[i] != '\0' && n + 2 < sizeof(dashed); i++) {
		if (isupper((unsigned char)word[i])) {
			dashed[n++] = '-';
			dashed[n++] = (char)tolower((unsigned char)word[i]);
		} else
			dashed[n++] = word[i];
	}
	if (word[i] != '\0')
		return 0;
	dashed[n] = '\0';
	for (i = 0; npm_commands[i] != NULL; i++)
		if (strcmp(dashed, npm_commands[i]) == 0)
			return strcmp(dashed, action) == 0;
	for (i = 0; npm_aliases[i] != NULL; i += 2)
		if (strcmp(dashed, npm_aliases[i]) == 0)
			return strcmp(npm_aliases[i + 1], action) == 0;
	if (is_prefix(dashed, action))
		return 1;
	for (i = 0; npm_aliases[i] != NULL; i += 2)
		if (strcmp(npm_aliases[i + 1], action) == 0 && is_prefix(dashed, npm_aliases[i]))
			return 1;
	return 0;
}

/*
 * gradle: a task is named by its path (:app:publish) or by any
 * abbreviation whose camel-case parts begin the task's parts (pub,
 * pTML for publishToMavenLocal).  A task that starts with the action's
 * name does the action (publishAllPublicationsToMavenRepository), so a
 * word whose first part begins the action, or that begins with the
 * action, is taken as it.
 */
static int
gradle_spells(const char *word, const char *action)
{
	const char *t = strrchr(word, ':');
	char first[64];
	size_t n = 0;

	t = t != NULL ? t + 1 : word;
	while (t[n] != '\0' && (n == 0 || !isupper((unsigned char)t[n])) && n + 1 < sizeof(first)) {
		first[n] = (char)tolower((unsigned char)t[n]);
		n++;
	}
	first[n] = '\0';
	return is_prefix(first, action) || strncmp(t, action, strlen(action)) == 0;
}

/*
 * maven: a lifecycle phase (deploy), a plugin goal by prefix
 * (deploy:deploy-file) or by coordinates
 * (org.apache.maven.plugins:maven-deploy-plugin:3.1.1:deploy).
 */
static int
mvn_spells(const char *word, const char *action)
{
	/* the default lifecycle: a phase runs every phase before it */
	static const char *const phases[] = {
		"validate", "initialize", "generate-sources", "process-sources",
		"generate-resources", "process-resources", "compile", "process-classes",
		"generate-test-sources", "process-test-sources", "generate-test-resources",
		"process-test-resources", "test-compile", "process-test-classes", "test",
		"prepare-package", "package", "pre-integration-test", "integration-test",
		"post-integration-test", "verify", "install", "deploy", NULL
	};
	size_t n = strlen(action), i;
	char plugin[80];
	int seen = 0;

	for (i = 0; phases[i] != NULL; i++) {
		seen |= strcmp(phases[i], action) == 0;
		if (seen && strcmp(phases[i], word) == 0)
			return 1;
	}
	if (strncmp(word, action, n) == 0 && word[n] == ':')
		return 1;
	if (snprintf(plugin, sizeof(plugin), ":maven-%s-plugin", action) >= (int)sizeof(plugin))
		return 1;
	return strstr(word, plugin) != NULL;
}

/* ---- the descriptors ---------------------------------------------------- */

static const struct ag_gopt cargo_opts[] = {
	{ "-C", AG_GO_VAL | AG_GO_CHDIR }, { "--config", AG_GO_VAL | AG_GO_RISKY },
	{ "-Z", AG_GO_VAL }, { "--color", AG_GO_VAL }, { "--manifest-path", AG_GO_VAL },
	{ "--explain", AG_GO_VAL }, { "-v", 0 }, { "-vv", 0 }, { "--verbose", 0 }, { "-q", 0 },
	{ "--quiet", 0 }, { "--frozen", 0 }, { "--locked", 0 }, { "--offline", 0 },
	{ "-V", 0 }, { "--version", 0 }, { "--list", 0 },
	{ NULL, 0 }
};
static const char *const cargo_names[] = { "cargo", NULL };
static const char *const cargo_env[] = {
	"CARGO_*", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTFLAGS", NULL
};
/* the developer tier's: what the build does, not what it is (a linker or
 * a wrapper it names is an exec, judged like any; aliases stay refused) */
static const char *const cargo_dev[] = {
	"RUSTFLAGS", "RUSTDOCFLAGS", "CARGO_TARGET_DIR", "CARGO_BUILD_JOBS",
	"CARGO_INCREMENTAL", "CARGO_TERM_*", "CARGO_NET_OFFLINE", "CARGO_PROFILE_*", NULL
};
/* its own commands: a word outside them may be an [alias] from any
 * .cargo/config.toml up the tree, --config or CARGO_ALIAS_*, which also
 * redefine the short forms (b c d r t rm) */
static const char *const cargo_subs[] = {
	"add", "bench", "build", "check", "clean", "config", "doc", "fetch", "fix",
	"generate-lockfile", "git-checkout", "help", "info", "init", "install",
	"locate-project", "login", "logout", "metadata", "new", "owner", "package", "pkgid",
	"publish", "read-manifest", "remove", "report", "run", "rustc", "rustdoc", "search",
	"test", "tree", "uninstall", "update", "vendor", "verify-project", "version", "yank",
	NULL
};
static const char *const cargo_same_as[] = {
	"b", "build", "c", "check", "d", "doc", "r", "run", "t", "test", "rm", "remove", NULL
};
static const struct ag_action cargo_actions[] = {
	{ "publish", "uploads the crate to its registry" },
	{ "yank", "withdraws a published version" },
	{ "owner", "changes who may publish the crate" },
	{ "login", "stores a registry token" },
	{ "install", "builds a crate and installs its binaries under CARGO_HOME" },
	{ NULL, NULL }
};
const struct ag_prog ag_prog_cargo = {
	.names = cargo_names, .flags = AG_PROG_PLUS_TOOLCHAIN, .global_opts = cargo_opts,
	.env_filter = cargo_env, .env_developer = cargo_dev, .same_as = cargo_same_as, .builtin_subs = cargo_subs,
	.actions = cargo_actions,
	.runs = "the crate's build scripts (build.rs), proc macros and the binaries and tests it builds; cargo-NAME for `cargo NAME`",
};

static const char *const rustc_names[] = { "rustc", "rustdoc", NULL };
const struct ag_prog ag_prog_rustc = {
	.names = rustc_names, .flags = AG_PROG_PLUS_TOOLCHAIN,
	.runs = "the linker (cc); proc macros it loads",
};

/*
 * cargo's formatter and linter, run directly: `cargo fmt` and `cargo
 * clippy` are words outside cargo's own commands, which an [alias] in a
 * .cargo/config.toml may redefine (cargo lets an alias stand in for an
 * installed subcommand, with a warning), so while a rule names one of
 * cargo's actions they are refused in that spelling and run as these.
 */
static const char *const rustfmt_names[] = { "rustfmt", "cargo-fmt", NULL };
const struct ag_prog ag_prog_rustfmt = {
	.names = rustfmt_names, .flags = AG_PROG_PLUS_TOOLCHAIN,
	.runs = "nothing of the crate's (it rewrites its sources); cargo-fmt runs `cargo metadata` and rustfmt",
};

static const char *const clippy_names[] = { "cargo-clippy", "clippy-driver", NULL };
const struct ag_prog ag_prog_clippy = {
	.names = clippy_names, .flags = AG_PROG_PLUS_TOOLCHAIN,
	.runs = "`cargo check` with clippy-driver as the compiler: the crate's build scripts (build.rs) and proc macros",
};

static const struct ag_gopt go_opts[] = {
	{ "-C", AG_GO_VAL | AG_GO_CHDIR },
	{ NULL, 0 }
};
static const char *const go_names[] = { "go", "gofmt", NULL };
static const struct ag_action go_actions[] = {
	{ "generate", "runs the commands named in //go:generate comments" },
	{ "install", "installs binaries under GOPATH/bin" },
	{ "get", "downloads and adds modules" },
	{ NULL, NULL }
};
const struct ag_prog ag_prog_go = {
	.names = go_names, .global_opts = go_opts, .actions = go_actions,
	.runs = "the compiler and linker; `go test` and `go run` run what they build (from GOTMPDIR or /tmp); `go generate` the commands the source names",
};

static const struct ag_gopt npm_opts[] = {
	{ "-C", AG_GO_VAL | AG_GO_CHDIR }, { "--prefix", AG_GO_VAL | AG_GO_CHDIR },
	{ "-w", AG_GO_VAL }, { "--workspace", AG_GO_VAL }, { "--registry", AG_GO_VAL },
	{ "--userconfig", AG_GO_VAL | AG_GO_RISKY }, { "--globalconfig", AG_GO_VAL | AG_GO_RISKY },
	{ "--script-shell", AG_GO_VAL | AG_GO_RISKY }, { "--node-options", AG_GO_VAL | AG_GO_RISKY },
	{ "--loglevel", AG_GO_VAL },
	{ NULL, 0 }
};
static const char *const npm_names[] = { "npm", "npx", NULL };
static const char *const npm_env[] = { "NPM_CONFIG_*", "npm_config_*", NULL };
/* the developer tier's: settings of how npm works, none naming code it
 * loads (node_options, script_shell, userconfig stay refused) */
static const char *const npm_dev[] = {
	"npm_config_loglevel", "npm_config_yes", "npm_config_fund", "npm_config_audit",
	"npm_config_update_notifier", "npm_config_progress", "npm_config_registry",
	"npm_config_prefer_offline", "npm_config_offline", "npm_config_ignore_scripts",
	"npm_config_production", "npm_config_omit", "npm_config_include",
	"NPM_CONFIG_LOGLEVEL", "NPM_CONFIG_YES", "NPM_CONFIG_FUND", "NPM_CONFIG_AUDIT",
	"NPM_CONFIG_UPDATE_NOTIFIER", "NPM_CONFIG_PROGRESS", "NPM_CONFIG_REGISTRY",
	"NPM_CONFIG_PREFER_OFFLINE", "NPM_CONFIG_OFFLINE", "NPM_CONFIG_IGNORE_SCRIPTS",
	"NPM_CONFIG_PRODUCTION", "NPM_CONFIG_OMIT", "NPM_CONFIG_INCLUDE", NULL
};
static const struct ag_action npm_actions[] = {
	{ "publish", "uploads the package to its registry" },
	{ "unpublish", "removes a published package or version" },
	{ "deprecate", "marks a published version deprecated" },
	{ "dist-tag", "moves a published tag (latest)" },
	{ "owner", "changes who may publish the package" },
	{ "access", "changes a published package's visibility" },
	{ "token", "creates or revokes registry tokens" },
	{ "adduser", "logs in to a registry and stores its token" },
	{ "org", "changes an organization's members and roles" },
	{ "team", "changes a team's members and packages" },
	{ "trust", "changes which CI identities may publish the package" },
	{ "exec", "runs a package's binary, downloading it first if needed (npx)" },
	{ NULL, NULL }
};
static const char *const npm_entries[] = { "npm-cli.js", "npx-cli.js", "npm.js", "npx.js",
	NULL };
/* its entry point, where /usr/bin/npm is a link to it (or was removed) */
static const char *const npm_files[] = {
	"/usr/lib/node_modules/npm/bin/npm-cli.js", "/usr/local/lib/node_modules/npm/bin/npm-cli.js",
	"/usr/share/nodejs/npm/bin/npm-cli.js", NULL
};
const struct ag_prog ag_prog_npm = {
	.names = npm_names, .global_opts = npm_opts, .env_filter = npm_env,
	.env_developer = npm_dev, .files = npm_files,
	.actions = npm_actions, .spells = npm_spells, .entry_names = npm_entries,
	.runs = "package.json scripts (test, build, install hooks of dependencies), through sh; npx and `npm exec` a package's binary",
};

static const struct ag_gopt yarn_opts[] = {
	{ "--cwd", AG_GO_VAL | AG_GO_CHDIR }, { "--registry", AG_GO_VAL },
	{ "--use-yarnrc", AG_GO_VAL | AG_GO_RISKY }, { "--modules-folder", AG_GO_VAL },
	{ "--cache-folder", AG_GO_VAL },
	{ NULL, 0 }
};
static const char *const yarn_names[] = { "yarn", "yarnpkg", NULL };
static const char *const yarn_env[] = { "YARN_*", NULL };
static const struct ag_action yarn_actions[] = {
	{ "publish", "uploads the package to its registry" },
	{ "owner", "changes who may publish the package" },
	{ "tag", "moves a published tag" },
	{ "login", "stores a registry token" },
	{ NULL, NULL }
};
static const char *const yarn_entries[] = { "yarn.js", "yarn.cjs", NULL };
const struct ag_prog ag_prog_yarn = {
	.names = yarn_names, .global_opts = yarn_opts, .env_filter = yarn_env,
	.actions = yarn_actions, .entry_names = yarn_entries,
	.runs = "package.json scripts (`yarn NAME` runs the script NAME), through sh",
};

static const struct ag_gopt pnpm_opts[] = {
	{ "-C", AG_GO_VAL | AG_GO_CHDIR }, { "--dir", AG_GO_VAL | AG_GO_CHDIR },
	{ "-F", AG_GO_VAL }, { "--filter", AG_GO_VAL }, { "--registry", AG_GO_VAL },
	{ "-w", 0 }, { "-r", 0 }, { "--recursive", 0 },
	{ NULL, 0 }
};
static const char *const pnpm_names[] = { "pnpm", "pnpx", NULL };
static const struct ag_action pnpm_actions[] = {
	{ "publish", "uploads the package to its registry" },
	{ "dlx", "downloads a package and runs its binary" },
	{ NULL, NULL }
};
static const char *const pnpm_entries[] = { "pnpm.js", "pnpm.cjs", "pnpx.js", "pnpx.cjs", NULL };
const struct ag_prog ag_prog_pnpm = {
	.names = pnpm_names, .global_opts = pnpm_opts, .env_filter = npm_env,
	.actions = pnpm_actions, .entry_names = pnpm_entries,
	.runs = "package.json scripts, through sh; `pnpm dlx` a downloaded package's binary",
};

/* corepack NAME ...: the package manager NAME (corepack pnpm publish) */
static size_t
corepack_tool(const char *const *words, size_t nwords, char *name, size_t namesz)
{
	static const char *const tools[] = { "npm", "npx", "pnpm", "pnpx", "yarn", NULL };
	size_t i;

	for (i = 1; i < nwords && words[i] != NULL && words[i][0] == '-'; i++)
		;
	if (i >= nwords || words[i] == NULL || strlen(words[i]) >= namesz)
		return 0;
	for (size_t k = 0; tools[k] != NULL; k++)
		if (strcmp(words[i], tools[k]) == 0) {
			snprintf(name, namesz, "%s", words[i]);
			return i + 1;
		}
	return 0;
}

static const char *const corepack_names[] = { "corepack", NULL };
static const char *const corepack_entries[] = { "corepack.js", "corepack.cjs", NULL };
const struct ag_prog ag_prog_corepack = {
	.names = corepack_names, .dispatch = corepack_tool, .entry_names = corepack_entries,
	.runs = "the package manager it is named (corepack pnpm ...), downloaded first if needed",
};

static const char *const pip_names[] = { "pip", "pip3", NULL };
static const char *const pip_env[] = { "PIP_*", NULL };
static const struct ag_gopt pip_opts[] = {
	{ "--python", AG_GO_VAL | AG_GO_RISKY }, { "--log", AG_GO_VAL }, { "--proxy", AG_GO_VAL },
	{ "--cache-dir", AG_GO_VAL }, { "--isolated", 0 }, { "-q", 0 }, { "-v", 0 },
	{ NULL, 0 }
};
static const struct ag_action pip_actions[] = {
	{ "install", "downloads packages and runs their build code" },
	{ "download", "downloads packages" },
	{ NULL, NULL }
};
const struct ag_prog ag_prog_pip = {
	.names = pip_names, .global_opts = pip_opts, .env_filter = pip_env,
	.env_developer = pip_env,
	.actions = pip_actions,
	.runs = "the build code of the packages it installs (setup.py, build backends)",
};

static const char *const twine_names[] = { "twine", NULL };
static const char *const twine_env[] = { "TWINE_*", NULL };
static const struct ag_action twine_actions[] = {
	{ "upload", "uploads distributions to a package index" },
	{ "register", "registers a project with a package index" },
	{ NULL, NULL }
};
const struct ag_prog ag_prog_twine = {
	.names = twine_names, .env_filter = twine_env, .actions = twine_actions,
};

static const char *const pypub_names[] = { "poetry", "flit", "hatch", "uv", "pdm", NULL };
static const struct ag_gopt pypub_opts[] = {
	{ "-C", AG_GO_VAL | AG_GO_CHDIR }, { "--directory", AG_GO_VAL | AG_GO_CHDIR },
	{ "-P", AG_GO_VAL }, { "--project", AG_GO_VAL },
	{ NULL, 0 }
};
static const struct ag_action pypub_actions[] = {
	{ "publish", "uploads the package to a package index" },
	{ NULL, NULL }
};
const struct ag_prog ag_prog_pypub = {
	.names = pypub_names, .global_opts = pypub_opts, .actions = pypub_actions,
	.runs = "the project's build backend; `run` the command it is given",
};

static const char *const pytest_names[] = { "pytest", "py.test", "pytest-3", NULL };
static const char *const pytest_env[] = { "PYTEST_*", NULL };
const struct ag_prog ag_prog_pytest = {
	.names = pytest_names, .env_filter = pytest_env,
	.runs = "the project's tests and conftest.py, and the plugins installed beside it",
};

static const char *const pylint_names[] = { "ruff", "mypy", "flake8", "black", NULL };
const struct ag_prog ag_prog_pylint = {
	.names = pylint_names,
	.runs = "nothing of the project's (they read it); mypy may load plugins the configuration names",
};

static const struct ag_gopt mvn_opts[] = {
	{ "-f", AG_GO_VAL }, { "--file", AG_GO_VAL },
	{ "-s", AG_GO_VAL | AG_GO_RISKY }, { "--settings", AG_GO_VAL | AG_GO_RISKY },
	{ "-gs", AG_GO_VAL | AG_GO_RISKY }, { "--global-settings", AG_GO_VAL | AG_GO_RISKY },
	{ "-t", AG_GO_VAL }, { "--toolchains", AG_GO_VAL }, { "-pl", AG_GO_VAL },
	{ "--projects", AG_GO_VAL }, { "-rf", AG_GO_VAL }, { "--resume-from", AG_GO_VAL },
	{ "-P", AG_GO_VAL }, { "--activate-profiles", AG_GO_VAL }, { "-D", AG_GO_VAL },
	{ "--define", AG_GO_VAL }, { "-l", AG_GO_VAL }, { "--log-file", AG_GO_VAL },
	{ "-T", AG_GO_VAL }, { "--threads", AG_GO_VAL }, { "-b", AG_GO_VAL },
	{ "--builder", AG_GO_VAL },
	{ NULL, 0 }
};
static const char *const mvn_names[] = { "mvn", "mvnw", "mvnDebug", NULL };
static const char *const mvn_env[] = { "MAVEN_ARGS", "MAVEN_DEBUG_OPTS", NULL };
static const struct ag_action mvn_actions[] = {
	{ "deploy", "uploads the artifacts to a remote repository" },
	{ "release", "tags, builds and deploys a release (release:perform)" },
	{ "install", "installs the artifacts in the local repository" },
	{ NULL, NULL }
};
const struct ag_prog ag_prog_mvn = {
	.names = mvn_names, .flags = AG_PROG_SUBS_ALL, .global_opts = mvn_opts,
	.env_filter = mvn_env, .actions = mvn_actions, .spells = mvn_spells,
	.runs = "the plugins the pom names (downloaded), javac, and the tests (surefire forks java)",
};

static const struct ag_gopt gradle_opts[] = {
	{ "-p", AG_GO_VAL | AG_GO_CHDIR }, { "--project-dir", AG_GO_VAL | AG_GO_CHDIR },
	{ "-b", AG_GO_VAL }, { "--build-file", AG_GO_VAL }, { "-c", AG_GO_VAL },
	{ "--settings-file", AG_GO_VAL }, { "-g", AG_GO_VAL }, { "--gradle-user-home", AG_GO_VAL },
	{ "-I", AG_GO_VAL | AG_GO_RISKY }, { "--init-script", AG_GO_VAL | AG_GO_RISKY },
	{ "-D", AG_GO_VAL }, { "--system-prop", AG_GO_VAL }, { "-P", AG_GO_VAL },
	{ "--project-prop", AG_GO_VAL }, { "-x", AG_GO_VAL }, { "--exclude-task", AG_GO_VAL },
	{ "--console", AG_GO_VAL }, { "--warning-mode", AG_GO_VAL }, { "--max-workers", AG_GO_VAL },
	{ "--include-build", AG_GO_VAL },
	{ NULL, 0 }
};
static const char *const gradle_names[] = { "gradle", "gradlew", NULL };
static const char *const gradle_env[] = { "GRADLE_OPTS", "JAVA_OPTS", "ORG_GRADLE_PROJECT_*", NULL };
static const struct ag_action gradle_actions[] = {
	{ "publish", "uploads the publications (every publish... task)" },
	{ "upload", "uploads archives (older builds: uploadArchives)" },
	{ NULL, NULL }
};
const struct ag_prog ag_prog_gradle = {
	.names = gradle_names, .flags = AG_PROG_SUBS_ALL, .global_opts = gradle_opts,
	.env_filter = gradle_env, .actions = gradle_actions, .spells = gradle_spells,
	.runs = "the build scripts (build.gradle, settings.gradle, buildSrc), the plugins they name, and the tests",
};

static const char *const javac_names[] = { "javac", "jar", "jshell", NULL };
const struct ag_prog ag_prog_javac = {
	.names = javac_names, .env_filter = (const char *const[]){ "JAVA_TOOL_OPTIONS",
	    "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", NULL },
	.runs = "annotation processors on the class path",
};
