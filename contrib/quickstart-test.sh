#!/usr/bin/env bash
# agentgate's whole test suite, as the README's second command and CI run it:
# install what is missing, build, and run every test in three passes:
#   1. a normal build:            unit tests (cmocka) + integration tests
#                                 (real sshd/ssh, bash, Linux-PAM, tmux)
#   2. AddressSanitizer + UBSan:  the same tests again
#   3. valgrind:                  the unit tests under memcheck
#   4. libFuzzer (clang):         a short fixed-seed run of each fuzz target
# It ends with one line "N passed, N failed" and exits non-zero on any failure.
#
#   --under-load [N]   instead: the plain make check N times (default 3) and
#                      the ASan make check once, each while four busy loops
#                      keep every core at 100%, to show that no test depends
#                      on timing.  Not CI's run.
set -uo pipefail

load_runs=0
case "${1:-}" in
--under-load)
	load_runs=${2:-3}
	case $load_runs in ''|*[!0-9]*) echo "usage: $0 [--under-load [N]]" >&2; exit 2;; esac
	;;
'')	;;
*)	echo "usage: $0 [--under-load [N]]" >&2; exit 2;;
esac

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=$(nproc 2>/dev/null || echo 2)
failures=0
passed=0
failed=0

say() { printf '\n=== %s\n' "$*"; }

bash contrib/deps.sh --tests || { echo "agentgate: installing dependencies failed" >&2; exit 1; }

if [ ! -x configure ] || [ configure.ac -nt configure ]; then
	say "autoreconf"
	autoreconf -fi >/dev/null 2>&1 || { autoreconf -fi; exit 1; }
fi

# count DIR: add the automake harness totals of DIR/tests/test-suite.log
count() {
	local log=$1/tests/test-suite.log p f e x
	[ -f "$log" ] || { failed=$((failed + 1)); return; }
	p=$(sed -n 's/^# PASS: *//p' "$log" | head -1)
	f=$(sed -n 's/^# FAIL: *//p' "$log" | head -1)
	e=$(sed -n 's/^# ERROR: *//p' "$log" | head -1)
	x=$(sed -n 's/^# XPASS: *//p' "$log" | head -1)
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0} + ${e:-0} + ${x:-0}))
}

# build NAME CONFIGURE-ARGS...: out-of-tree build in _build/NAME
build() {
	local name=$1; shift
	local dir="$top/_build/$name"
	mkdir -p "$dir"
	( cd "$dir" && { [ -f Makefile ] || "$top/configure" -q "$@"; } && make -j"$jobs" >make.log 2>&1 ) \
		|| { echo "agentgate: build '$name' failed:" >&2; tail -n 40 "$dir/make.log" >&2; return 1; }
	if grep -E 'warning:' "$dir/make.log" >&2; then
		echo "agentgate: build '$name' has compiler warnings (see above)" >&2
		return 1
	fi
}

# check NAME [MAKE-ARGS...]: make check, show each test's result and failing logs
check() {
	local name=$1; shift
	local dir="$top/_build/$name"
	( cd "$dir" && make -j"$jobs" check "$@" 2>&1 | grep -E '^(PASS|FAIL|ERROR|SKIP|XFAIL|XPASS|# )' )
	local log="$dir/tests/test-suite.log"
	if [ ! -f "$log" ] || ! grep -q '^# FAIL: *0$' "$log" || ! grep -q '^# ERROR: *0$' "$log"; then
		failures=$((failures + 1))
		[ -f "$log" ] && sed -n '/^FAIL\|^ERROR/,$p' "$log" | tail -n 200
	fi
	count "$dir"
}

# --under-load: the same builds, make check under four busy loops
if [ "$load_runs" -gt 0 ]; then
	busy=()
	stop_busy() { [ ${#busy[@]} -gt 0 ] && kill "${busy[@]}" 2>/dev/null; busy=(); }
	trap stop_busy EXIT
	build plain || exit 1
	build asan --enable-sanitizers || exit 1
	for i in 1 2 3 4; do (while :; do :; done) & busy+=($!); done
	for r in $(seq 1 "$load_runs") asan; do
		name=plain
		if [ "$r" = asan ]; then
			name=asan
			export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
			export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
			export SSHD_PAM_MODULE=$top/_build/plain/pam/.libs/pam_agentgate.so
		fi
		say "under load: $name make check${r:+ ($r)}"
		start=$(date +%s)
		rm -f "$top/_build/$name/tests/test-suite.log"
		check "$name"
		echo "($name: $(( $(date +%s) - start )) s)"
	done
	stop_busy
	echo
	echo "$passed passed, $failed failed"
	[ "$failures" -eq 0 ] && [ "$failed" -eq 0 ]
	exit
fi

say "pass 1: build and test"
if build plain; then check plain; else failures=$((failures + 1)); failed=$((failed + 1)); fi

say "pass 2: AddressSanitizer + UndefinedBehaviorSanitizer"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# sshd itself (not instrumented) loads the PAM module of its own stack: the
# plain build's (tests/integration/lib.sh, ag_sshd_pam)
export SSHD_PAM_MODULE=$top/_build/plain/pam/.libs/pam_agentgate.so
if build asan --enable-sanitizers; then check asan; else failures=$((failures + 1)); failed=$((failed + 1)); fi
unset ASAN_OPTIONS UBSAN_OPTIONS SSHD_PAM_MODULE

say "pass 3: valgrind on the unit tests"
unit_tests=$(cd "$top/_build/plain/tests" 2>/dev/null && ls unit/test_* 2>/dev/null | grep -v '\.\(o\|log\|trs\|c\)$' | tr '\n' ' ')
if [ -n "$unit_tests" ]; then
	rm -f "$top/_build/plain/tests/test-suite.log"
	check plain TESTS="$unit_tests" \
		LOG_COMPILER="valgrind" \
		AM_LOG_FLAGS="--quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --track-fds=no"
fi

say "pass 4: libFuzzer smoke runs (fixed seed)"
if command -v clang >/dev/null && build fuzz CC=clang --enable-fuzzing; then
	if out=$(make -s -C "$top/_build/fuzz/tests" check-local 2>&1); then
		printf '%s\n' "$out" | sed -n 's/^\(fuzz_[a-z]*\):.*/PASS: \1/p'
		passed=$((passed + $(printf '%s\n' "$out" | grep -c '^fuzz_')))
	else
		printf '%s\n' "$out" | tail -n 60
		echo "FAIL: fuzz smoke runs"; failed=$((failed + 1)); failures=$((failures + 1))
	fi
else
	echo "fuzz build unavailable"; failed=$((failed + 1)); failures=$((failures + 1))
fi

echo
echo "$passed passed, $failed failed"
[ "$failures" -eq 0 ] && [ "$failed" -eq 0 ]
