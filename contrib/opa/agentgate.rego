# agentgate.rego - a sample policy for agentgate's `opa` validator
# (agentgate.yaml(5), validator, kind: opa).
#
#   opa run --server --addr 127.0.0.1:8181 contrib/opa/agentgate.rego
#
# and in the profile (with `unknown: ask`):
#
#   validator:
#     kind: opa
#     url: http://127.0.0.1:8181/v1/data/agentgate/decision
#
# agentgate POSTs {"input": DOCUMENT}, where DOCUMENT is the request
# document: command (the exact line), cwd, profile, tier, user, identity,
# session, client, and commands (each simple command the parser found:
# name, path, text, verdict, why).  It reads "result" as the answer:
# {"decision": "allow" | "deny", "reason": "..."} -- or a boolean.  A
# result with any other shape, or none (an undefined rule), refuses.
#
# Only commands the profile's own rules left unknown are sent; what they
# deny never is.  Written for OPA 0.59 and later (rego.v1).
package agentgate

import rego.v1

# Programs that only read or report, whoever asks.
inspect := {
	"uname", "hostname", "uptime", "whoami", "id", "date", "df", "du", "free",
	"ps", "wc", "sort", "uniq", "head", "tail", "tac", "nl", "stat", "file",
	"md5sum", "sha256sum", "which", "true",
}

# Build and test tools the developer tier may be trusted with.
build := {"make", "cmake", "ninja", "meson", "cargo", "go", "npm", "pytest", "tox"}

# The profile allowed it, or this policy does.
known(c) if c.verdict == "allow"

known(c) if c.name in inspect

known(c) if {
	input.tier == "developer"
	c.name in build
}

# Never, whatever the tier: reaching other machines or other users.
refused(c) if c.name in {"curl", "wget", "nc", "ncat", "socat", "ssh", "scp", "sudo", "su"}

refused_names contains c.name if {
	some c in input.commands
	refused(c)
}

unknown_names contains c.name if {
	some c in input.commands
	not known(c)
}

default decision := {"decision": "deny", "reason": "no rule of the site's OPA policy allows it"}

decision := {"decision": "deny", "reason": sprintf("the site's policy never allows %s", [concat(", ", refused_names)])} if {
	count(refused_names) > 0
}

decision := {"decision": "allow", "reason": "every program in it is one the site's policy allows"} if {
	count(input.commands) > 0
	count(refused_names) == 0
	count(unknown_names) == 0
}
