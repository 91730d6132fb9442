#!/bin/bash
# toolchains.sh - issue 36 (3): the toolchains are registry entries.
# Through the real sshd with the shipped developer profile: a Go module
# and a Rust crate built and tested (where Debian's golang and cargo are
# installed); then the publish actions the shipped profile denies, each
# spelled the ways its tool accepts (npm pub, cargo +toolchain publish, a
# cargo alias from the checkout's .cargo/config.toml, python3 -m twine,
# gradle's task abbreviations, maven's plugin goals, several make targets),
# typed, from a Makefile recipe, from python3 and from a C program built in
# the session: refused at exec and audited, and the benign commands of the
# same tools still run.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

ag_setup
ag_shipped_world developer

x() {
	ag_run x "$@"
	[ -n "$x_err" ] && printf '%s\n' "$x_err" | head -n 5 | sed 's/^/#   stderr: /'
	return 0
}

# ---- real projects -----------------------------------------------------------
if [ -x /usr/bin/go ]; then
	x 'cd ~/work && mkdir gomod && cd gomod && go mod init example.com/m >/dev/null 2>&1 &&
mkdir calc && printf "package calc\n\nfunc Add(a, b int) int { return a + b }\n" > calc/calc.go &&
printf "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"sum\")\n\t}\n}\n" > calc/calc_test.go &&
go vet ./... && go test ./... && echo go-ok'
	ag_like "$x_out" "ok[[:space:]]+example.com/m/calc" "go_test_passes"
	ag_like "$x_out" "go-ok" "go_vet_and_test"
	# the formatters: go fmt and gofmt rewrite and list what is not formatted
	x 'cd ~/work/gomod && printf "package calc\n\nfunc  Sub(a, b int) int {return a-b}\n" > calc/sub.go &&
gofmt -l . && go fmt ./... >/dev/null && gofmt -l . | wc -l'
	ag_is "$x_out" "calc/sub.go
0" "go_fmt_and_gofmt" "$x_err"
	# go env -w writes GOENV's file, in the identity's /tmp, not the
	# root-owned home (trial 19)
	x 'cd ~/work/gomod && go env -w GOFLAGS=-mod=mod && go env GOFLAGS && go env -u GOFLAGS'
	ag_is "$x_out" "-mod=mod" "go_env_w" "$x_err"
else
	ag_pass "go_env_w # skip: no /usr/bin/go"
	ag_pass "go_test_passes # skip: no /usr/bin/go"
	ag_pass "go_vet_and_test # skip: no /usr/bin/go"
	ag_pass "go_fmt_and_gofmt # skip: no /usr/bin/go"
fi
# npm test with nyc (istanbul): its spawn wrappers and caches live in the
# identity's /tmp and the project, not the root-owned home
if NYC=$(ag_npm_cached nyc 15.1.0); then
	install -d -o "$AG_USER" -g "$AG_USER" "$W/cov"
	cp -r "$NYC/node_modules" "$W/cov/" && chown -R "$AG_USER:" "$W/cov"
	x "cd ~/work/cov &&
printf '%s\n' '{\"name\": \"cov\", \"version\": \"1.0.0\", \"scripts\": {\"test\": \"nyc --reporter=text node test.js\"}}' > package.json &&
printf '%s\n' 'module.exports = (x) => x * 2;' > lib.js &&
printf '%s\n' 'const { execFileSync } = require(\"child_process\");' 'if (require(\"./lib\")(2) !== 4) process.exit(1);' 'execFileSync(process.execPath, [\"-e\", \"require(\\\"./lib\\\")(1)\"]);' 'console.log(\"cov-tests-ok\");' > test.js &&
npm test 2>&1"
	ag_like "$x_out" "cov-tests-ok" "npm_test_with_nyc_runs" "$x_err"
	ag_like "$x_out" "lib\.js *\| *100" "nyc_reports_coverage_through_its_spawn_wrappers" "$x_out"
