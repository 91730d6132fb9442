/*
 * test_config.c - the policy loader: every class of mistake an admin can
 * make is refused at load time with the exact line:col, a complete file
 * lands in the expected structures, and the StrictModes-like permission
 * check names the offending path.
 */
#include "agconfig.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/account.h"
#include "common/config.h"

#define TOK	"6894ddb902c671b97aae683c7e776d4925e275610ff086faa6d00dd2bfe20e7a"
#define ED_B64	"AAAAC3NzaC1lZDI1NTE5AAAAINrXyg89u0RTKzCfG5oaLlwMiB2wWgZ5XtFHefEtE2SD"
#define EC_B64	"AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBE4pQVTeVbePt+" \
		"NdrEOepQW7CHQ6fakq8jiikdmtAmxkZJT1AqZf6rX3vab+tfCnIIz7BBcZd1ScQVSYmSzD5v4="

/* Lines 1-4 of most cases: a minimal valid file to append mistakes to. */
#define BASE	"version: 1\nprofiles:\n  r:\n    allow: [ls]\n"
/* BASE plus an identity whose lines 6-8 are fixed; line 9 is free. */
#define IDENT	BASE "identities:\n  - name: a\n    profile: r\n    token_sha256: " TOK "\n"

struct errcase {
	const char	*name;
	const char	*yaml;
	int		 line;
	int		 col;
	const char	*msg;		/* substring of the message */
};

