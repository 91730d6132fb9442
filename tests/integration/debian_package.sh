#!/bin/bash
# The Debian package, as an admin meets it: dpkg-buildpackage builds it
# from this tree, lintian finds no error, it installs; the admin follows
# README.Debian (an account, a key in the policy, `agentgate setup --user`
# for the drop-in, the PAM bind line and the login shell) and doctor passes; a session through a
# real sshd uses only installed files (binary, PAM module, policy, PAM
# service, drop-in, log directories); logrotate rotates the audit log under
# an open session; completion works; an upgrade whose example policy
# changed asks nothing and keeps the admin's policy, and lists the session
# it leaves running; remove ends the sessions, keeps the configuration,
# the logs and the group; purge takes away what the package made (what
# another gateway keeps in /var/lib/agentgate and /run/agentgate stays) and
# keeps the audit trail and the keys, unless debconf was told to remove
# them.
. "$(dirname "$0")/lib.sh"
ag_require_root
# the package is dpkg-buildpackage's build of the tree, whatever build runs
# the suite: once, in the plain pass, is enough
if ldd "$AGENTGATE" 2>/dev/null | grep -q libasan; then
	echo "SKIP: the package does not depend on this (sanitizer) build; the plain pass tests it"
	exit 77
fi
for t in dpkg-buildpackage lintian dh asciinema logrotate; do
	command -v "$t" >/dev/null ||
	    { echo "$t not installed (contrib/deps.sh --tests installs it)" >&2; exit 99; }
done
# the package is built from the files git lists (committed or not, never a
# build's leftovers): a tree that is not a git checkout cannot say which
# they are
top=$(git -C "$top_srcdir" rev-parse --show-toplevel 2>/dev/null)
if [ -z "$top" ] || [ "$(cd "$top" && pwd -P)" != "$(cd "$top_srcdir" && pwd -P)" ]; then
	echo "debian_package.sh: $top_srcdir is not a git checkout: the package is" \
	    "built from the files git lists there; run this test from a clone" >&2
	exit 99
fi
# one package on the machine at a time, and never over a real one
exec 7>/run/agentgate-debian-package.lock
flock 7
if dpkg-query -W -f='${Status}' agentgate 2>/dev/null | grep -q 'ok installed'; then
	if [ ! -e /var/lib/agentgate/installed-by-test ]; then
		echo "SKIP: the agentgate package is installed on this host; not touching it"
		exit 77
	fi
	rm -f /var/lib/agentgate/installed-by-test
	dpkg -P agentgate libpam-agentgate >/dev/null 2>&1
fi

G=agentgate
AG_DIR=$(mktemp -d /var/lib/agentgate-test.XXXXXX) || exit 99
BUILD=$(mktemp -d /var/tmp/agentgate-deb.XXXXXX) || exit 99
chmod 0755 "$AG_DIR"
U=agp$$
SSHD_PID=
SERVICE=
installed=0
kept_trail=0
SPID=
PURGE_Q=agentgate/purge_trail_and_keys
pkg_cleanup() {
	set +e
	exec 9>&-
	[ -n "$SPID" ] && { kill "$SPID"; wait "$SPID"; } 2>/dev/null
	[ -n "$SSHD_PID" ] && { kill "$SSHD_PID"; wait "$SSHD_PID"; } 2>/dev/null
	if [ "$installed" = 1 ]; then
		rm -f /etc/ssh/sshd_config.d/agentgate.conf "/etc/ssh/sshd_config.d/agentgate-$U.conf"
		echo "agentgate $PURGE_Q boolean true" | debconf-set-selections
		rm -f /var/lib/agentgate/installed-by-test
		DEBIAN_FRONTEND=noninteractive dpkg -P agentgate libpam-agentgate >/dev/null 2>&1
	fi
	# what a purge kept for the test
	[ "$kept_trail" = 1 ] && rm -rf /var/log/agentgate /etc/agentgate
	[ -n "$SERVICE" ] && rm -f "/etc/pam.d/$SERVICE" "/etc/pam.d/$SERVICE.before-agentgate"
	rm -f "/etc/ssh/sshd_config.d/agentgate-$U.conf"
	pkill -KILL -u "$U" 2>/dev/null
	id "$U" >/dev/null 2>&1 && ag_wait_until 30 ag_userdel "$U"
	rm -rf -- "$AG_DIR" "$BUILD"
}
trap pkg_cleanup EXIT
trap 'exit 1' INT TERM HUP

