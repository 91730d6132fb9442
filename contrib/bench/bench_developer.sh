#!/usr/bin/env bash
# bench_developer.sh - what the developer tier costs, as ratios against
# baselines measured in the same run (needs root: a real sshd on 127.0.0.1
# and a throwaway account, like the integration tests).  The profile is
# the shipped etc/agentgate.yaml's developer profile as users run it
# (sandbox required, the exec supervisor judging every execve, the egress
# proxy's network presets), the account mapped to it and ~/work made as
# its admin would; nothing else of it changed.
#
#   (1) per command in one REPL session, developer tier    vs  bash -c
#       (goal <= 1.3x, issue 38)
#   (2) make -j2 of a 200-file C project through the gateway,
#       developer tier (exec supervisor included)            vs  the same
#       profile with sandbox: off (goal <= 1.05x, issue 38; the median of
#       BENCH_ROUNDS interleaved pairs, which of the two goes first
#       alternating)
#
#   AGENTGATE=build/src/agentgate PAM_MODULE=build/pam/.libs/pam_agentgate.so \
#       bash contrib/bench/bench_developer.sh [N] [FILES]
# N: commands per REPL measurement (default 300); FILES: C files (200);
# BENCH_ROUNDS: rounds of (1) and pairs of (2) (default 5); BENCH_SUMMARY:
# a file for bench-all's closing table.  Not part of `make check`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
N=${1:-300}
FILES=${2:-200}
ROUNDS=${BENCH_ROUNDS:-5}
: "${AGENTGATE:=$repo/build/src/agentgate}"
export AGENTGATE
. "$repo/tests/integration/lib.sh"

ag_setup
ag_need_sandbox_lib
top_srcdir=$repo ag_shipped_policy developer
install -d -o "$AG_USER" -g "$AG_USER" "/home/$AG_USER/work"
"$AGENTGATE" check --config "$AG_DIR/policy.yaml" >/dev/null ||
    { echo "the shipped policy does not check" >&2; exit 1; }
mv -f "$AG_DIR/policy.yaml" "$AG_DIR/policy-developer.yaml"
sed 's/^  sandbox: required\( .*\)\?$/  sandbox: "off"/' "$AG_DIR/policy-developer.yaml" \
    > "$AG_DIR/policy-off.yaml"
grep -q '^  sandbox: "off"$' "$AG_DIR/policy-off.yaml" ||
    { echo "the shipped policy's sandbox line has moved" >&2; exit 1; }
use_policy() {	# use_policy developer|off
	cp -f "$AG_DIR/policy-$1.yaml" "$AG_DIR/policy.yaml.new" &&
	    mv -f "$AG_DIR/policy.yaml.new" "$AG_DIR/policy.yaml"
}

now() { date +%s.%N; }
calc() { "$AG_PYTHON" -c "print($1)"; }

echo "agentgate developer-tier benchmark (N=$N, FILES=$FILES), $(nproc) CPUs, $(date -u +%FT%TZ)"

# ---- (1) per-command cost --------------------------------------------------
use_policy developer
echo
echo "(1) per-command cost inside one REPL session, shipped developer profile (sandbox on, exec supervisor), vs bash -c"
BENCH_ROW="per command, developer tier (exec supervisor), sandbox on" BENCH_GOAL=1.3 \
    ag_bench_per_command "$N" 'true' 'echo hello' 'ls /'

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

build() {	# build POLICY: seconds for a clean make -j2 through the gateway
	local t0 t1
	use_policy "$1"
	ag_ssh "make -s -C ~/work/proj clean" >/dev/null
	t0=$(now)
	ag_ssh "make -s -j2 -C ~/work/proj" >/dev/null || { echo "build failed ($1)" >&2; exit 1; }
	t1=$(now)
	[ -x "$P/prog" ] || { echo "build made no program ($1)" >&2; exit 1; }
	calc "$t1 - $t0"
}

echo
echo "(2) make -j2 of a $FILES-file C project through the gateway: developer tier vs sandbox off ($ROUNDS interleaved pairs)"
ratios=
for r in $(seq 1 "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then
		off=$(build off); dev=$(build developer)
	else
		dev=$(build developer); off=$(build off)
	fi
	ratios="$ratios $(calc "$dev / $off")"
	printf '  pair %d: developer %.2f s, sandbox off %.2f s: %.3fx\n' "$r" "$dev" "$off" "$(calc "$dev / $off")"
done
median=$(ag_median $ratios)
met=$(ag_bench_judge "$median" "<= 1.05")
printf '  developer tier / sandbox off, median of the pairs: %.3fx (goal <= 1.05x: %s)\n' "$median" "$met"
ag_bench_summary "make -j2, $FILES files, developer tier vs sandbox off" "<= 1.05x" \
    "$(printf '%.3fx' "$median")" "$met"