else
	ag_pass "npm_test_with_nyc_runs # skip: nyc could not be installed from the npm registry"
	ag_pass "nyc_reports_coverage_through_its_spawn_wrappers # skip: no nyc"
fi
if [ -x /usr/bin/cargo ]; then
	x 'cd ~/work && cargo new -q --vcs none --lib adder && cd adder &&
printf "pub fn add(a: i32, b: i32) -> i32 { a + b }\n#[cfg(test)]\nmod t { #[test] fn sum() { assert_eq!(super::add(2, 3), 5); } }\n" > src/lib.rs &&
cargo build -q --offline && cargo test -q --offline 2>&1'
	ag_like "$x_out" "test result: ok. 1 passed" "cargo_test_passes"
	# the formatter and the linter, run as their installed subcommands
	# (an alias in .cargo/config.toml may stand in for `cargo fmt`)
	if [ -x /usr/bin/cargo-fmt ] && [ -x /usr/bin/cargo-clippy ]; then
		x 'cd ~/work/adder && printf "pub fn  sub( a: i32,b: i32)->i32 {a-b}\n" >> src/lib.rs &&
! cargo-fmt --check >/dev/null && cargo-fmt && cargo-fmt --check && rustfmt --check src/lib.rs &&
cargo-clippy -q --offline && echo fmt-clippy-ok'
		ag_is "$x_out" "fmt-clippy-ok" "cargo_fmt_and_clippy_as_subcommands" "$x_err"
		x 'cd ~/work/adder && cargo fmt'
		ag_like "$x_err" "run the installed subcommand directly as cargo would: cargo-fmt fmt" \
		    "cargo_fmt_refusal_names_cargo_fmt" "$x_err"
	else
		ag_pass "cargo_fmt_and_clippy_as_subcommands # skip: no cargo-fmt, cargo-clippy"
		ag_pass "cargo_fmt_refusal_names_cargo_fmt # skip: no cargo-fmt, cargo-clippy"
	fi
else
	ag_pass "cargo_test_passes # skip: no /usr/bin/cargo"
	ag_pass "cargo_fmt_and_clippy_as_subcommands # skip: no /usr/bin/cargo"
	ag_pass "cargo_fmt_refusal_names_cargo_fmt # skip: no /usr/bin/cargo"
fi
# Python: an editable install into a venv (offline: setuptools from the
# system), pytest as a module and as a program, mypy; npx runs a local bin
if /usr/bin/python3 -c 'import pytest, setuptools' 2>/dev/null; then
	x 'cd ~/work && mkdir -p pe/pe && cd pe && printf "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n[project]\nname = \"pe\"\nversion = \"0.1\"\n" > pyproject.toml &&
printf "X = 7\n" > pe/__init__.py && printf "import pe\n\ndef test_x():\n    assert pe.X == 7\n" > test_pe.py &&
python3 -m venv --system-site-packages .v && .v/bin/pip install -q --no-build-isolation --no-index -e . >/dev/null 2>&1 &&
cd / && ~/work/pe/.v/bin/python -c "import pe; print(pe.__file__)" && cd ~/work/pe && source .v/bin/activate &&
pip install -q --no-build-isolation --no-index -e . && python3 -m pytest -q -p no:cacheprovider test_pe.py | tail -n 1'
	ag_like "$x_out" "^$W/pe/pe/__init__.py
1 passed" "pip_install_editable_and_python3_m_pytest" "$x_err"
else
	ag_pass "pip_install_editable_and_python3_m_pytest # skip: no pytest or setuptools"
fi
if [ -x /usr/bin/mypy ]; then
	x 'cd ~/work && printf "def f(a: int) -> int:\n    return a\n" > typed.py && mypy --no-incremental typed.py'
	ag_like "$x_out" "Success: no issues found" "mypy_runs" "$x_err"
else
	ag_pass "mypy_runs # skip: no /usr/bin/mypy"
fi
if [ -x /usr/bin/ruff ] || [ -x /usr/local/bin/ruff ]; then
	x 'cd ~/work && ruff check --no-cache typed.py'
	ag_like "$x_out" "All checks passed" "ruff_check_runs" "$x_err"
