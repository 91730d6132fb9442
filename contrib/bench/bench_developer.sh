#!/usr/bin/env bash
# bench_developer.sh - what the developer tier costs, as ratios against
# baselines measured in the same run (needs root: a real sshd on 127.0.0.1
# and a throwaway account, like the integration tests).
#
#   (1) per command in one REPL session, developer tier    vs  bash -c
#   (2) make -j2 of a 200-file C project through the gateway,
#       developer tier (exec supervisor included)            vs  sandbox: off
#
#   AGENTGATE=build/src/agentgate PAM_MODULE=build/pam/.libs/pam_agentgate.so \
#       bash contrib/bench/bench_developer.sh [N] [FILES]
# N: commands per REPL measurement (default 300); FILES: C files (200).
# Not part of `make check`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
N=${1:-300}
FILES=${2:-200}
: "${AGENTGATE:=$repo/build/src/agentgate}"
export AGENTGATE
. "$repo/tests/integration/lib.sh"

ag_setup
SO=$(dirname "$AGENTGATE")/agsandbox.so
[ -f "$SO" ] || { echo "agsandbox.so not next to $AGENTGATE" >&2; exit 1; }
install -m 0644 "$SO" "$AG_DIR/agsandbox.so"
install -d -o "$AG_USER" -g "$AG_USER" "/home/$AG_USER/work"

policy() {	# policy SANDBOX-MODE
	ag_write_policy "$AG_DIR/policy.yaml" <<EOF
version: 1
gateway:
  sandbox: $1
  audit:
    file: @AUDIT@
    required: true
users:
  @USER@: dev
profiles:
  dev:
    tier: developer
    allow: [ls, echo, "true", make, cc, rm, env]
    deny:
      - { command: git, subcommands: [push] }
    paths: { read: ["/"], write: ["~/work"], exec: ["~/work"] }
    env:
      set: { PATH: "/usr/local/bin:/usr/bin:/bin" }
    limits: { timeout: 30m }
EOF
}

now() { date +%s.%N; }
calc() { "$AG_PYTHON" -c "print($1)"; }

echo "agentgate developer-tier benchmark (N=$N, FILES=$FILES), $(nproc) CPUs, $(date -u +%FT%TZ)"

# ---- (1) per-command cost --------------------------------------------------
policy required
echo
echo "(1) per-command cost inside one REPL session, developer tier, vs bash -c"
ag_bench_per_command "$N" 'true' 'echo hello' 'ls /'
echo "  goal: <= 1.3x"

# ---- (2) a parallel build --------------------------------------------------
P=/home/$AG_USER/work/proj
rm -rf "$P"
mkdir -p "$P/src"
for i in $(seq 1 "$FILES"); do
	printf 'int f%d(int x) { int y = x; for (int k = 0; k < 8; k++) y = y * 3 + k; return y; }\n' \
	    "$i" > "$P/src/f$i.c"
done
printf 'int main(void) { return 0; }\n' > "$P/src/main.c"
printf '%s\n' 'SRCS := $(wildcard src/*.c)' 'OBJS := $(SRCS:.c=.o)' 'prog: $(OBJS)' \
    '	$(CC) -o $@ $(OBJS)' '%.o: %.c' '	$(CC) -O1 -c $< -o $@' 'clean:' \
    '	rm -f prog src/*.o' > "$P/Makefile"
chown -R "$AG_USER:" "$P"

build() {	# build MODE: seconds for a clean make -j2 through the gateway
	local t0 t1
	policy "$1"
	ag_ssh "make -s -C ~/work/proj clean" >/dev/null
	t0=$(now)
	ag_ssh "make -s -j2 -C ~/work/proj" >/dev/null || { echo "build failed ($1)" >&2; exit 1; }
	t1=$(now)
	calc "$t1 - $t0"
}

echo
echo "(2) make -j2 of a $FILES-file C project through the gateway: developer tier vs sandbox off"
dev_t=0 off_t=0
for r in 1 2 3; do
	off=$(build '"off"')
	dev=$(build required)
	off_t=$(calc "$off_t + $off")
	dev_t=$(calc "$dev_t + $dev")
	printf '  run %d: developer %.2f s, sandbox off %.2f s\n' "$r" "$dev" "$off"
done
printf '  developer tier / sandbox off: %.3fx (goal <= 1.15x)\n' "$(calc "$dev_t / $off_t")"