# ---- build -----------------------------------------------------------------
# the tree as it is (committed or not), without build directories
mkdir "$BUILD/agentgate"
git -C "$top_srcdir" ls-files -co --exclude-standard -z >"$BUILD/files" || exit 99
(cd "$top_srcdir" && tar --null -T "$BUILD/files" -cf -) | tar -xf - -C "$BUILD/agentgate" || exit 99
(cd "$BUILD/agentgate" && DEB_BUILD_OPTIONS="parallel=$(nproc) noautodbgsym" \
    dpkg-buildpackage -us -uc -b) >"$BUILD/build.log" 2>&1
rc=$?
ag_is "$rc" 0 "dpkg-buildpackage builds the packages" "$(tail -n 15 "$BUILD/build.log")"
DEB=$(ls "$BUILD"/agentgate_*.deb 2>/dev/null)
PAMDEB=$(ls "$BUILD"/libpam-agentgate_*.deb 2>/dev/null)
[ -f "$DEB" ] && [ -f "$PAMDEB" ] || { echo "no packages built"; ag_done; }
lint=$(cd "$BUILD" && lintian --fail-on error ./*.changes 2>&1)
rc=$?
ag_is "$rc" 0 "lintian reports no errors" "$lint"
ag_like "$(dpkg-deb -c "$DEB")" '\./etc/logrotate\.d/agentgate' "the package has the logrotate file"
ag_like "$(dpkg-deb -c "$DEB")" 'bash-completion/completions/agentgate' "and the bash completion"
ag_like "$(dpkg-deb -c "$DEB")" 'lib/systemd/system/agentgate\.service' "and the unit for serve"
ag_like "$(dpkg-deb -c "$PAMDEB")" '\./lib/[a-z0-9_-]+/security/pam_agentgate\.so' \
    "libpam-agentgate has the module where PAM looks"

# ---- install ---------------------------------------------------------------
# the gateway's group as the suite's other tests make it (lib.sh): a group
# that was there before the package stays after its purge
flock /run/agentgate-test.lock sh -c "getent group $G >/dev/null || groupadd --system $G" || exit 99
getent passwd agentgate >/dev/null && had_user=1 || had_user=0
# a log directory left by an earlier install or an admin's mkdir, which the
# gateway could not write
mkdir -p /var/log/agentgate && chown root:root /var/log/agentgate && chmod 0755 /var/log/agentgate
out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "$DEB" "$PAMDEB" 2>&1)
rc=$?
installed=1
mkdir -p /var/lib/agentgate && touch /var/lib/agentgate/installed-by-test
ag_is "$rc" 0 "the packages install" "$(printf '%s\n' "$out" | tail -n 10)"
ag_like "$out" 'agentgate: .*/usr/share/doc/agentgate/README\.Debian' \
    "the first install points to README.Debian" "$out"
ag_is "$(stat -c '%U:%G %a' /usr/bin/agentgate)" "root:$G 2755" "the gateway is set-group-ID $G"
ag_is "$(stat -c '%U:%G %a' /var/log/agentgate /var/log/agentgate/recordings | tr '\n' ' ')" \
    "root:$G 2770 root:$G 2770 " "the log directories are the group's alone (one that was there too)"
ag_ok "the system user for sshd's AuthorizedKeysCommand exists" getent passwd agentgate
ag_unlike "$(dpkg-query -W -f='${Conffiles}' agentgate)" 'agentgate\.yaml' \
    "the policy is not a conffile (no upgrade stops at dpkg's prompt over it)"
ag_ok "it is made from the example" cmp /usr/share/agentgate/agentgate.yaml /etc/agentgate/agentgate.yaml
ag_ok "which is among the examples too" test -f /usr/share/doc/agentgate/examples/agentgate.yaml
ag_ok "the sshd drop-in is installed inert" test -f /usr/share/agentgate/sshd_config.d/agentgate.conf \
    -a ! -e /etc/ssh/sshd_config.d/agentgate.conf
ag_ok "the installed policy checks" agentgate check --config /etc/agentgate/agentgate.yaml -q
ag_is "$(stat -c '%U:%G %a' /etc/agentgate/agentgate.yaml)" "root:$G 640" \
    "the policy is not readable by agents (it holds their keys)"
lg=/var/lib/agentgate/last-good/$(printf '%s' /etc/agentgate/agentgate.yaml | sha256sum | cut -d' ' -f1).yaml
ag_ok "the install keeps it as the last policy that loaded (for config_error records)" \
    cmp /etc/agentgate/agentgate.yaml "$lg"
# a policy that no longer loads is named when the package is configured
# (as an upgrade whose parser refuses it would be), and configuring goes on
cp /etc/agentgate/agentgate.yaml "$AG_DIR/policy.keep"
echo 'profiles: [' >> /etc/agentgate/agentgate.yaml
out=$(dpkg-reconfigure -f noninteractive agentgate 2>&1)
ag_is "$?" 0 "configuring with a broken policy still completes" "$out"
ag_like "$out" 'agentgate\.yaml does not load.*agentgate check' \
    "and says the policy does not load, and what to run" "$out"
ag_unlike "$out" 'example policy changed' "a reconfigure with the same example says nothing of it" "$out"
cat "$AG_DIR/policy.keep" > /etc/agentgate/agentgate.yaml

# ---- an admin follows README.Debian ----------------------------------------
flock /run/agentgate-test.lock useradd -m -d "/home/$U" -s /bin/bash "$U" || exit 99
flock /run/agentgate-test.lock usermod -p '*' "$U" || exit 99
ag_ok "the gateway is listed in /etc/shells" grep -qx /usr/bin/agentgate /etc/shells
chown -R root:root "/home/$U" && chmod 0755 "/home/$U"
install -d -o "$U" -g "$U" "/home/$U/work"
ssh-keygen -q -t ed25519 -N '' -f "$AG_DIR/client" -C pkgtest || exit 99
ssh-keygen -q -t ed25519 -N '' -f "$AG_DIR/hostkey" || exit 99
# the agent's key replaces the example's under the identity ci-bot
key=$(cut -d' ' -f1-2 "$AG_DIR/client.pub")
sed -i "s|keys: \[\"ssh-ed25519 [^\"]*\"\]|keys: [\"$key\"]|" /etc/agentgate/agentgate.yaml
ag_ok "the edited policy checks" agentgate check -q
PORT=$(ag_free_port)
# a private sshd_config that Includes the drop-in setup writes into the
# real /etc/ssh/sshd_config.d
cat > "$AG_DIR/sshd_config" <<CONF
Port $PORT
ListenAddress 127.0.0.1
HostKey $AG_DIR/hostkey
PidFile none
LogLevel VERBOSE
KbdInteractiveAuthentication no
PasswordAuthentication no
Include /etc/ssh/sshd_config.d/agentgate-$U.conf
CONF
# sshd's own PAM service as Debian ships it (sshd names its service after
# the name it runs by); setup adds the bind line
SERVICE=sshd-agpkg$$
ln -sf "$SSHD" "$AG_DIR/$SERVICE"
cp /etc/pam.d/sshd "/etc/pam.d/$SERVICE"
# README.Debian step 3: one command for sshd, PAM and the login shell
out=$(agentgate setup --user "$U" --sshd "$AG_DIR/$SERVICE" --sshd-config "$AG_DIR/sshd_config" \
    --sshd-config-dir /etc/ssh/sshd_config.d --pam-file "/etc/pam.d/$SERVICE" 2>&1)
ag_is "$?" 0 "agentgate setup gives the account to agents" "$out"
ag_ok "its drop-in is a file of its own, not a link into the package" \
    test -f "/etc/ssh/sshd_config.d/agentgate-$U.conf" -a ! -L "/etc/ssh/sshd_config.d/agentgate-$U.conf"
ag_ok "it names the account" grep -qx "Match User $U" "/etc/ssh/sshd_config.d/agentgate-$U.conf"
ag_ok "the bind line is in sshd's PAM service" grep -q '^session.*pam_agentgate\.so bind' "/etc/pam.d/$SERVICE"
ag_is "$(getent passwd "$U" | cut -d: -f7)" /usr/bin/agentgate "the gateway is the login shell"
ag_ok "sshd accepts the drop-in" "$SSHD" -t -f "$AG_DIR/sshd_config"
doc=$(agentgate doctor --user "$U" --sshd "$AG_DIR/$SERVICE" --sshd-config "$AG_DIR/sshd_config" 2>&1)
ag_unlike "$doc" '(^|[^A-Z])FAIL' "agentgate doctor finds nothing wrong" "$doc"
"$AG_DIR/$SERVICE" -D -e -f "$AG_DIR/sshd_config" 2>"$AG_DIR/sshd.log" &
SSHD_PID=$!
ag_wait_until 30 ag_listening "$SSHD_PID" "$PORT"
ag_ok "sshd is up" ag_up "$SSHD_PID" "$PORT"
SSH=(ssh -q -i "$AG_DIR/client" -p "$PORT" -o IdentitiesOnly=yes -o BatchMode=yes
    -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no "$U@127.0.0.1")

# ---- sessions through the installed gateway ---------------------------------
out=$("${SSH[@]}" 'ls /usr/share/agentgate/sshd_config.d' 2>&1)
ag_is "$out" agentgate.conf "an allowed command runs" "$(tail -n 5 "$AG_DIR/sshd.log")"
out=$("${SSH[@]}" 'rm -f /etc/hostname' 2>&1)
rc=$?
ag_is "$rc" 126 "a refused command is refused" "$out"
ag_ok "it did not run" test -f /etc/hostname
AUD=/var/log/agentgate/audit.jsonl
ag_like "$(grep '"event":"command"' "$AUD" | head -1)" '"identity":"ci-bot"' \
    "the audit log names the identity the key belongs to"
ag_like "$(grep '"event":"command"' "$AUD" | tail -1)" '"rule":"[^"]+' "and the rule that refused"
ag_is "$(stat -c '%G' "$AUD")" "$G" "the audit log is the gateway group's"
# a terminal session, recorded; asciinema plays the recording
printf 'echo from a terminal\nexit\n' | "${SSH[@]}" -tt >/dev/null 2>&1
cast=$(ls -t /var/log/agentgate/recordings/*.cast 2>/dev/null | head -1)
ag_ok "a terminal session is recorded" test -f "$cast"
# (asciinema wants a terminal even to cat: script(1) gives it one)
ag_like "$(script -qec "asciinema cat $cast" /dev/null 2>&1)" 'from a terminal' \
    "asciinema cats the recording" \
    "$(head -c 600 "$cast")"

# ---- logrotate, under an open session -----------------------------------------
mkfifo "$AG_DIR/in"
"${SSH[@]}" < "$AG_DIR/in" > "$AG_DIR/out" 2>&1 &
spid=$!
exec 9>"$AG_DIR/in"
echo 'echo before-rotation' >&9
ag_wait_until 30 grep -q before-rotation "$AG_DIR/out"
lr=$(logrotate -f -s "$AG_DIR/logrotate.state" /etc/logrotate.d/agentgate 2>&1)
ag_is "$?" 0 "logrotate rotates the audit log" "$lr"
echo 'echo after-rotation' >&9
echo 'exit' >&9
exec 9>&-
wait "$spid"
ag_like "$(grep -c 'echo before-rotation' "$AUD.1")" '^[1-9]' "the rotated file has the records before"
ag_like "$(grep -c 'echo after-rotation' "$AUD")" '^[1-9]' \
    "the open session's next record is in the new file" "$(cut -c1-200 "$AUD")"
ag_is "$(grep -c 'after-rotation' "$AUD.1")" 0 "and not in the rotated one"
ag_ok "the rotated file verifies" agentgate audit verify "$AUD.1"
ag_ok "the new file verifies" agentgate audit verify "$AUD"
ag_is "$(stat -c '%U:%G %a' "$AUD")" "root:$G 660" "the new file is the group's (logrotate's create)"

# ---- completion ----------------------------------------------------------------
comp() {	# comp WORD...: what bash completes for the last word
	bash -c '. /usr/share/bash-completion/bash_completion
		. /usr/share/bash-completion/completions/agentgate
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_agentgate agentgate "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' comp "$@"
}
ag_is "$(comp agentgate ex)" "explain " "completion: subcommands"
ag_is "$(comp agentgate explain --profile '')" "developer readonly " "completion: the policy's profiles"
ag_is "$(comp agentgate doctor --s)" "--sshd --sshd-config " "completion: a subcommand's options"

# ---- upgrade: the next version's example changed -------------------------------
# The package built, as another version with a change made by CMD in its
# tree ($1): the maintainer scripts are what dpkg runs either way.
repack() {	# repack NAME VERSION CMD...: $BUILD/NAME.deb
	local name=$1 ver=$2
	shift 2
	rm -rf "$BUILD/$name"
	dpkg-deb -R "$DEB" "$BUILD/$name" || exit 99
	sed -i "s/^Version: .*/Version: $ver/" "$BUILD/$name/DEBIAN/control"
	"$@" "$BUILD/$name" || exit 99
	(cd "$BUILD/$name" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' |
	    xargs -0 md5sum > DEBIAN/md5sums) || exit 99
	dpkg-deb -b "$BUILD/$name" "$BUILD/$name.deb" >/dev/null || exit 99
}
next_example() { printf '# (the next version\047s example)\n' >> "$1/usr/share/agentgate/agentgate.yaml"; }
VER=$(dpkg-deb -f "$DEB" Version)
repack next "$VER+next1" next_example
cp -p /etc/agentgate/agentgate.yaml "$AG_DIR/policy.before"
# a session open across the upgrade
"${SSH[@]}" < "$AG_DIR/in" > "$AG_DIR/out" 2>&1 &
SPID=$!
exec 9>"$AG_DIR/in"
echo 'echo before-upgrade' >&9
ag_wait_until 30 grep -q before-upgrade "$AG_DIR/out"
# no terminal, no answers, no --force-conf*: a prompt would fail it
out=$(env -u DEBIAN_FRONTEND dpkg -i "$BUILD/next.deb" </dev/null 2>&1)
ag_is "$?" 0 "an upgrade whose example changed completes with nothing to answer" "$out"
ag_unlike "$out" 'Configuration file|conffile' "and no conffile prompt" "$out"
ag_is "$(dpkg-query -W -f='${Version}' agentgate)" "$VER+next1" "the new version is installed"
ag_ok "the admin's policy is untouched" cmp "$AG_DIR/policy.before" /etc/agentgate/agentgate.yaml
ag_is "$(stat -c '%U:%G %a' /etc/agentgate/agentgate.yaml)" "root:$G 640" "and keeps its owner and mode"
ag_like "$(tail -n 1 /usr/share/agentgate/agentgate.yaml)" "next version" \
    "the new example is there to compare with"
ag_like "$out" 'example policy changed.*diff -u /etc/agentgate/agentgate.yaml /usr/share/agentgate/agentgate.yaml' \
    "and the upgrade says the example changed, and how to compare" "$out"
ag_like "$out" 'left running' "the upgrade lists the sessions it leaves running" "$out"
ag_like "$out" "ci-bot +$U " "with their identity and account" "$out"
echo 'echo after-upgrade' >&9
ag_wait_until 30 grep -q after-upgrade "$AG_DIR/out"
ag_ok "the session goes on after the upgrade" grep -q after-upgrade "$AG_DIR/out"
echo 'exit' >&9
exec 9>&-
wait "$SPID"; SPID=

# ---- remove, purge -------------------------------------------------------------
# a session open across the removal: prerm lists it, and it is ended
"${SSH[@]}" < "$AG_DIR/in" > "$AG_DIR/out" 2>&1 &
SPID=$!
exec 9>"$AG_DIR/in"
echo 'echo before-removal' >&9
ag_wait_until 30 grep -q before-removal "$AG_DIR/out"
# the drop-in linked from /usr/share, as an older README.Debian said: the
# removal must not leave sshd a configuration it refuses (no SSH at the
# next restart)
ln -sfn /usr/share/agentgate/sshd_config.d/agentgate.conf /etc/ssh/sshd_config.d/agentgate.conf
sed "s|^Include .*|Include /etc/ssh/sshd_config.d/agentgate.conf|" "$AG_DIR/sshd_config" \
    > "$AG_DIR/sshd_config.linked"
out=$(dpkg -r agentgate libpam-agentgate 2>&1)
ag_is "$?" 0 "the packages remove" "$out"
ag_like "$out" "these sessions will be ended once the gateway's files are removed" \
    "the removal says the sessions will be ended" "$out"
ag_like "$out" "ci-bot +$U " "and lists them" "$out"
# (waiting for its next line, it is ended within seconds, or at that line:
# the line may find the session gone, a SIGPIPE for this subshell only)
(echo 'echo after-removal' >&9) 2>/dev/null
ag_wait_until 30 sh -c "! kill -0 $SPID 2>/dev/null"
exec 9>&-
wait "$SPID"
ag_is "$?" 253 "the session is ended, its client told so (exit 253)" "$(cat "$AG_DIR/out")"
SPID=
ag_unlike "$(cat "$AG_DIR/out")" '^after-removal' "its line does not run" "$(cat "$AG_DIR/out")"
ag_like "$(cat "$AG_DIR/out")" 'removed from this host' "with the reason" "$(cat "$AG_DIR/out")"
ag_wait_until 30 sh -c "! pgrep -P $SSHD_PID >/dev/null"
kill "$SSHD_PID"; wait "$SSHD_PID" 2>/dev/null; SSHD_PID=
ag_ok "the gateway is gone" test ! -e /usr/bin/agentgate
ag_ok "a linked drop-in is left a file, not a dangling link" \
    test -f /etc/ssh/sshd_config.d/agentgate.conf -a ! -L /etc/ssh/sshd_config.d/agentgate.conf
ag_ok "sshd still accepts its configuration after the removal" "$SSHD" -t -f "$AG_DIR/sshd_config"
ag_ok "and one that included the linked drop-in" "$SSHD" -t -f "$AG_DIR/sshd_config.linked"
ag_like "$out" "still names the gateway" "the removal says what the admin should still remove" "$out"
ag_ok "the gateway is no longer in /etc/shells" sh -c '! grep -qx /usr/bin/agentgate /etc/shells'
rm -f /etc/ssh/sshd_config.d/agentgate.conf
ag_ok "the policy (edited) stays" grep -q "$key" /etc/agentgate/agentgate.yaml
ag_ok "the audit log and recordings stay" test -f "$AUD" -a -d /var/log/agentgate/recordings
ag_ok "the group and user stay" getent passwd agentgate
# keys an admin put beside the policy (README.md, bastion)
install -d -m 0750 -g "$G" /etc/agentgate/upstream
ssh-keygen -q -t ed25519 -N '' -f /etc/agentgate/upstream/web1_ed25519 || exit 99
rec=$(ls /var/log/agentgate/recordings/*.cast | head -1)
# the default answer, as a noninteractive install leaves it
kept_trail=1
# another gateway on the host (a source build) shares /var/lib/agentgate
# and /run/agentgate: its files there are not the package's
RUNMARK=/run/agentgate/.pkgtest-$$
mkdir -p /run/agentgate && touch "$RUNMARK"
OTHER_LG=/var/lib/agentgate/last-good/$(printf '%s' "/usr/local/etc/agentgate-pkgtest-$$/agentgate.yaml" |
    sha256sum | cut -d' ' -f1).yaml
mkdir -p "$(dirname "$OTHER_LG")" && echo 'version: 1' > "$OTHER_LG"
[ -e /var/lib/agentgate/created-tmp ] && made_tmp=1 || made_tmp=0
rm -f /var/lib/agentgate/installed-by-test
out=$(DEBIAN_FRONTEND=noninteractive dpkg -P agentgate libpam-agentgate 2>&1)
ag_is "$?" 0 "the packages purge" "$out"
installed=0
ag_ok "purge keeps the audit log, its rotation and the recordings" \
    test -f "$AUD" -a -f "$AUD.1" -a -f "$rec"
ag_ok "and the edited policy and the keys" \
    sh -c "grep -q '$key' /etc/agentgate/agentgate.yaml && test -f /etc/agentgate/upstream/web1_ed25519"
ag_like "$out" 'kept the audit trail and the keys: /var/log/agentgate /etc/agentgate\. .*rm -rf /var/log/agentgate /etc/agentgate' \
    "and says where they are and how to remove them" "$out"
ag_is "$(ls -d /var/lib/agentgate/created-* /var/lib/agentgate/*.md5sum "$lg" 2>&1 | grep -v 'No such')" "" \
    "it removes what the package made in /var/lib/agentgate" \
    "$(ls -laR /var/lib/agentgate 2>&1 | head -n 30)"
if [ "$made_tmp" = 1 ]; then
	ag_ok "with the identities' /tmp, which the package made" test ! -e /var/lib/agentgate/tmp
fi
ag_ok "another gateway's last good policy stays" test -f "$OTHER_LG"
ag_like "$out" "the purge left /var/lib/agentgate, which holds what the package did not make.*last-good" \
    "and the purge says what it left" "$out"
ag_ok "so does another gateway's file in /run/agentgate" test -e "$RUNMARK"
rm -f "$OTHER_LG" "$RUNMARK"
rmdir /var/lib/agentgate/last-good /var/lib/agentgate 2>/dev/null
ag_is "$(dpkg-statoverride --list /usr/bin/agentgate /etc/agentgate/agentgate.yaml)" "" \
    "and the stat overrides"
if [ "$had_user" = 0 ]; then
	ag_ok "and the user the package created" sh -c '! getent passwd agentgate'
fi
ag_ok "no file of the package is left" sh -c '! dpkg -S pam_agentgate.so agentgate.yaml.5 2>/dev/null'

# ---- purge, told to remove the trail -------------------------------------------
echo "agentgate $PURGE_Q boolean true" | debconf-set-selections
out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "$DEB" "$PAMDEB" 2>&1)
ag_is "$?" 0 "the packages install again" "$(printf '%s\n' "$out" | tail -n 10)"
installed=1
touch /var/lib/agentgate/installed-by-test
ag_ok "over the policy kept, which stays the admin's" grep -q "$key" /etc/agentgate/agentgate.yaml
ag_ok "and the audit log kept, which the group can write again" \
    sh -c "test \"\$(stat -c '%G %a' /var/log/agentgate)\" = '$G 2770'"
rm -f /var/lib/agentgate/installed-by-test
out=$(DEBIAN_FRONTEND=noninteractive dpkg -P agentgate libpam-agentgate 2>&1)
ag_is "$?" 0 "the packages purge" "$out"
installed=0
ag_ok "purge, told to, removes the audit trail, the policy and the keys" \
    test ! -e /etc/agentgate -a ! -e /var/log/agentgate
ag_unlike "$out" 'kept' "and says nothing was kept" "$out"
ag_ok "and forgets the answer" sh -c "! debconf-show agentgate 2>/dev/null | grep -q '$PURGE_Q'"
ag_ok "a group that was there before stays" getent group "$G"

# ---- purge of an install that recorded nothing ---------------------------------
out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$DEB" 2>&1)
ag_is "$?" 0 "a fresh install" "$(printf '%s\n' "$out" | tail -n 10)"
installed=1
out=$(DEBIAN_FRONTEND=noninteractive dpkg -P agentgate 2>&1)
ag_is "$?" 0 "purges with the default answer" "$out"
installed=0
ag_ok "and leaves nothing: the policy was the example, the trail empty" \
    test ! -e /etc/agentgate -a ! -e /var/log/agentgate

# ---- an upgrade from 0.1.0, whose policy was a conffile -------------------------
old_conffile() {
	install -D -m 0644 "$1/usr/share/agentgate/agentgate.yaml" "$1/etc/agentgate/agentgate.yaml"
	echo /etc/agentgate/agentgate.yaml >> "$1/DEBIAN/conffiles"
}
repack old 0.0.9 old_conffile
out=$(DEBIAN_FRONTEND=noninteractive dpkg -i "$BUILD/old.deb" 2>&1)
ag_is "$?" 0 "a version whose policy is a conffile installs" "$out"
installed=1
echo '# the admin was here' >> /etc/agentgate/agentgate.yaml
out=$(env -u DEBIAN_FRONTEND dpkg -i "$DEB" </dev/null 2>&1)
ag_is "$?" 0 "the upgrade from it asks nothing" "$out"
ag_like "$(tail -n 1 /etc/agentgate/agentgate.yaml)" 'the admin was here' "and keeps the edited policy"
ag_unlike "$(dpkg-query -W -f='${Conffiles}' agentgate)" 'agentgate\.yaml' \
    "which dpkg no longer counts as its conffile"
ag_ok "no handover copy is left" test ! -e /etc/agentgate/agentgate.yaml.dpkg-handover
out=$(DEBIAN_FRONTEND=noninteractive dpkg -P agentgate 2>&1)
ag_is "$?" 0 "purges" "$out"
installed=0
ag_like "$(tail -n 1 /etc/agentgate/agentgate.yaml 2>&1)" 'the admin was here' \
    "the purge keeps that policy (not taken as an obsolete conffile)"
ag_done