else
	ag_pass "ruff_check_runs # skip: no ruff"
fi
x 'cd ~/work && mkdir -p np/node_modules/.bin && cd np && printf "{\"name\":\"np\",\"version\":\"1.0.0\"}\n" > package.json &&
printf "#!/bin/sh\necho hello-from-bin\n" > node_modules/.bin/hello && chmod +x node_modules/.bin/hello && npx --no-install hello'
ag_is "$x_out" "hello-from-bin" "npx_runs_a_local_bin" "$x_err"

# ---- publishing, every spelling, every way of running it ---------------------
# stand-ins where the tool is not installed: the rule knows the tool by its
# name, and the verdict comes before the program runs
x 'cd ~/work && mkdir -p bin pkg && for t in gradle mvn twine yarn; do
printf "#!/bin/sh\necho ran-\$(basename \$0) \"\$@\" >> ~/work/ran.log\n" > bin/$t; chmod +x bin/$t; done &&
printf "[alias]\np = \"publish\"\n" > pkg/.cargo-config && mkdir -p pkg/.cargo && mv pkg/.cargo-config pkg/.cargo/config.toml &&
printf "{\"name\":\"pkg\",\"version\":\"1.0.0\"}\n" > pkg/package.json && echo setup-ok'
ag_is "$x_out" "setup-ok" "setup"

# the spellings: each would publish if its tool ran
spellings=(
	"npm pub"
	"npm --prefix . publ --dry-run"
	"npm unpublish pkg@1.0.0"
	"cargo +stable publish --dry-run"
	"cargo --locked publish"
	"cargo p"
	"python3 -m twine upload x.whl"
	"python3 -Im twine.__main__ upload x.whl"
	"~/work/bin/gradle build pub"
	"~/work/bin/gradle :lib:publishToMavenCentral"
	"~/work/bin/mvn clean deploy"
	"~/work/bin/mvn org.apache.maven.plugins:maven-deploy-plugin:3.1.1:deploy"
	"~/work/bin/twine upload x.whl"
	"~/work/bin/yarn publish"
	"npm dist-tags add pkg@1.0.0 next"
	"/usr/lib/node_modules/npm/bin/npm-cli.js publish"
	"node /usr/lib/node_modules/npm/bin/npm-cli.js publish"
	"python3 -m runpy twine upload x.whl"
	"cargo t"
)
n=0
for s in "${spellings[@]}"; do
	n=$((n + 1))
	# typed: refused before anything runs
	x "cd ~/work/pkg && $s"
	ag_like "$x_err" "denied|not one of cargo's own commands" "typed_refused_$n ($s)"
	# behind eval and in a recipe, from python3 and from a C program: the
	# exec supervisor judges what is run
	printf 'all:\n\t%s\n' "$s" > "$AG_DIR/mk"
	x "cd ~/work/pkg && cat > Makefile <<'EOF'
$(cat "$AG_DIR/mk")
EOF
make -s; echo \"rc=\$?\""
	ag_like "$x_out$x_err" "rc=[1-9].*|denied: .*(refused by|not one of)" "recipe_refused_$n ($s)"
	ag_like "$x_err" "denied: .*(refused by|not one of cargo)" "recipe_refusal_says_why_$n ($s)"
	x "cd ~/work/pkg && python3 -c 'import subprocess, sys; sys.exit(subprocess.call([\"sh\", \"-c\", sys.argv[1]]))' '$s'; echo \"rc=\$?\""
	ag_like "$x_out" "rc=[1-9]" "python3_refused_$n ($s)"
	ag_like "$x_err" "denied: .*(refused by|not one of cargo)" "python3_refusal_says_why_$n ($s)"