static const struct errcase errcases[] = {
	/* YAML syntax, with libyaml's position and problem */
	{ "syntax_unclosed_flow", "version: 1\nprofiles:\n  r:\n    allow: [ls\n",
	  5, 1, "YAML syntax error: did not find expected ',' or ']' (while "
	  "parsing a flow sequence at 4:12)" },
	{ "syntax_tab_indent", "version: 1\nprofiles:\n\tr: {}\n",
	  3, 1, "found character that cannot start any token" },
	{ "syntax_bad_utf8", "version: 1\xff\n", 1, 11, "invalid input: invalid "
	  "leading UTF-8 octet (byte 0xFF)" },
	{ "second_document", "version: 1\n---\nversion: 1\n", 2, 1,
	  "only one YAML document" },
	{ "empty_file", "", 1, 1, "the file is empty" },
	{ "only_comment", "# nothing\n", 1, 1, "the file is empty" },
	{ "top_level_list", "- a\n", 1, 1, "expected a mapping at the top level, "
	  "got a list" },

	/* anchors, aliases, merge keys, tags: refused where written */
	{ "anchor_refused", "version: 1\nprofiles:\n  r: &x\n    allow: [ls]\n",
	  3, 6, "YAML anchors ('&x') are not supported" },
	{ "alias_refused", "version: 1\nprofiles:\n  r:\n    allow: *x\n", 4, 12,
	  "YAML aliases ('*x') are not supported" },
	{ "merge_key_refused", "version: 1\nprofiles:\n  r:\n    <<: {allow: [ls]}\n",
	  4, 5, "YAML merge keys ('<<') are not supported" },
	{ "tag_refused", "version: !!int 1\n", 1, 10,
	  "YAML tags ('!!int') are not supported" },
	{ "complex_key_refused", "version: 1\n? [a]\n: b\n", 2, 3,
	  "a mapping key must be a plain string, not a list" },

	/* version */
	{ "version_missing", "profiles:\n  r:\n    allow: [ls]\n", 1, 1,
	  "'version' is missing" },
	{ "version_two", "version: 2\nprofiles:\n  r:\n    allow: [ls]\n", 1, 10,
	  "unsupported version '2'" },
	{ "version_list", "version: [1]\n", 1, 10,
	  "expected a number for 'version', got a list" },
	{ "profiles_missing", "version: 1\n", 1, 1, "'profiles' is missing" },

	/* wrong types */
	{ "allow_is_mapping", "version: 1\nprofiles:\n  r:\n    allow: {ls: 1}\n",
	  4, 12, "expected a list of rules for 'allow', got a mapping" },
	{ "read_is_mapping", BASE "    paths: {read: {a: b}}\n", 5, 19,
	  "expected a list of strings for 'read', got a mapping" },
	{ "read_is_string", BASE "    paths: {read: /}\n", 5, 19,
	  "expected a list of strings for 'read', got a string (write [\"/\"])" },
	{ "read_item_mapping", BASE "    paths: {read: [{a: b}]}\n", 5, 20,
	  "got a mapping in it" },
	{ "deny_empty_value", BASE "    deny:\n", 5, 10,
	  "expected a list of rules for 'deny', got an empty value" },
	{ "gateway_is_string", "version: 1\ngateway: yes\n", 2, 10,
	  "expected a mapping for 'gateway', got a string" },
	{ "identity_not_mapping", BASE "identities: [x]\n", 5, 14,
	  "expected a mapping for identity #1, got a string" },
	{ "profile_is_null", "version: 1\nprofiles:\n  r:\n", 3, 5,
	  "expected a mapping for 'r', got an empty value" },

	/* unknown keys, with and without a suggestion */
	{ "unknown_top_key", "version: 1\nprofile:\n  r: {allow: [ls]}\n", 2, 1,
	  "unknown key 'profile' at the top level (did you mean 'profiles'?)" },
	{ "unknown_profile_key", "version: 1\nprofiles:\n  readonly:\n    alow: [ls]\n",
	  4, 5, "unknown key 'alow' in profile 'readonly' (did you mean 'allow'?)" },
	{ "unknown_rule_key", "version: 1\nprofiles:\n  r:\n    allow:\n"
	  "      - {comand: ls}\n", 5, 10, "unknown key 'comand' in rule "
	  "profiles.r.allow[0] (did you mean 'command'?)" },
	{ "unknown_feature_key", BASE "    features: {functons: allow}\n", 5, 16,
	  "unknown key 'functons' in profiles.r.features (did you mean "
	  "'functions'?)" },
	{ "unknown_gateway_key", "version: 1\ngateway:\n  sandbx: off\n", 3, 3,
	  "unknown key 'sandbx' in gateway (did you mean 'sandbox'?)" },
	{ "unknown_audit_key", "version: 1\ngateway:\n  audit: {fiel: /x}\n", 3, 11,
	  "unknown key 'fiel' in gateway.audit (did you mean 'file'?)" },
	{ "unknown_identity_key", IDENT "    expire: 2030-01-01\n", 9, 5,
	  "unknown key 'expire' in identity 'a' (did you mean 'expires'?)" },
	{ "unknown_limit_key", BASE "    limits: {tiemout: 5}\n", 5, 14,
	  "(did you mean 'timeout'?)" },
	{ "unknown_validator_key", BASE "    validator: {url: http://x, modle: m}\n",
	  5, 32, "(did you mean 'model'?)" },

	/* duplicates */
	{ "duplicate_key", BASE "    allow: [cat]\n", 5, 5,
	  "duplicate key 'allow' in profile 'r' (first at 4:5)" },
	{ "duplicate_profile", BASE "  r:\n    allow: [cat]\n", 5, 3,
	  "duplicate profile 'r' in profiles (first at 3:3)" },
	{ "duplicate_identity", BASE "identities:\n"
	  "  - {name: a, profile: r, token_sha256: " TOK "}\n"
	  "  - {name: a, profile: r, token_sha256: " TOK "}\n", 7, 12,
	  "duplicate identity 'a' (first defined at 6:12)" },
	{ "duplicate_user", BASE "users:\n  bob: r\n  bob: r\n", 7, 3,
	  "duplicate user 'bob' in users (first at 6:3)" },
	{ "duplicate_top_key", "version: 1\nversion: 1\n", 2, 1,
	  "duplicate key 'version' at the top level (first at 1:1)" },

	/* profile references */
	{ "identity_unknown_profile", BASE "identities:\n  - name: a\n    profile: rr\n"
	  "    token_sha256: " TOK "\n", 7, 14,
	  "identity 'a' refers to unknown profile 'rr' (did you mean 'r'?); "
	  "defined profiles: r" },
	{ "user_unknown_profile", BASE "users:\n  bob: nope\n", 6, 8,
	  "user 'bob' refers to unknown profile 'nope'; defined profiles: r" },
	{ "group_unknown_profile", BASE "users:\n  '%dev': nope\n", 6, 11,
	  "group 'dev' refers to unknown profile 'nope'" },
	{ "default_unknown_profile", "version: 1\ngateway:\n  default_profile: rx\n"
	  "profiles:\n  r:\n    allow: [ls]\n", 3, 20,
	  "gateway.default_profile refers to unknown profile 'rx'" },

	/* durations, sizes, counts */
	{ "bad_duration", BASE "    limits: {timeout: 5x}\n", 5, 23,
	  "invalid duration '5x' for 'timeout'" },
	{ "negative_duration", BASE "    limits: {timeout: -5}\n", 5, 23,
	  "invalid duration '-5'" },
	{ "duration_overflow", BASE "    limits: {cpu: 99999999999d}\n", 5, 19,
	  "duration '99999999999d' for 'cpu' is too long" },
	{ "duration_zero", BASE "    limits: {idle_timeout: 0s}\n", 5, 28,
	  "'idle_timeout' must be positive" },
	{ "bad_size", BASE "    limits: {max_output: 12X}\n", 5, 26,
	  "invalid size '12X' for 'max_output'" },
	{ "size_overflow_suffix", BASE "    limits: {file_size: 9999999999T}\n", 5, 25,
	  "size '9999999999T' for 'file_size' is too large" },
	{ "size_overflow_digits", BASE
	  "    limits: {address_space: 99999999999999999999}\n", 5, 29, "too large" },
	{ "count_zero", BASE "    limits: {processes: 0}\n", 5, 25,
	  "'processes' must be between 1 and" },
	{ "count_not_number", BASE "    limits: {open_files: 1k}\n", 5, 26,
	  "expected a whole number for 'open_files', got '1k'" },

	/* CIDRs */
	{ "cidr_prefix_v4", IDENT "    from: [10.0.0.0/33]\n", 9, 12,
	  "invalid prefix length in '10.0.0.0/33': expected /0 to /32" },
	{ "cidr_prefix_v6", IDENT "    from: [\"fe80::/129\"]\n", 9, 12,
	  "expected /0 to /128" },
	{ "cidr_bad_addr", IDENT "    from: [10.0.0.300]\n", 9, 12,
	  "invalid address '10.0.0.300'" },
	{ "cidr_bad_prefix_text", IDENT "    from: [\"::1/x\"]\n", 9, 12,
	  "invalid prefix length" },
	{ "cidr_host_bits", IDENT "    from: [10.0.0.1/8]\n", 9, 12,
	  "'10.0.0.1/8' has host bits set (did you mean '10.0.0.0/8'?)" },
	{ "cidr_empty_list", IDENT "    from: []\n", 9, 11,
	  "'from' is an empty list" },

	/* accounts */
	{ "accounts_empty_list", IDENT "    accounts: []\n", 9, 15,
	  "'accounts' is an empty list" },
	{ "accounts_not_list", IDENT "    accounts: agent\n", 9, 15,
	  "expected a list of strings for 'accounts', got a string (write [\"agent\"])" },
	{ "accounts_bad_name", IDENT "    accounts: [agent, \"a b\"]\n", 9, 23,
	  "'a b' in 'accounts' is not an account or %group name" },
	{ "accounts_bare_percent", IDENT "    accounts: [\"%\"]\n", 9, 16,
	  "'%' in 'accounts' is not an account or %group name" },

	/* dates */
	{ "date_not_in_calendar", IDENT "    expires: 2027-02-30\n", 9, 14,
	  "'2027-02-30' is not a real calendar date" },
	{ "date_not_leap_year", IDENT "    expires: 2023-02-29\n", 9, 14,
	  "not a real calendar date" },
	{ "date_month_13", IDENT "    expires: 2027-13-01\n", 9, 14,
	  "not a real calendar date" },
	{ "date_bad_format", IDENT "    expires: 2027-6-30\n", 9, 14,
	  "invalid date '2027-6-30' for 'expires': expected YYYY-MM-DD" },

	/* tokens and keys */
	{ "token_short", BASE "identities:\n  - name: a\n    profile: r\n"
	  "    token_sha256: abc\n", 8, 19, "'token_sha256' must be 64 hexadecimal" },
	{ "token_not_hex", BASE "identities:\n  - name: a\n    profile: r\n"
	  "    token_sha256: " "g894ddb902c671b97aae683c7e776d4925e275610ff086faa6d00dd2bfe20e7a"
	  "\n", 8, 19, "64 hexadecimal digits" },
	{ "token_hash_not_scrypt", BASE "identities:\n  - name: a\n    profile: r\n"
	  "    token_hash: \"$2y$10$abc\"\n", 8, 17, "must look like $scrypt$" },
	{ "token_hash_cheap", BASE "identities:\n  - name: a\n    profile: r\n"
	  "    token_hash: \"$scrypt$ln=4,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$"
	  "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"\n", 8, 17, "out of range" },
	{ "token_hash_short_salt", BASE "identities:\n  - name: a\n    profile: r\n"
	  "    token_hash: \"$scrypt$ln=14,r=8,p=1$AAAA$"
	  "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"\n", 8, 17, "16-byte salt" },
	{ "token_both_kinds", IDENT "    token_hash: \"$scrypt$ln=14,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$"
	  "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"\n", 6, 5, "both 'token_sha256' and 'token_hash'" },
	{ "command_glob", "version: 1\nprofiles:\n  r:\n    allow: [ls, \"python3*\"]\n", 4, 17,
	  "command 'python3*' is not a pattern" },
	{ "key_in_two_identities", BASE "identities:\n"
	  "  - {name: a, profile: r, keys: [\"ssh-ed25519 " ED_B64 " a@x\"]}\n"
	  "  - {name: b, profile: r, keys: [\"ssh-ed25519 " ED_B64 " b@x\"]}\n", 7, 33,
	  "identity 'b' has a key of identity 'a' (at 6:5)" },
	{ "key_unknown_type", BASE "identities:\n  - name: a\n    profile: r\n"
	  "    keys: [\"ssh-foo AAAA\"]\n", 8, 12, "unknown SSH key type 'ssh-foo'" },
	{ "key_bad_base64", BASE "identities:\n  - name: a\n    profile: r\n"
	  "    keys: [\"ssh-ed25519 AAAA!AAA\"]\n", 8, 12, "not valid base64" },
	{ "key_no_data", BASE "identities:\n  - name: a\n    profile: r\n"
	  "    keys: [ssh-ed25519]\n", 8, 12, "has no key data" },
	{ "key_wrong_type", BASE "identities:\n  - name: a\n    profile: r\n"
	  "    keys: [\"ssh-rsa " ED_B64 "\"]\n", 8, 12,
	  "SSH key data does not hold a ssh-rsa key" },
	{ "key_truncated", BASE "identities:\n  - name: a\n    profile: r\n"
	  "    keys: [\"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5\"]\n", 8, 12,
	  "does not hold a ssh-ed25519 key" },
	{ "identity_without_secret", BASE "identities:\n  - name: a\n    profile: r\n",
	  6, 5, "identity 'a' has neither 'keys' nor 'token_sha256'" },
	{ "identity_without_profile", BASE "identities:\n  - name: a\n"
	  "    token_sha256: " TOK "\n", 6, 5, "identity 'a' has no 'profile'" },
	{ "identity_without_name", BASE "identities:\n  - profile: r\n"
	  "    token_sha256: " TOK "\n", 6, 5, "identity #1 has no 'name'" },

	/* ports */
	{ "port_zero", BASE "    network: {connect: [0]}\n", 5, 25,
	  "invalid port '0' in 'connect'" },
	{ "port_too_big", BASE "    network: {bind: [65536]}\n", 5, 22,
	  "invalid port '65536' in 'bind': expected a number from 1 to 65535" },
	{ "net_rule_bad_host", BASE "    network: {allow: [\"exa mple\"]}\n", 5, 23,
	  "network rule 'exa mple': 'exa' is not an HTTP method" },
	{ "net_rule_wild_middle", BASE "    network: {allow: [\"a.*.org\"]}\n", 5, 23,
	  "'a.*.org' is not a host name, '*.domain', '*' or an address" },
	{ "net_rule_path_no_method", BASE "    network: {allow: [\"deb.debian.org/debian\"]}\n",
	  5, 23, "a path needs a method rule" },
	{ "net_rule_port", BASE "    network: {allow: [\"github.com:99999\"]}\n", 5, 23,
	  "a port that is not a number from 1 to 65535" },
	{ "net_rule_method", BASE "    network: {allow: [\"FETCH x.org/\"]}\n", 5, 23,
	  "'FETCH' is not an HTTP method" },
	{ "net_preset_unknown", BASE "    network: {presets: [npm, cpan]}\n", 5, 30,
	  "unknown network preset 'cpan' (the presets are: npm, pypi, crates, go, github, debian)" },
	{ "net_unix_pattern", BASE "    network: {unix: [\"/run/pg/*.sock\"]}\n", 5, 22,
	  "'/run/pg/*.sock' in 'unix' is a pattern; name the socket, or the directory that "
	  "holds it" },
	{ "net_unix_relative", BASE "    network: {unix: [run/pg]}\n", 5, 22,
	  "path 'run/pg' in 'unix' must be absolute or start with '~/'" },
	{ "egress_resolve_not_addr", "version: 1\ngateway:\n  egress:\n    resolve: {a.org: b.org}\n"
	  "profiles:\n  r:\n    allow: [ls]\n", 4, 22, "'b.org' in 'resolve' is not an IPv4 or IPv6 "
	  "address" },
	{ "egress_unknown_key", "version: 1\ngateway:\n  egress:\n    resolv: {}\n"
	  "profiles:\n  r:\n    allow: [ls]\n", 4, 5, "unknown key 'resolv'" },
	{ "port_name", BASE "    network: {connect: [https]}\n", 5, 25,
	  "invalid port 'https'" },

	/* enum and boolean values */
	{ "sandbox_value", "version: 1\ngateway:\n  sandbox: maybe\n", 3, 12,
	  "invalid value 'maybe' for 'sandbox': expected one of required, "
	  "best_effort, off" },
	{ "sandbox_suggest", "version: 1\ngateway:\n  sandbox: best-effort\n", 3, 12,
	  "(did you mean 'best_effort'?)" },
	{ "sftp_value", BASE "    file_transfer: {sftp: rw}\n", 5, 27,
	  "invalid value 'rw' for 'sftp': expected one of off, read, write" },
	{ "feature_value", BASE "    features: {background: yes}\n", 5, 28,
	  "invalid value 'yes' for 'background': expected one of allow, deny" },
	{ "unknown_value", BASE "    unknown: maybe\n", 5, 14,
	  "expected one of deny, ask, allow" },
	{ "unknown_allow_strict", BASE "    unknown: allow\n", 5, 14,
	  "has 'unknown: allow' but is not 'tier: developer'" },
	{ "syslog_facility", "version: 1\ngateway:\n  audit: {syslog: authpirv}\n",
	  3, 19, "(did you mean 'authpriv'?)" },
	{ "on_error_value", BASE "    validator: {url: http://x, model: m, on_error: "
	  "allow}\n", 5, 52, "there is no fail-open mode" },
	{ "kind_value", BASE "    validator: {url: http://x, kind: claude}\n", 5, 38,
	  "expected one of openai, anthropic, opa, webhook" },
	{ "anthropic_model", BASE "    validator: {url: http://x, kind: anthropic}\n", 5, 16,
	  "validator of kind 'anthropic' needs a 'model'" },
	{ "min_confidence", BASE "    validator: {url: http://x, model: m, "
	  "min_confidence: 1.5}\n", 5, 58, "must be a number from 0 to 1" },
	{ "prompt_not_opa", BASE "    validator: {url: http://x, kind: opa, prompt_file: /p}\n",
	  5, 56, "'prompt_file' is for the LLM kinds" },
	{ "approval_not_llm", BASE "    validator: {url: http://x, model: m, approval_timeout: 5m}\n",
	  5, 60, "'approval_timeout' is for a webhook" },
	{ "validator_name", BASE "    validator: {url: http://x, model: m, name: \"a b\"}\n",
	  5, 48, "validator.name may contain only" },
	{ "bool_value", BASE "    file_transfer: {scp: yes}\n", 5, 26,
	  "expected true or false for 'scp', got 'yes'" },

	/* rules */
	{ "empty_allow", "version: 1\nprofiles:\n  r:\n    allow: []\n", 4, 12,
	  "'allow' is an empty list, so profile 'r' could run nothing" },
	{ "no_allow", "version: 1\nprofiles:\n  r:\n    deny: [ls]\n", 3, 3,
	  "profile 'r' has no 'allow' list" },
	{ "deny_rule_deny_args", BASE "    deny:\n      - {command: rm, deny_args: [x]}\n",
	  6, 23, "'deny_args' has no meaning in a deny rule (profiles.r.deny[0])" },
	{ "deny_rule_allow_options", BASE "    deny:\n      - ls\n"
	  "      - {command: git, allow_options: [-C]}\n", 7, 24,
	  "'allow_options' has no meaning in a deny rule (profiles.r.deny[1])" },
	{ "allow_option_not_option", "version: 1\nprofiles:\n  r:\n    allow:\n"
	  "      - {command: git, allow_options: [C]}\n", 5, 40,
	  "'C' in 'allow_options' is not an option" },
	{ "command_with_space", "version: 1\nprofiles:\n  r:\n    allow: [\"git status\"]\n",
	  4, 13, "command 'git status' contains white space" },
	{ "command_relative_path", "version: 1\nprofiles:\n  r:\n    allow: [bin/ls]\n",
	  4, 13, "must be a bare name or an absolute path" },
	{ "rule_without_command", "version: 1\nprofiles:\n  r:\n    allow:\n"
	  "      - {args: [x]}\n", 5, 9, "rule profiles.r.allow[0] has no 'command'" },
	{ "argv_with_args", "version: 1\nprofiles:\n  r:\n    allow:\n"
	  "      - {command: tar, argv: [-x], args: [y]}\n", 5, 24,
	  "rule profiles.r.allow[0] has both 'argv' and 'args'" },
	{ "argv_with_subcommands", "version: 1\nprofiles:\n  r:\n    allow:\n"
	  "      - {command: git, subcommands: [log], argv: [log]}\n", 5, 44,
	  "has both 'argv' and 'subcommands'" },
	{ "argv_with_allow_options", "version: 1\nprofiles:\n  r:\n    allow:\n"
	  "      - {command: git, argv: [-C, x, log], allow_options: [-C]}\n", 5, 24,
	  "has both 'argv' and 'allow_options'" },
	{ "deny_argv_with_args", BASE "    deny:\n"
	  "      - {command: rm, argv: [-rf, /], args: [x]}\n", 6, 23,
	  "rule profiles.r.deny[0] has both 'argv' and 'args'" },
	{ "argv_not_list", "version: 1\nprofiles:\n  r:\n    allow:\n"
	  "      - {command: tar, argv: -x}\n", 5, 30, "expected a list of strings for 'argv'" },
	{ "rule_name_twice", "version: 1\nprofiles:\n  r:\n    allow:\n"
	  "      - {name: up, command: ls}\n    deny:\n      - {command: rm, name: up}\n",
	  7, 29, "rule name 'up' is used twice in profile 'r'" },
	{ "rule_name_twice_in_allow", "version: 1\nprofiles:\n  r:\n    allow:\n"
	  "      - {name: a, command: ls}\n      - {name: a, command: cat}\n",
	  6, 16, "rule name 'a' is used twice" },
	{ "rule_name_chars", "version: 1\nprofiles:\n  r:\n    allow:\n"
	  "      - {name: \"a b\", command: ls}\n", 5, 16,
	  "rule name 'a b' may contain only letters" },
	{ "rule_empty_subcommands", "version: 1\nprofiles:\n  r:\n    allow:\n"
	  "      - {command: git, subcommands: []}\n", 5, 37,
	  "'subcommands' is an empty list" },
	{ "rule_item_list", "version: 1\nprofiles:\n  r:\n    allow: [[ls]]\n", 4, 13,
	  "expected a program name or a rule mapping in 'allow', got a list" },

	/* paths, env, names */
	{ "path_relative", BASE "    paths: {write: [work]}\n", 5, 21,
	  "path 'work' in 'write' must be absolute or start with '~/'" },
	{ "path_dotdot", BASE "    paths: {write: [/tmp/../etc]}\n", 5, 21,
	  "must not contain '..'" },
	{ "path_tilde_user", BASE "    paths: {read: [~root/x]}\n", 5, 20,
	  "must be absolute or start with '~/'" },
	{ "env_set_bad_name", BASE "    env: {set: {1X: y}}\n", 5, 17,
	  "'1X' in 'env.set' is not a valid environment variable name" },
	{ "env_allow_bad_name", BASE "    env: {allow: [A-B]}\n", 5, 19,
	  "'A-B' in 'allow' is not a valid environment variable name" },
	{ "env_deny_assignment", BASE "    env: {deny: [A=1]}\n", 5, 18,
	  "is not a variable name or pattern" },
	{ "env_set_value_list", BASE "    env: {set: {A: [1]}}\n", 5, 20,
	  "expected a string for 'env.set.A', got a list" },
	{ "user_bad_name", BASE "users:\n  'bad name': r\n", 6, 3,
	  "'bad name' is not a valid user name" },
	{ "profile_bad_name", "version: 1\nprofiles:\n  'a b':\n    allow: [ls]\n",
	  3, 3, "profile name 'a b' may contain only" },
	{ "identity_bad_name", IDENT "  - name: 'x y'\n", 9, 11,
	  "identity name 'x y' may contain only" },

	/* gateway and validator */
	{ "runner_relative", "version: 1\ngateway:\n  runner: bash\n", 3, 11,
	  "'runner' must be an absolute path, got 'bash'" },
	{ "audit_file_relative", "version: 1\ngateway:\n  audit: {file: audit.jsonl}\n",
	  3, 17, "'file' must be an absolute path" },
	{ "audit_url_scheme", "version: 1\ngateway:\n  audit: {http_url: "
	  "ftp://x}\n", 3, 21, "'http_url' must be an http:// or https:// URL" },
	{ "audit_spool_relative", "version: 1\ngateway:\n  audit:\n    http_url: "
	  "http://c/in\n    spool: spool\n", 5, 12, "'spool' must be an absolute path, "
	  "got 'spool'" },
	{ "audit_spool_without_collector", "version: 1\ngateway:\n  audit:\n"
	  "    file: /var/log/a.jsonl\n    spool: /var/spool/ag\n", 5, 5,
	  "'spool' keeps records for the collector in 'http_url', which is not set" },
	{ "audit_spool_not_scalar", "version: 1\ngateway:\n  audit: {http_url: "
	  "'http://c/', spool: [/a]}\n", 3, 41,
	  "expected an absolute path for 'spool', got a list" },
	{ "tier_unknown", BASE "    tier: lax\n", 5, 11,
	  "'lax'" },
	{ "paths_exec_in_strict_tier", BASE "    paths: {write: [~/w], exec: [~/w]}\n", 5, 33,
	  "profile 'r' has 'paths.exec' but is not 'tier: developer'" },
	{ "ask_without_validator", BASE "    unknown: ask\n", 5, 14,
	  "profile 'r' has 'unknown: ask' but no 'validator' to ask" },
	{ "validator_without_url", BASE "    validator: {model: m}\n", 5, 16,
	  "profiles.r.validator has no 'url'" },
	{ "validator_openai_no_model", BASE "    validator: {url: http://x}\n", 5, 16,
	  "validator of kind 'openai' needs a 'model'" },
	{ "validator_timeout_range", BASE "    validator: {url: http://x, model: m, "
	  "timeout_ms: 700000}\n", 5, 54, "'timeout_ms' must be between 1 and 600000" },

	/* gateway.server (agentgate serve) */
#define SRV "version: 1\ngateway:\n  server:\n"
	{ "server_unknown_key", SRV "    listn: [\"*:22\"]\n", 4, 5,
	  "unknown key 'listn' in gateway.server (did you mean 'listen'?)" },
	{ "server_listen_hostname", SRV "    listen: [\"localhost:22\"]\n", 4, 14,
	  "invalid address 'localhost:22' in 'listen'" },
	{ "server_listen_port_zero", SRV "    listen: [\"127.0.0.1:0\"]\n", 4, 14,
	  "invalid address '127.0.0.1:0'" },
	{ "server_listen_v6_unbracketed", SRV "    listen: [\"::1:22\"]\n", 4, 14,
	  "invalid address '::1:22'" },
	{ "server_listen_port_range", SRV "    listen: [\"[::1]:70000\"]\n", 4, 14,
	  "invalid address '[::1]:70000'" },
	{ "server_host_key_relative", SRV "    host_keys: [hostkey]\n", 4, 17,
	  "'host_keys' must be an absolute path, got 'hostkey'" },
	{ "server_auth_method_typo", SRV "    auth_methods: publickey,pasword\n", 4, 19,
	  "unknown authentication method 'pasword' in 'auth_methods': expected "
	  "publickey, keyboard-interactive or password (did you mean 'password'?)" },
	{ "server_auth_method_twice", SRV "    auth_methods: publickey,publickey\n", 4, 19,
	  "method 'publickey' appears twice in one chain" },
	{ "server_auth_two_pam_steps", SRV "    auth_methods: keyboard-interactive,password\n",
	  4, 19, "keyboard-interactive and password both go through PAM" },
	{ "server_auth_empty_step", SRV "    auth_methods: publickey,\n", 4, 19,
	  "empty method name in 'auth_methods'" },
	{ "server_auth_empty_list", SRV "    auth_methods: \" \"\n", 4, 19,
	  "'auth_methods' names no method" },
	{ "server_keys_relative", SRV "    authorized_keys: .ssh/keys\n", 4, 22,
	  "'authorized_keys' must be an absolute path or start with ~/ or %h/" },
	{ "server_keys_token", SRV "    authorized_keys: /etc/keys/%x\n", 4, 22,
	  "unknown token '%x' in 'authorized_keys'" },
	{ "server_keys_dotdot", SRV "    authorized_keys: ~/../root/keys\n", 4, 22,
	  "may not contain '..' components" },
	{ "server_max_tries_zero", SRV "    max_auth_tries: 0\n", 4, 21,
	  "'max_auth_tries' must be between 1 and 100" },
	{ "server_ciphers_space", SRV "    ciphers: \"aes128-ctr, aes256-ctr\"\n", 4, 14,
	  "invalid character ' ' in 'ciphers'" },
	{ "server_user_name", SRV "    allow_users: [\"a b\"]\n", 4, 19,
	  "'a b' in 'allow_users' is not a valid user or group name" },
	{ "observer_bad_name", "version: 1\ngateway:\n  observers: [alice, \"%a b\"]\n", 3, 22,
	  "'%a b' in 'observers' is not a user or %group name" },
	{ "server_accept_env_assignment", SRV "    accept_env: [\"A=B\"]\n", 4, 18,
	  "'A=B' in 'accept_env' is not a variable name or pattern" },
	{ "server_grace_zero", SRV "    login_grace_time: 0\n", 4, 23,
	  "'login_grace_time' must be positive" },
#undef SRV
	{ "redact_pattern_bad", BASE "    output: { redact_patterns: [\"ok\", \"(open\"] }\n", 5, 39,
	  "'(open' in 'redact_patterns' is not a POSIX extended regular expression" },
	{ "redact_not_bool", BASE "    output: { redact: yes please }\n", 5, 23,
	  "expected true or false for 'redact'" },
	/* upstreams (bastion mode) */
	{ "upstream_no_known_hosts", "version: 1\nupstreams:\n  web1:\n    host: h\n"
	  "    user: u\n    key: /k\n    profile: r\nprofiles:\n  r: {allow: [ls]}\n", 4, 5,
	  "upstream 'web1' has no 'known_hosts" },
	{ "upstream_unknown_profile", "version: 1\nupstreams:\n  web1:\n    host: 10.0.0.5\n    user: deploy\n    key: /k\n    known_hosts: /kh\n    profile: nosuch\n"
	  "profiles:\n  r: {allow: [ls]}\n", 8, 14, "upstream 'web1' refers to unknown profile 'nosuch'" },
	{ "upstream_developer_profile", "version: 1\nupstreams:\n  web1:\n    host: 10.0.0.5\n    user: deploy\n    key: /k\n    known_hosts: /kh\n    profile: d\n"
	  "profiles:\n  d: {allow: [ls], tier: developer}\n", 3, 3, "which is tier developer" },
	{ "upstream_named_local", "version: 1\nupstreams:\n  local: {host: h}\n"
	  "profiles:\n  r: {allow: [ls]}\n", 3, 3, "is not 'local'" },
	{ "upstream_host_option", "version: 1\nupstreams:\n  w: {host: \"-oProxyCommand=x\", "
	  "user: u, key: /k, known_hosts: /kh, profile: r}\nprofiles:\n  r: {allow: [ls]}\n", 3, 13,
	  "must be a host name or address" },
	{ "target_unknown", "version: 1\nupstreams:\n  web1:\n    host: 10.0.0.5\n    user: deploy\n    key: /k\n    known_hosts: /kh\n    profile: r\n"
	  "profiles:\n  r: {allow: [ls], targets: [web2]}\n", 10, 3,
	  "target 'web2', which is neither 'local' nor an upstream" },
	{ "upstream_verbatim_env", "version: 1\nupstreams:\n  w: {host: h, user: u, key: /k, "
	  "known_hosts: /kh, profile: r, verbatim: true, env: {A: b}}\nprofiles:\n  r: {allow: [ls]}\n",
	  3, 85, "'env' needs the runner script" },
	{ "upstream_port_zero", "version: 1\nupstreams:\n  w: {host: h, port: 0}\n"
	  "profiles:\n  r: {allow: [ls]}\n", 3, 22, "'port' must be between 1 and 65535" },
	{ "selectable_by_bad_name", "version: 1\nprofiles:\n  r: {allow: [ls], "
	  "selectable_by: [ok, \"a b\"]}\n", 3, 40, "is not an identity, account or %group name" },
};

static void
refuses_with_position(void **state)
{
	size_t i, failed = 0;

	(void)state;
	for (i = 0; i < sizeof(errcases) / sizeof(errcases[0]); i++) {
		const struct errcase *t = &errcases[i];
		struct ag_err err;
		struct ag_config *cfg;

		cfg = ag_config_parse(t->yaml, strlen(t->yaml), "test.yaml", &err);
		if (cfg != NULL || err.line != t->line || err.col != t->col ||
		    strstr(err.msg, t->msg) == NULL) {
			char buf[AG_ERR_MSG_MAX + 300];

			print_error("case %s: want %d:%d '%s'\n  got %s%s\n", t->name,
			    t->line, t->col, t->msg, cfg ? "(accepted) " : "",
			    ag_err_format(&err, buf, sizeof(buf)));
			ag_config_free(cfg);
			failed++;
			continue;
		}
		assert_string_equal(err.file, "test.yaml");
	}
	assert_int_equal(failed, 0);
}

/* argv (empty included) and name: the id a named rule gets, every rule's label */
static void
loads_argv_and_named_rules(void **state)
{
	static const char y[] =
	    "version: 1\n"
	    "profiles:\n"
	    "  backup:\n"
	    "    allow:\n"
	    "      - { name: restore, command: tar, argv: [\"-x\", \"-C\", /backup, \"-f\", \"-\"] }\n"
	    "      - { command: date, argv: [] }\n"
	    "      - ls\n"
	    "    deny:\n"
	    "      - { name: no-root.ls, command: ls, argv: [/] }\n";
	const struct ag_profile *p;
	struct ag_config *cfg;
	struct ag_err err;
	char buf[512];

	(void)state;
	cfg = ag_config_parse(y, sizeof(y) - 1, "test.yaml", &err);
	assert_non_null(cfg);
	p = ag_config_profile(cfg, "backup");
	assert_non_null(p);
	assert_true(p->allow[0].has_argv);
	assert_int_equal(p->allow[0].argv.n, 5);
	assert_string_equal(p->allow[0].argv.v[2], "/backup");
	assert_string_equal(p->allow[0].name, "restore");
	assert_string_equal(p->allow[0].id, "profiles.backup.allow.restore");
	assert_string_equal(p->allow[0].label, "profiles.backup.allow.restore (tar)");
	assert_true(p->allow[1].has_argv);
	assert_int_equal(p->allow[1].argv.n, 0);
	assert_false(ag_rule_is_plain(&p->allow[1]));
	assert_string_equal(p->allow[1].id, "profiles.backup.allow[1]");
	assert_string_equal(p->allow[1].label, "profiles.backup.allow[1] (date)");
	assert_false(p->allow[2].has_argv);
	assert_true(ag_rule_is_plain(&p->allow[2]));
	assert_string_equal(p->deny[0].id, "profiles.backup.deny.no-root.ls");
	assert_int_equal(p->deny[0].pos.line, 9);
	assert_ptr_equal(ag_profile_rule(p, "profiles.backup.allow[1]", 24), &p->allow[1]);
	assert_null(ag_profile_rule(p, "profiles.backup.allow[1]", 23));
	/* the audit's rule_label: each profile rule with its program, the rest as is */
	assert_int_equal(ag_config_rule_labels(cfg, "profiles.backup.allow[2],builtin", buf,
	    sizeof(buf)), 1);
	assert_string_equal(buf, "profiles.backup.allow[2] (ls), builtin");
	assert_int_equal(ag_config_rule_labels(cfg, "path:write", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "path:write");
	ag_config_free(cfg);
}

/* The exact rendering the issue asks for, end to end. */
static void
formats_unknown_key_like_a_compiler(void **state)
{
	static const char y[] = "version: 1\nprofiles:\n  readonly:\n    alow: [ls]\n";
	char buf[AG_ERR_MSG_MAX + 300];
	struct ag_err err;

	(void)state;
	assert_null(ag_config_parse(y, sizeof(y) - 1, "agentgate.yaml", &err));
	assert_string_equal(ag_err_format(&err, buf, sizeof(buf)),
	    "agentgate.yaml:4:5: unknown key 'alow' in profile 'readonly' "
	    "(did you mean 'allow'?)");
}

/* A NUL inside a quoted string must not silently cut the value short. */
static void
refuses_nul_in_string(void **state)
{
	static const char y[] = BASE "    env: {set: {A: \"x\\0y\"}}\n";
	static const char z[] = "version: 1\nprofiles:\n  r:\n    allow: [\"ls\\0rm\"]\n";
	struct ag_err err;

	(void)state;
	assert_null(ag_config_parse(y, sizeof(y) - 1, "t", &err));
	assert_int_equal(err.line, 5);
	assert_int_equal(err.col, 20);
	assert_non_null(strstr(err.msg, "NUL"));
	assert_null(ag_config_parse(z, sizeof(z) - 1, "t", &err));
	assert_int_equal(err.line, 4);
	assert_int_equal(err.col, 13);
	assert_non_null(strstr(err.msg, "NUL"));
}

/* ---- limits ---- */

static void
refuses_deep_nesting(void **state)
{
	char y[200];
	struct ag_err err;
	int n = snprintf(y, sizeof(y), "version: 1\nx: ");
	int i;

	(void)state;
	for (i = 0; i < 40; i++)
		y[n++] = '[';
	for (i = 0; i < 40; i++)
		y[n++] = ']';
	y[n++] = '\n';
	y[n] = '\0';
	assert_null(ag_config_parse(y, (size_t)n, "t", &err));
	/* The root mapping is level 1, so the 32nd '[' (column 4 + 31) is level 33. */
	assert_int_equal(err.line, 2);
	assert_int_equal(err.col, 4 + AG_CONFIG_MAX_DEPTH - 1);
	assert_non_null(strstr(err.msg, "nesting is deeper than 32 levels"));
}

static void
refuses_long_scalar(void **state)
{
	size_t n = 70000;
	char *y = malloc(n + 20);
	struct ag_err err;

	(void)state;
	assert_non_null(y);
	memcpy(y, "version: 1\nx: ", 14);
	memset(y + 14, 'a', n);
	y[14 + n] = '\n';
	assert_null(ag_config_parse(y, 15 + n, "t", &err));
	assert_int_equal(err.line, 2);
	assert_int_equal(err.col, 4);
	assert_non_null(strstr(err.msg, "longer than 65536 bytes"));
	free(y);
}

static void
refuses_too_many_nodes(void **state)
{
	size_t items = AG_CONFIG_MAX_NODES + 10, i, n;
	char *y = malloc(items * 2 + 32);
	struct ag_err err;

	(void)state;
	assert_non_null(y);
	n = (size_t)sprintf(y, "version: 1\nx: [");
	for (i = 0; i < items; i++) {
		y[n++] = '1';
		y[n++] = ',';
	}
	y[n - 1] = ']';
	assert_null(ag_config_parse(y, n, "t", &err));
	/*
	 * Events before the list items: stream, document, mapping start,
	 * "version", "1", "x", sequence start = 7.  The item that is event
	 * MAX_NODES + 1 sits at column 5 + 2 * (index from 0).
	 */
	assert_int_equal(err.line, 2);
	assert_int_equal(err.col, 5 + 2 * (AG_CONFIG_MAX_NODES + 1 - 7 - 1));
	assert_non_null(strstr(err.msg, "too many YAML nodes"));
	free(y);
}

static void
refuses_oversized_buffer(void **state)
{
	size_t n = AG_CONFIG_MAX_BYTES + 1;
	char *y = malloc(n);
	struct ag_err err;

	(void)state;
	assert_non_null(y);
	memset(y, '#', n);
	assert_null(ag_config_parse(y, n, "big.yaml", &err));
	assert_non_null(strstr(err.msg, "larger than"));
	assert_string_equal(err.file, "big.yaml");
	free(y);
}

/* accounts: lands as written; who it lets in (common/account.h) */
static void
identity_accounts_name_who_may_log_in(void **state)
{
	static const char y[] = BASE "identities:\n"
	    "  - name: a\n    profile: r\n    token_sha256: " TOK "\n"
	    "    accounts: [tbackup, \"%root\"]\n"
	    "  - name: b\n    profile: r\n    keys: [\"ssh-ed25519 " ED_B64 "\"]\n";
	static const char one[] = BASE "users: {agent: r}\nidentities:\n"
	    "  - name: b\n    profile: r\n    keys: [\"ssh-ed25519 " ED_B64 "\"]\n";
	const char *const other[] = { "agent", "agent" }, *const two[] = { "agent", "x" };
	const struct ag_identity *a, *b;
	struct ag_config *cfg;
	struct ag_err err;

	(void)state;
	cfg = ag_config_parse(y, sizeof(y) - 1, "t", &err);
	assert_non_null(cfg);
	a = ag_config_identity(cfg, "a");
	b = ag_config_identity(cfg, "b");
	assert_int_equal(a->accounts.n, 2);
	assert_string_equal(a->accounts.v[0], "tbackup");
	assert_string_equal(a->accounts.v[1], "%root");
	assert_int_equal(b->accounts.n, 0);
	/* by name (the account need not exist), by group, not otherwise */
	assert_true(ag_identity_allows_account(a, "tbackup"));
	assert_true(ag_identity_allows_account(a, "root"));
	assert_false(ag_identity_allows_account(a, "tagent"));
	assert_false(ag_identity_allows_account(a, "no-such-account-here"));
	assert_false(ag_identity_allows_account(a, NULL));
	assert_false(ag_identity_allows_account(a, ""));
	/* none: any account, as before */
	assert_true(ag_identity_allows_account(b, "tagent"));
	assert_true(ag_identity_allows_account(b, "tbackup"));
	/* a group, or two names: several accounts */
	assert_true(ag_policy_shared(cfg, NULL, 0));
	ag_config_free(cfg);
	cfg = ag_config_parse(one, sizeof(one) - 1, "t", &err);
	assert_non_null(cfg);
	assert_false(ag_policy_shared(cfg, NULL, 0));
	assert_false(ag_policy_shared(cfg, other, 2));
	assert_true(ag_policy_shared(cfg, two, 2));
	ag_config_free(cfg);
}

/* ---- a complete file lands in the structures ---- */

static const char full[] =
	"version: 1\n"
	"gateway:\n"
	"  runner: /usr/bin/bash\n"
	"  pam_service: agentgate-test\n"
	"  pam_confdir: /etc/agentgate/pam.d\n"
	"  sandbox: best_effort\n"
	"  default_profile: dev\n"
	"  audit:\n"
	"    file: /var/log/agentgate/audit.jsonl\n"
	"    syslog: local3\n"
	"    required: false\n"
	"    group: adm\n"
	"    http_url: https://logs.example/in\n"
	"  recordings: /var/log/agentgate/rec\n"
	"  recordings_input: true\n"
	"identities:\n"
	"  - name: ci-bot\n"
	"    keys:\n"
	"      - \"ssh-ed25519 " ED_B64 " ci-bot@build extra words\"\n"
	"      - \"ecdsa-sha2-nistp256 " EC_B64 "\"\n"
	"    profile: ro\n"
	"    from: [\"127.0.0.0/8\", \"10.1.2.3\", \"fd00::/8\"]\n"
	"    expires: 2024-02-29\n"
	"  - name: coder\n"
	"    token_sha256: " TOK "\n"
	"    profile: dev\n"
	"    disabled: true\n"
	"users:\n"
	"  agent: ro\n"
	"  '%builders': dev\n"
	"profiles:\n"
	"  ro:\n"
	"    allow:\n"
	"      - ls\n"
	"      - { command: git, subcommands: [status, log], allow_options: [\"-C\"] }\n"
	"      - { command: find, deny_args: [\"-exec*\", \"-delete\"] }\n"
	"      - /usr/bin/cat\n"
	"    deny:\n"
	"      - { command: cat, args: [\"/etc/shadow*\"] }\n"
	"    features:\n"
	"      command_substitution: deny\n"
	"      functions: allow\n"
	"      subshell: deny\n"
	"    paths: { read: [\"/\"], write: [\"~/work\", /tmp], protect: [\"~/x/**\"] }\n"
	"    network: { connect: [22, 443], bind: [] }\n"
	"    file_transfer: { sftp: write, scp: true, rsync: false }\n"
	"    env:\n"
	"      deny: [\"AWS_*\"]\n"
	"      allow: [TERM]\n"
	"      set: { PATH: \"/usr/bin:/bin\", EMPTY: \"\", LANG: C.UTF-8 }\n"
	"    limits:\n"
	"      timeout: 2m\n"
	"      max_output: 512K\n"
	"      idle_timeout: 1h\n"
	"      processes: 256\n"
	"      open_files: 1024\n"
	"      file_size: 1G\n"
	"      cpu: 90s\n"
	"      address_space: 2048M\n"
	"  dev:\n"
	"    allow: [make]\n"
	"    unknown: ask\n"
	"    validator:\n"
	"      url: http://127.0.0.1:8080/hook\n"
	"      kind: webhook\n"
	"      api_key_file: /etc/agentgate/validator.key\n"
	"      timeout_ms: 2500\n"
	"      on_error: deny\n"
	"      name: hook1\n"
	"      max_command_bytes: 100\n"
	"      max_answer_bytes: 2000\n"
	"      max_per_minute: 7\n"
	"      min_confidence: 0.75\n";

static void
loads_every_field(void **state)
{
	struct ag_err err;
	struct ag_config *cfg;
	const struct ag_profile *ro, *dev;
	const struct ag_identity *bot, *coder;
	static const unsigned char want_tok[4] = { 0x68, 0x94, 0xdd, 0xb9 };

	(void)state;
	cfg = ag_config_parse(full, sizeof(full) - 1, "full.yaml", &err);
	if (cfg == NULL)
		fail_msg("%s:%d:%d: %s", err.file, err.line, err.col, err.msg);
	assert_int_equal(cfg->version, 1);

	/* gateway */
	assert_string_equal(cfg->gw.runner, "/usr/bin/bash");
	assert_string_equal(cfg->gw.pam_service, "agentgate-test");
	assert_string_equal(cfg->gw.pam_confdir, "/etc/agentgate/pam.d");
	assert_int_equal(cfg->gw.sandbox, AG_SANDBOX_BEST_EFFORT);
	assert_string_equal(cfg->gw.default_profile_name, "dev");
	assert_ptr_equal(cfg->gw.default_profile, ag_config_profile(cfg, "dev"));
	assert_string_equal(cfg->gw.audit.file, "/var/log/agentgate/audit.jsonl");
	assert_true(cfg->gw.audit.has_syslog);
	assert_int_equal(cfg->gw.audit.syslog_facility, LOG_LOCAL3);
	assert_int_equal(cfg->gw.audit.required, 0);
	assert_string_equal(cfg->gw.audit.group, "adm");
	assert_string_equal(cfg->gw.audit.http_url, "https://logs.example/in");
	assert_string_equal(cfg->gw.recordings, "/var/log/agentgate/rec");
	assert_int_equal(cfg->gw.recordings_input, 1);

	/* identities */
	assert_int_equal(cfg->nidentities, 2);
	bot = ag_config_identity(cfg, "ci-bot");
	coder = ag_config_identity(cfg, "coder");
	assert_non_null(bot);
	assert_non_null(coder);
	assert_null(ag_config_identity(cfg, "nobody"));
	assert_int_equal(bot->keys.n, 2);
	assert_string_equal(bot->keys.v[0], "ssh-ed25519 " ED_B64);
	assert_string_equal(bot->keys.v[1], "ecdsa-sha2-nistp256 " EC_B64);
	assert_false(bot->has_token);
	assert_string_equal(bot->profile_name, "ro");
	assert_ptr_equal(bot->profile, ag_config_profile(cfg, "ro"));
	assert_int_equal(bot->nfrom, 3);
	assert_int_equal(bot->from[0].family, AF_INET);
	assert_int_equal(bot->from[0].prefix, 8);
	assert_int_equal(bot->from[0].addr[0], 127);
	assert_int_equal(bot->from[1].prefix, 32);
	assert_int_equal(bot->from[1].addr[3], 3);
	assert_int_equal(bot->from[2].family, AF_INET6);
	assert_int_equal(bot->from[2].prefix, 8);
	assert_int_equal(bot->from[2].addr[0], 0xfd);
	assert_true(bot->has_expires);
	/* 2024-02-29 is a leap day; valid through its end: 2024-03-01T00:00Z. */
	assert_int_equal((long long)bot->expires, 1709251200LL);
	assert_int_equal(bot->disabled, 0);
	assert_int_equal(bot->pos.line, 17);
	assert_int_equal(bot->pos.col, 5);
	assert_true(coder->has_token);
	assert_memory_equal(coder->token_sha256, want_tok, sizeof(want_tok));
	assert_int_equal(coder->token_sha256[31], 0x7a);
	assert_int_equal(coder->keys.n, 0);
	assert_int_equal(coder->nfrom, 0);
	assert_false(coder->has_expires);
	assert_int_equal(coder->disabled, 1);

	/* users */
	assert_int_equal(cfg->nusers, 2);
	assert_string_equal(cfg->users[0].name, "agent");
	assert_false(cfg->users[0].is_group);
	assert_ptr_equal(cfg->users[0].profile, ag_config_profile(cfg, "ro"));
	assert_string_equal(cfg->users[1].name, "builders");
	assert_true(cfg->users[1].is_group);
	assert_ptr_equal(cfg->users[1].profile, ag_config_profile(cfg, "dev"));
	assert_int_equal(cfg->users[1].pos.line, 30);

	/* profile ro */
	assert_int_equal(cfg->nprofiles, 2);
	ro = ag_config_profile(cfg, "ro");
	assert_non_null(ro);
	assert_int_equal(ro->pos.line, 32);
	assert_int_equal(ro->pos.col, 3);
	assert_int_equal(ro->nallow, 4);
	assert_string_equal(ro->allow[0].command, "ls");
	assert_string_equal(ro->allow[0].id, "profiles.ro.allow[0]");
	assert_int_equal(ro->allow[0].pos.line, 34);
	assert_int_equal(ro->allow[0].pos.col, 9);
	assert_int_equal(ro->allow[0].subcommands.n, 0);
	assert_string_equal(ro->allow[1].command, "git");
	assert_int_equal(ro->allow[1].subcommands.n, 2);
	assert_string_equal(ro->allow[1].subcommands.v[1], "log");
	assert_true(ag_strlist_contains(&ro->allow[1].allow_options, "-C"));
	assert_false(ag_strlist_contains(&ro->allow[1].allow_options, "-c"));
	assert_string_equal(ro->allow[1].id, "profiles.ro.allow[1]");
	assert_int_equal(ro->allow[1].pos.line, 35);
	assert_true(ag_strlist_match(&ro->allow[2].deny_args, "-execdir"));
	assert_true(ag_strlist_match(&ro->allow[2].deny_args, "-delete"));
	assert_false(ag_strlist_match(&ro->allow[2].deny_args, "-name"));
	assert_string_equal(ro->allow[3].command, "/usr/bin/cat");
	assert_int_equal(ro->ndeny, 1);
	assert_string_equal(ro->deny[0].id, "profiles.ro.deny[0]");
	assert_true(ag_strlist_match(&ro->deny[0].args, "/etc/shadow-"));
	assert_int_equal(ro->features.command_substitution, AG_FEATURE_DENY);
	assert_int_equal(ro->features.process_substitution, AG_FEATURE_ALLOW);
	assert_int_equal(ro->features.functions, AG_FEATURE_ALLOW);
	assert_int_equal(ro->features.background, AG_FEATURE_DENY);
	assert_int_equal(ro->features.coproc, AG_FEATURE_DENY);
	assert_int_equal(ro->features.subshell, AG_FEATURE_DENY);
	assert_int_equal(ro->paths_read.n, 1);
	assert_int_equal(ro->paths_write.n, 2);
	assert_string_equal(ro->paths_write.v[0], "~/work");
	assert_string_equal(ro->paths_write.v[1], "/tmp");
	assert_string_equal(ro->paths_protect.v[0], "~/x/**");
	assert_true(ro->has_network);
	assert_int_equal(ro->nnet_connect, 2);
	assert_int_equal(ro->net_connect[0], 22);
	assert_int_equal(ro->net_connect[1], 443);
	assert_int_equal(ro->nnet_bind, 0);
	assert_int_equal(ro->sftp, AG_TRANSFER_WRITE);
	assert_int_equal(ro->scp_legacy, 1);
	assert_int_equal(ro->rsync, 0);
	assert_true(ag_strlist_match(&ro->env_deny, "AWS_SECRET_ACCESS_KEY"));
	assert_true(ag_strlist_contains(&ro->env_allow, "TERM"));
	assert_int_equal(ro->env_set_keys.n, 3);
	assert_int_equal(ro->env_set_vals.n, 3);
	assert_string_equal(ro->env_set_keys.v[0], "PATH");
	assert_string_equal(ro->env_set_vals.v[0], "/usr/bin:/bin");
	assert_string_equal(ro->env_set_keys.v[1], "EMPTY");
	assert_string_equal(ro->env_set_vals.v[1], "");
	assert_string_equal(ro->env_set_vals.v[2], "C.UTF-8");
	assert_int_equal(ro->limits.timeout, 120);
	assert_int_equal(ro->limits.max_output, 512 * 1024);
	assert_int_equal(ro->limits.idle_timeout, 3600);
	assert_int_equal(ro->limits.processes, 256);
	assert_int_equal(ro->limits.open_files, 1024);
	assert_int_equal(ro->limits.file_size, 1LL << 30);
	assert_int_equal(ro->limits.cpu, 90);
	assert_int_equal(ro->limits.address_space, 2048LL << 20);
	assert_int_equal(ro->unknown, AG_UNKNOWN_DENY);
	assert_null(ro->validator);

	/* profile dev: defaults where nothing is written */
	dev = ag_config_profile(cfg, "dev");
	assert_non_null(dev);
	assert_int_equal(dev->unknown, AG_UNKNOWN_ASK);
	assert_false(dev->has_network);
	assert_int_equal(dev->sftp, AG_TRANSFER_OFF);
	assert_int_equal(dev->features.command_substitution, AG_FEATURE_ALLOW);
	assert_int_equal(dev->features.functions, AG_FEATURE_DENY);
	assert_int_equal(dev->features.background, AG_FEATURE_DENY);
	assert_int_equal(dev->features.coproc, AG_FEATURE_DENY);
	assert_int_equal(dev->features.subshell, AG_FEATURE_ALLOW);
	assert_int_equal(dev->limits.timeout, 0);
	assert_int_equal(dev->ndeny, 0);
	assert_non_null(dev->validator);
	assert_string_equal(dev->validator->url, "http://127.0.0.1:8080/hook");
	assert_int_equal(dev->validator->kind, AG_VK_WEBHOOK);
	assert_string_equal(dev->validator->name, "hook1");
	assert_int_equal(dev->validator->max_command_bytes, 100);
	assert_int_equal(dev->validator->max_answer_bytes, 2000);
	assert_int_equal(dev->validator->max_per_minute, 7);
	assert_true(dev->validator->has_min_confidence);
	assert_true(dev->validator->min_confidence > 0.749 && dev->validator->min_confidence < 0.751);
	assert_null(dev->validator->model);
	assert_string_equal(dev->validator->api_key_file,
	    "/etc/agentgate/validator.key");
	assert_int_equal(dev->validator->timeout_ms, 2500);
	assert_int_equal(dev->validator->pos.line, 64);
	assert_null(ag_config_profile(cfg, "nope"));
	ag_config_free(cfg);
}

static void
loads_audit_spool_and_observers(void **state)
{
	static const char y[] = "version: 1\ngateway:\n  audit:\n"
	    "    http_url: http://127.0.0.1:9/in\n    spool: /var/spool/agentgate\n"
	    "  observers: [alice, \"%oncall\"]\n"
	    "profiles:\n  p:\n    allow: [ls]\n";
	struct ag_err err;
	struct ag_config *cfg;

	(void)state;
	cfg = ag_config_parse(y, sizeof(y) - 1, "s.yaml", &err);
	if (cfg == NULL)
		fail_msg("%s", err.msg);
	assert_string_equal(cfg->gw.audit.http_url, "http://127.0.0.1:9/in");
	assert_string_equal(cfg->gw.audit.spool, "/var/spool/agentgate");
	assert_null(cfg->gw.audit.file);
	/* and who may watch sessions */
	assert_int_equal(cfg->gw.observers.n, 2);
	assert_string_equal(cfg->gw.observers.v[1], "%oncall");
	ag_config_free(cfg);
}

static void
applies_defaults(void **state)
{
	static const char y[] = "version: 1\nprofiles:\n  p:\n    allow: [ls]\n"
	    "    unknown: ask\n    validator: {url: \"https://v\", model: m}\n";
	struct ag_err err;
	struct ag_config *cfg;

	(void)state;
	cfg = ag_config_parse(y, sizeof(y) - 1, "d.yaml", &err);
	if (cfg == NULL)
		fail_msg("%s", err.msg);
	assert_string_equal(cfg->path, "d.yaml");
	assert_string_equal(cfg->gw.runner, "/bin/bash");
	assert_string_equal(cfg->gw.pam_service, "agentgate");
	assert_null(cfg->gw.pam_confdir);
	assert_int_equal(cfg->gw.sandbox, AG_SANDBOX_REQUIRED);
	assert_null(cfg->gw.default_profile);
	assert_null(cfg->gw.audit.file);
	assert_false(cfg->gw.audit.has_syslog);
	assert_int_equal(cfg->gw.audit.required, 1);
	assert_null(cfg->gw.audit.http_url);
	assert_null(cfg->gw.audit.spool);
	assert_null(cfg->gw.recordings);
	assert_int_equal(cfg->nidentities, 0);
	assert_int_equal(cfg->nusers, 0);
	assert_int_equal(cfg->profiles[0].validator->kind, AG_VK_OPENAI);
	assert_string_equal(cfg->profiles[0].validator->name, "openai");
	assert_int_equal(cfg->profiles[0].validator->timeout_ms, 4000);
	assert_int_equal(cfg->profiles[0].validator->max_command_bytes, 8192);
	assert_int_equal(cfg->profiles[0].validator->max_per_minute, 30);
	assert_false(cfg->profiles[0].validator->has_min_confidence);
	ag_config_free(cfg);
}

/* A profile may be named before it is defined. */
static void
resolves_forward_references(void **state)
{
	static const char y[] = "version: 1\nusers: {bob: late}\n"
	    "gateway: {default_profile: late}\nprofiles:\n  late: {allow: [ls]}\n";
	struct ag_err err;
	struct ag_config *cfg;

	(void)state;
	cfg = ag_config_parse(y, sizeof(y) - 1, "f.yaml", &err);
	assert_non_null(cfg);
	assert_ptr_equal(cfg->users[0].profile, &cfg->profiles[0]);
	assert_ptr_equal(cfg->gw.default_profile, &cfg->profiles[0]);
	ag_config_free(cfg);
}

static void
loads_shipped_example(void **state)
{
	struct ag_err err;
	struct ag_config *cfg;
	const struct ag_profile *ro, *dev;
	const struct ag_identity *id;
	size_t i;
	int git = 0, vi = 0;

	(void)state;
	cfg = ag_config_load(TOP_SRCDIR "/etc/agentgate.yaml", AG_CONFIG_NO_PERMCHECK,
	    &err);
	if (cfg == NULL)
		fail_msg("%s:%d:%d: %s", err.file, err.line, err.col, err.msg);
	assert_string_equal(cfg->path, TOP_SRCDIR "/etc/agentgate.yaml");
	/* design.md's meaning: readonly default, ci-bot and coder, agent → readonly */
	ro = ag_config_profile(cfg, "readonly");
	dev = ag_config_profile(cfg, "developer");
	assert_non_null(ro);
	assert_non_null(dev);
	assert_ptr_equal(cfg->gw.default_profile, ro);
	assert_string_equal(cfg->gw.audit.file, "/var/log/agentgate/audit.jsonl");
	assert_int_equal(cfg->gw.audit.syslog_facility, LOG_AUTHPRIV);
	id = ag_config_identity(cfg, "ci-bot");
	assert_non_null(id);
	assert_ptr_equal(id->profile, ro);
	assert_int_equal(id->keys.n, 1);
	id = ag_config_identity(cfg, "coder");
	assert_non_null(id);
	assert_ptr_equal(id->profile, dev);
	assert_true(id->has_token_hash);	/* salted, as agentgate token new makes */
	assert_false(id->has_token);
	assert_string_equal(cfg->users[0].name, "agent");
	assert_ptr_equal(cfg->users[0].profile, ro);
	assert_int_equal(ro->unknown, AG_UNKNOWN_DENY);
	assert_int_equal(ro->features.functions, AG_FEATURE_DENY);
	assert_int_equal(ro->tier, AG_TIER_STRICT);
	assert_int_equal(dev->tier, AG_TIER_DEVELOPER);
	assert_int_equal(dev->paths_exec.n, 2);
	assert_string_equal(dev->paths_exec.v[0], "~/work");
	assert_string_equal(dev->paths_exec.v[1], "/tmp");
	/* the typed line refuses only what the kernel cannot hold */
	assert_int_equal(dev->unknown, AG_UNKNOWN_ALLOW);
	assert_int_equal(dev->features.functions, AG_FEATURE_ALLOW);
	assert_int_equal(dev->features.background, AG_FEATURE_ALLOW);
	assert_non_null(dev->validator);
	assert_int_equal(dev->validator->kind, AG_VK_OPENAI);
	assert_string_equal(dev->validator->name, "local-llm");
	assert_string_equal(dev->validator->url, "http://127.0.0.1:11434/v1/chat/completions");
	assert_null(dev->validator->api_key_file);	/* a local server needs none */
	/* git with every subcommand; pushing is a deny rule */
	for (i = 0; i < dev->nallow; i++)
		if (strcmp(dev->allow[i].command, "git") == 0 && ag_rule_is_plain(&dev->allow[i]))
			git = 1;
	for (i = 0; i < dev->ndeny; i++) {
		if (strcmp(dev->deny[i].command, "vi") == 0)
			vi = 1;
		if (strcmp(dev->deny[i].command, "git") == 0 &&
		    ag_strlist_contains(&dev->deny[i].subcommands, "push"))
			git++;
	}
	assert_int_equal(git, 2);
	assert_true(vi);
	ag_config_free(cfg);
}

static void
helpers_match_like_fnmatch(void **state)
{
	char a[] = "AWS_*", b[] = "GITHUB_TOKEN", c[] = "-exec*";
	char *v[] = { a, b, c };
	struct ag_strlist l = { v, 3 };

	(void)state;
	assert_true(ag_glob_match("AWS_*", "AWS_KEY"));
	assert_false(ag_glob_match("AWS_*", "XAWS_KEY"));
	/* No FNM_PATHNAME: '*' crosses '/' as the header promises. */
	assert_true(ag_glob_match("/etc/*", "/etc/ssh/sshd_config"));
	assert_true(ag_glob_match("~/notes/secret/**", "~/notes/secret/a/b"));
	assert_true(ag_glob_match("[ab]?", "bz"));
	assert_false(ag_glob_match(NULL, "x"));
	assert_true(ag_strlist_match(&l, "-execdir"));
	assert_false(ag_strlist_match(&l, "GITHUB"));
	assert_false(ag_strlist_match(NULL, "x"));
	/* contains is exact, not glob */
	assert_true(ag_strlist_contains(&l, "AWS_*"));
	assert_false(ag_strlist_contains(&l, "AWS_KEY"));
	assert_false(ag_strlist_contains(NULL, "x"));
	ag_config_free(NULL);
}

/* ---- permissions ---- */

struct permdir {
	char	dir[256];	/* realpath of the temp dir */
	char	file[300];
};

static const char good_yaml[] = "version: 1\nprofiles:\n  p: {allow: [ls]}\n";

static int
perm_setup(void **state)
{
	struct permdir *pd = calloc(1, sizeof(*pd));
	char tmpl[] = "/tmp/agentgate-test-config-XXXXXX";
	char *real;
	FILE *fp;

	if (pd == NULL || mkdtemp(tmpl) == NULL)
		return -1;
	if ((real = realpath(tmpl, NULL)) == NULL)
		return -1;
	snprintf(pd->dir, sizeof(pd->dir), "%s", real);
	free(real);
	chmod(pd->dir, 0755);
	snprintf(pd->file, sizeof(pd->file), "%s/agentgate.yaml", pd->dir);
	if ((fp = fopen(pd->file, "w")) == NULL)
		return -1;
	fputs(good_yaml, fp);
	fclose(fp);
	chmod(pd->file, 0644);
	*state = pd;
	return 0;
}

static int
perm_teardown(void **state)
{
	struct permdir *pd = *state;
	char p[400];

	snprintf(p, sizeof(p), "%s/link.yaml", pd->dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/lnk", pd->dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/sub/agentgate.yaml", pd->dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/sub", pd->dir);
	rmdir(p);
	unlink(pd->file);
	rmdir(pd->dir);
	free(pd);
	return 0;
}

static void
perms_accept_safe_file(void **state)
{
	struct permdir *pd = *state;
	struct ag_err err;
	struct ag_config *cfg;
	struct stat st;

	/* /tmp itself is world-writable but root-owned and sticky. */
	assert_int_equal(stat("/tmp", &st), 0);
	if (st.st_uid != 0 || !(st.st_mode & S_ISVTX))
		skip();
	assert_int_equal(ag_config_check_perms(pd->file, &err), 0);
	cfg = ag_config_load(pd->file, 0, &err);
	if (cfg == NULL)
		fail_msg("%s: %s", err.file, err.msg);
	assert_string_equal(cfg->path, pd->file);
	assert_int_equal(cfg->nprofiles, 1);
	ag_config_free(cfg);
}

static void
perms_refuse_group_writable_dir(void **state)
{
	struct permdir *pd = *state;
	struct ag_err err;
	struct ag_config *cfg;
	char want[1024];

	assert_int_equal(chmod(pd->dir, 0775), 0);
	assert_int_equal(ag_config_check_perms(pd->file, &err), -1);
	snprintf(want, sizeof(want), "unsafe: directory %s is writable by its "
	    "group (mode 0775); fix: chmod go-w %s", pd->dir, pd->dir);
	assert_string_equal(err.msg, want);
	assert_string_equal(err.file, pd->file);
	/* and the loader refuses the (valid) file for the same reason */
	assert_null(ag_config_load(pd->file, 0, &err));
	assert_string_equal(err.msg, want);
	/* unless told not to check (tests, fuzzing) */
	cfg = ag_config_load(pd->file, AG_CONFIG_NO_PERMCHECK, &err);
	assert_non_null(cfg);
	ag_config_free(cfg);
	chmod(pd->dir, 0755);
}

static void
perms_refuse_world_writable_file(void **state)
{
	struct permdir *pd = *state;
	struct ag_err err;
	char want[1024];

	assert_int_equal(chmod(pd->file, 0646), 0);
	assert_int_equal(ag_config_check_perms(pd->file, &err), -1);
	snprintf(want, sizeof(want), "unsafe: file %s is writable by everyone "
	    "(mode 0646); fix: chmod go-w %s", pd->file, pd->file);
	assert_string_equal(err.msg, want);
	assert_int_equal(chmod(pd->file, 0664), 0);
	assert_int_equal(ag_config_check_perms(pd->file, &err), -1);
	assert_non_null(strstr(err.msg, "writable by its group (mode 0664)"));
	chmod(pd->file, 0644);
}

/* World-writable directories pass only when root-owned and sticky. */
static void
perms_sticky_only_for_root(void **state)
{
	struct permdir *pd = *state;
	struct ag_err err;
	int rc;

	assert_int_equal(chmod(pd->dir, 01777), 0);
	rc = ag_config_check_perms(pd->file, &err);
	if (geteuid() == 0) {
		assert_int_equal(rc, 0);
	} else {
		assert_int_equal(rc, -1);
		assert_non_null(strstr(err.msg, pd->dir));
	}
	assert_int_equal(chmod(pd->dir, 0777), 0);
	assert_int_equal(ag_config_check_perms(pd->file, &err), -1);
	assert_non_null(strstr(err.msg, "writable by everyone (mode 0777)"));
	chmod(pd->dir, 0755);
}

static void
perms_refuse_foreign_owner(void **state)
{
	struct permdir *pd = *state;
	struct ag_err err;

	if (geteuid() != 0)
		skip();		/* only root can give a file away */
	assert_int_equal(chown(pd->file, 4242, 4242), 0);
	assert_int_equal(ag_config_check_perms(pd->file, &err), -1);
	assert_non_null(strstr(err.msg, "is owned by uid 4242"));
	assert_non_null(strstr(err.msg, pd->file));
	assert_non_null(strstr(err.msg, "chown root"));
	assert_int_equal(chown(pd->file, 0, 0), 0);
}

static void
perms_refuse_non_regular_and_missing(void **state)
{
	struct permdir *pd = *state;
	struct ag_err err;
	char sub[400], want[1024];

	snprintf(sub, sizeof(sub), "%s/sub", pd->dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(ag_config_check_perms(sub, &err), -1);
	snprintf(want, sizeof(want), "unsafe: %s is not a regular file", sub);
	assert_string_equal(err.msg, want);
	assert_null(ag_config_load(sub, AG_CONFIG_NO_PERMCHECK, &err));
	assert_non_null(strstr(err.msg, "not a regular file"));
	snprintf(sub, sizeof(sub), "%s/missing.yaml", pd->dir);
	assert_int_equal(ag_config_check_perms(sub, &err), -1);
	assert_string_equal(err.msg, "cannot open: No such file or directory");
	assert_string_equal(err.file, sub);
}

/*
 * A symlink is followed for the check (the target and its directories are
 * what get checked) but the unchecked loader refuses to follow one.
 */
static void
perms_check_symlink_target(void **state)
{
	struct permdir *pd = *state;
	struct ag_err err;
	struct ag_config *cfg;
	char link[400];
	struct stat st;

	assert_int_equal(stat("/tmp", &st), 0);
	if (st.st_uid != 0 || !(st.st_mode & S_ISVTX))
		skip();
	snprintf(link, sizeof(link), "%s/link.yaml", pd->dir);
	assert_int_equal(symlink(pd->file, link), 0);
	cfg = ag_config_load(link, 0, &err);
	assert_non_null(cfg);
	ag_config_free(cfg);
	assert_null(ag_config_load(link, AG_CONFIG_NO_PERMCHECK, &err));
	assert_non_null(strstr(err.msg, "cannot open"));
	assert_int_equal(chmod(pd->file, 0666), 0);
	assert_null(ag_config_load(link, 0, &err));
	assert_non_null(strstr(err.msg, pd->file));
	chmod(pd->file, 0644);
}

/*
 * A safe-looking path through a symlinked directory must not hide an
 * unsafe directory behind it: the real path is what is checked.
 */
static void
perms_see_through_symlinked_dir(void **state)
{
	struct permdir *pd = *state;
	struct ag_err err;
	char sub[400], lnk[400], file[500], via[500], want[1024];
	FILE *fp;

	snprintf(sub, sizeof(sub), "%s/sub", pd->dir);
	snprintf(lnk, sizeof(lnk), "%s/lnk", pd->dir);
	snprintf(file, sizeof(file), "%s/agentgate.yaml", sub);
	snprintf(via, sizeof(via), "%s/agentgate.yaml", lnk);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(chmod(sub, 0777), 0);
	assert_non_null(fp = fopen(file, "w"));
	fputs(good_yaml, fp);
	fclose(fp);
	assert_int_equal(chmod(file, 0644), 0);
	assert_int_equal(symlink("sub", lnk), 0);
	assert_null(ag_config_load(via, 0, &err));
	snprintf(want, sizeof(want), "unsafe: directory %s is writable by "
	    "everyone (mode 0777); fix: chmod go-w %s", sub, sub);
	assert_string_equal(err.msg, want);
	assert_string_equal(err.file, via);
}

static void
load_refuses_oversized_file(void **state)
{
	struct permdir *pd = *state;
	struct ag_err err;

	assert_int_equal(truncate(pd->file, AG_CONFIG_MAX_BYTES + 1), 0);
	assert_null(ag_config_load(pd->file, AG_CONFIG_NO_PERMCHECK, &err));
	assert_string_equal(err.msg, "file is larger than 4194304 bytes");
	assert_string_equal(err.file, pd->file);
	/* exactly at the limit it is read, and then judged as YAML */
	assert_int_equal(truncate(pd->file, AG_CONFIG_MAX_BYTES), 0);
	assert_null(ag_config_load(pd->file, AG_CONFIG_NO_PERMCHECK, &err));
	assert_null(strstr(err.msg, "larger"));
	assert_int_equal(err.line, 4);
}

/* upstreams and targets: every field, defaults, the profile marked a target's. */
static void
loads_upstreams(void **state)
{
	static const char yaml[] =
	    "version: 1\n"
	    "upstreams:\n"
	    "  web1:\n"
	    "    host: 10.0.0.5\n"
	    "    port: 2200\n"
	    "    user: deploy\n"
	    "    key: /etc/agentgate/upstream/web1\n"
	    "    known_hosts: /etc/agentgate/upstream/known_hosts\n"
	    "    hostkey_algorithms: ssh-ed25519\n"
	    "    connect_timeout: 5s\n"
	    "    profile: web\n"
	    "    env: { DEPLOY_ENV: staging }\n"
	    "  db1: {host: db, user: u, key: /k, known_hosts: /kh, profile: web}\n"
	    "profiles:\n"
	    "  ops: {allow: [ls], targets: [local, web1]}\n"
	    "  web: {allow: [uptime]}\n";
	const struct ag_upstream *u;
	struct ag_config *cfg;
	struct ag_err err;

	(void)state;
	cfg = ag_config_parse(yaml, strlen(yaml), "t.yaml", &err);
	if (cfg == NULL)
		fail_msg("%s", err.msg);
	assert_int_equal(cfg->nupstreams, 2);
	u = ag_config_upstream(cfg, "web1");
	assert_non_null(u);
	assert_string_equal(u->host, "10.0.0.5");
	assert_int_equal(u->port, 2200);
	assert_string_equal(u->user, "deploy");
	assert_string_equal(u->known_hosts, "/etc/agentgate/upstream/known_hosts");
	assert_string_equal(u->hostkey_algorithms, "ssh-ed25519");
	assert_int_equal(u->connect_timeout, 5);
	assert_ptr_equal(u->profile, ag_config_profile(cfg, "web"));
	assert_true(u->profile->is_target);
	assert_int_equal(u->env_keys.n, 1);
	assert_string_equal(u->env_vals.v[0], "staging");
	u = ag_config_upstream(cfg, "db1");
	assert_int_equal(u->port, 22);
	assert_int_equal(u->connect_timeout, 10);
	assert_true(ag_profile_may_target(ag_config_profile(cfg, "ops"), "web1"));
	assert_true(ag_profile_may_target(ag_config_profile(cfg, "ops"), "local"));
	assert_false(ag_profile_may_target(ag_config_profile(cfg, "ops"), "db1"));
	/* no targets: this host only */
	assert_true(ag_profile_may_target(ag_config_profile(cfg, "web"), "local"));
	assert_false(ag_profile_may_target(ag_config_profile(cfg, "web"), "web1"));
	assert_false(ag_config_profile(cfg, "ops")->is_target);
	ag_config_free(cfg);
}

/* gateway.server: every field, chains in order, and absence = defaults. */
static void
loads_server_block(void **state)
{
	static const char yaml[] =
	    "version: 1\n"
	    "gateway:\n"
	    "  server:\n"
	    "    listen: [\"0.0.0.0:2222\", \"[::1]:2222\", \"*:22\"]\n"
	    "    host_keys: [/etc/agentgate/k1, /etc/agentgate/k2]\n"
	    "    allow_users: [agent]\n"
	    "    allow_groups: [agents]\n"
	    "    max_connections: 50\n"
	    "    max_per_source: 5\n"
	    "    max_sessions: 3\n"
	    "    login_grace_time: 2m\n"
	    "    max_auth_tries: 4\n"
	    "    keepalive: 30s\n"
	    "    authorized_keys: \"/etc/agentgate/keys/%u\"\n"
	    "    auth_methods: \"publickey,keyboard-interactive password\"\n"
	    "    accept_env: [LANG, \"LC_*\"]\n"
	    "    ciphers: aes256-gcm@openssh.com\n"
	    "    kex: curve25519-sha256\n"
	    "    macs: hmac-sha2-256-etm@openssh.com\n"
	    "    hostkey_algorithms: ssh-ed25519\n"
	    "profiles:\n  r: {allow: [ls]}\n";
	const struct ag_server_conf *sc;
	struct ag_config *cfg;
	struct ag_err err;

	(void)state;
	cfg = ag_config_parse(yaml, strlen(yaml), "t.yaml", &err);
	if (cfg == NULL)
		fail_msg("%s:%d:%d: %s", err.file, err.line, err.col, err.msg);
	sc = &cfg->gw.server;
	assert_true(sc->present);
	assert_int_equal(sc->listen.n, 3);
	assert_string_equal(sc->listen.v[1], "[::1]:2222");
	assert_int_equal(sc->host_keys.n, 2);
	assert_string_equal(sc->allow_users.v[0], "agent");
	assert_string_equal(sc->allow_groups.v[0], "agents");
	assert_int_equal(sc->max_connections, 50);
	assert_int_equal(sc->max_per_source, 5);
	assert_int_equal(sc->max_sessions, 3);
	assert_int_equal(sc->login_grace_time, 120);
	assert_int_equal(sc->max_auth_tries, 4);
	assert_int_equal(sc->keepalive, 30);
	assert_string_equal(sc->authorized_keys, "/etc/agentgate/keys/%u");
	assert_int_equal(sc->nchains, 2);
	assert_int_equal(sc->chains[0].nsteps, 2);
	assert_int_equal(sc->chains[0].step[0], AG_AUTH_PUBLICKEY);
	assert_int_equal(sc->chains[0].step[1], AG_AUTH_KBDINT);
	assert_int_equal(sc->chains[1].nsteps, 1);
	assert_int_equal(sc->chains[1].step[0], AG_AUTH_PASSWORD);
	assert_int_equal(sc->accept_env.n, 2);
	assert_string_equal(sc->ciphers, "aes256-gcm@openssh.com");
	assert_string_equal(sc->kex, "curve25519-sha256");
	assert_string_equal(sc->macs, "hmac-sha2-256-etm@openssh.com");
	assert_string_equal(sc->hostkey_algorithms, "ssh-ed25519");
	ag_config_free(cfg);

	/* absent: all zero, which the server reads as its defaults */
	cfg = ag_config_parse("version: 1\nprofiles:\n  r: {allow: [ls]}\n", 40, "t.yaml",
	    &err);
	assert_non_null(cfg);
	assert_false(cfg->gw.server.present);
	assert_int_equal(cfg->gw.server.listen.n, 0);
	assert_int_equal(cfg->gw.server.nchains, 0);
	assert_null(cfg->gw.server.authorized_keys);
	ag_config_free(cfg);
}


/* ---- documentation ---- */

struct doc {
	char	*text;
	char	 missing[2048];
};

static void
doc_has_key(const char *section, const char *key, void *arg)
{
	struct doc *d = arg;
	size_t n, klen = strlen(key);
	const char *l;

	/* introduced in bold where the page describes it: a word of a ".B" or
	 * ".BR" line (".BR ciphers \", \" kex ...") */
	for (l = d->text; (l = strstr(l, "\n.B")) != NULL; l++) {
		const char *p = l + 3, *end = strchr(p, '\n');

		if (*p == 'R')
			p++;
		if (*p != ' ' || end == NULL)
			continue;
		for (; p + klen <= end; p++)
			if (strncmp(p, key, klen) == 0 && strchr(" \"", p[-1]) != NULL &&
			    strchr(" \"\n", p[klen]) != NULL)
				return;
	}
	n = strlen(d->missing);
	snprintf(d->missing + n, sizeof(d->missing) - n, " %s%s%s", section,
	    section[0] ? "." : "", key);
}

/* Every key the loader reads is in agentgate.yaml(5). */
static void
every_key_is_documented(void **state)
{
	const char *top = getenv("top_srcdir");
	char path[4096];
	struct doc d;
	FILE *fp;
	long len;

	(void)state;
	snprintf(path, sizeof(path), "%s/man/agentgate.yaml.5", top ? top : "../..");
	fp = fopen(path, "r");
	if (fp == NULL)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	len = ftell(fp);
	rewind(fp);
	d.text = calloc(1, (size_t)len + 2);
	assert_non_null(d.text);
	d.text[0] = '\n';
	assert_int_equal(fread(d.text + 1, 1, (size_t)len, fp), (size_t)len);
	fclose(fp);
	d.missing[0] = '\0';
	ag_config_each_key(doc_has_key, &d);
	free(d.text);
	if (d.missing[0] != '\0')
		fail_msg("not in agentgate.yaml(5):%s", d.missing);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(loads_server_block),
		cmocka_unit_test(loads_upstreams),
		cmocka_unit_test(identity_accounts_name_who_may_log_in),
		cmocka_unit_test(refuses_with_position),
		cmocka_unit_test(formats_unknown_key_like_a_compiler),
		cmocka_unit_test(loads_argv_and_named_rules),
		cmocka_unit_test(refuses_nul_in_string),
		cmocka_unit_test(refuses_deep_nesting),
		cmocka_unit_test(refuses_long_scalar),
		cmocka_unit_test(refuses_too_many_nodes),
		cmocka_unit_test(refuses_oversized_buffer),
		cmocka_unit_test(loads_every_field),
		cmocka_unit_test(applies_defaults),
		cmocka_unit_test(loads_audit_spool_and_observers),
		cmocka_unit_test(resolves_forward_references),
		cmocka_unit_test(loads_shipped_example),
		cmocka_unit_test(helpers_match_like_fnmatch),
		cmocka_unit_test_setup_teardown(perms_accept_safe_file, perm_setup,
		    perm_teardown),
		cmocka_unit_test_setup_teardown(perms_refuse_group_writable_dir,
		    perm_setup, perm_teardown),
		cmocka_unit_test_setup_teardown(perms_refuse_world_writable_file,
		    perm_setup, perm_teardown),
		cmocka_unit_test_setup_teardown(perms_sticky_only_for_root,
		    perm_setup, perm_teardown),
		cmocka_unit_test_setup_teardown(perms_refuse_foreign_owner,
		    perm_setup, perm_teardown),
		cmocka_unit_test_setup_teardown(perms_refuse_non_regular_and_missing,
		    perm_setup, perm_teardown),
		cmocka_unit_test_setup_teardown(perms_check_symlink_target,
		    perm_setup, perm_teardown),
		cmocka_unit_test_setup_teardown(perms_see_through_symlinked_dir,
		    perm_setup, perm_teardown),
		cmocka_unit_test(every_key_is_documented),
		cmocka_unit_test_setup_teardown(load_refuses_oversized_file,
		    perm_setup, perm_teardown),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