done
# a freshly built program calling execvp directly, no shell between
x 'cd ~/work && cat > ex.c <<'"'"'EOF'"'"'
#include <unistd.h>
int main(int argc, char **argv) { (void)argc; execvp(argv[1], argv + 1); return 127; }
EOF
cc -o ex ex.c && cd pkg && ~/work/ex npm pub; echo "npm=$?"; ~/work/ex cargo +stable publish; echo "cargo=$?";
~/work/ex python3 -m twine upload x.whl; echo "py=$?"; ~/work/ex ~/work/bin/gradle pub; echo "gradle=$?"'
ag_like "$x_out" "npm=[1-9]" "c_program_npm_pub_refused"
ag_like "$x_out" "cargo=[1-9]" "c_program_cargo_publish_refused"
ag_like "$x_out" "py=[1-9]" "c_program_python_m_twine_refused"
ag_like "$x_out" "gradle=[1-9]" "c_program_gradle_abbrev_refused"
ag_ok "no_stand_in_ran_for_a_publish" sh -c "! grep -E 'pub|deploy|upload' '$W/ran.log' 2>/dev/null"
# one exec refused for each spelling in a recipe and from python3, and four
# from the C program; the typed ones never reached an exec
ag_is "$(ag_audit_query "sum(1 for x in r if x.get('event') == 'exec_denied')")" \
    "$((2 * ${#spellings[@]} + 4))" "refusals_at_exec_audited"
# an existing project's lint recipe, `cargo fmt --check`: refused at exec
# with the way that works (cargo-fmt), as the typed line is
printf 'lint:\n\tcargo fmt --check\n' > "$AG_DIR/mk"
x "cd ~/work/pkg && cat > Makefile <<'EOF'
$(cat "$AG_DIR/mk")
EOF
make -s lint; echo \"rc=\$?\""
ag_like "$x_out" "rc=[1-9]" "recipe_cargo_fmt_refused"
ag_like "$x_err" "refused by [^:]*: 'cargo fmt' is not one of cargo's own commands.*run the installed subcommand directly as cargo would: cargo-fmt fmt" \
    "recipe_cargo_fmt_refusal_names_cargo_fmt" "$x_err"
x "cd ~/work/pkg && printf 'all:\\n\\tnpm publish\\n' > Makefile && make -s; echo \"rc=\$?\""
ag_like "$x_err" "'npm publish' is refused by profiles.developer.deny\\[[0-9]+\\] \\(npm\\) \\(an exec" \
    "recipe_deny_refusal_only_names_the_rule" "$x_err"

# ---- the benign side ---------------------------------------------------------
x 'cd ~/work/pkg && npm pack --dry-run >/dev/null 2>&1; echo "pack=$?"'
ag_is "$x_out" "pack=0" "npm_pack_runs"
x 'cd ~/work && bin/gradle -x publish build && bin/mvn clean package && bin/twine check x.whl && cat ran.log'
ag_is "$x_out" "ran-gradle -x publish build
ran-mvn clean package
ran-twine check x.whl" "benign_tasks_of_the_same_tools_run"
x 'cd ~/work && printf "all:\n\t@echo built\ninstall:\n\t@echo installed\n" > mk2 && make -s -f mk2 all install'
ag_is "$x_out" "built
installed" "make_install_is_not_denied_in_shipped_profile"

# ---- explain says what the registry knows --------------------------------------
out=$("$AGENTGATE" explain --config "$AG_DIR/policy.yaml" --profile developer -- 'cargo build' 2>&1)
ag_like "$out" "deny rules may name: publish \(uploads the crate" "explain_lists_cargo_actions"
ag_like "$out" "runs: the crate's build scripts" "explain_says_what_cargo_runs"
# npm's own aliases are what they stand for (npm t is npm test)
for c in 'npm t' 'npm add x' 'npm un x' 'npm i'; do
	out=$("$AGENTGATE" explain --config "$AG_DIR/policy.yaml" --profile developer -- "$c" 2>&1)
	ag_like "$out" "^decision: allow" "npm_alias_allowed ($c)" "$out"
done
out=$("$AGENTGATE" explain --config "$AG_DIR/policy.yaml" --profile developer -- 'cargo clippy' 2>&1)
ag_like "$out" "cargo-clippy" "explain_names_the_way_out_for_an_external_subcommand"

ag_done
