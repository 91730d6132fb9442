#!/bin/bash
# The gateway's helpers hold no secret they do not need (issue 33): the
# namespace keeper (agentgate-ns) must be dumpable, so a process of the
# account outside the sandbox can read its memory; it is a fresh image,
# not a copy of the gateway's, so it holds no identity's token hash.  A
# watcher of the account reads the memory of every process of the account
# it may read while alice's sandboxed command runs, and looks for bob's.
. "$(dirname "$0")/lib.sh"
ag_world_identities alice
ag_setgid_gateway

TOK_BOB="tok-bob-$$-$RANDOM"
BOB_HASH=$(printf '%s' "$TOK_BOB" | sha256sum | cut -d' ' -f1)
MARK="policy-text-marker-$$-$RANDOM"
ag_write_policy "$AG_DIR/policy.yaml" <<POLICY
# $MARK
version: 1
gateway:
  audit: { file: @AUDIT@, required: true }
identities:
  - { name: alice, keys: ["$(ag_key alice)"], profile: dev }
  - { name: bob, token_sha256: $BOB_HASH, profile: dev }
profiles:
  dev:
    allow: [echo, cat]
    paths: { read: ["/usr", "/etc", "/lib", "/bin", "$AG_DIR"], write: ["/tmp"] }
POLICY
AG_SSHD_AUTHKEYS_FILE=none
AG_SSHD_EXTRA="AuthorizedKeysCommand $AG_DIR/agentgate authorized-keys --config $AG_DIR/policy.yaml %u
AuthorizedKeysCommandUser root"
ag_start_sshd || exit 99
T="$AG_USER@127.0.0.1"

cat > "$AG_DIR/scan.py" <<'PY'
import os, re, sys
# the hash as the policy writes it, and as the gateway keeps it; a line
# only the policy's text has; and any other secret as hex bytes
needles = (sys.argv[1].encode(), bytes.fromhex(sys.argv[1])) + \
    tuple(n.encode() if i % 2 == 0 else bytes.fromhex(n) for i, n in enumerate(sys.argv[2:]))
print("# needles: %d" % len(needles))
me = os.getuid()
for d in os.listdir("/proc"):
    if not d.isdigit() or int(d) == os.getpid():
        continue
    try:
        if os.stat("/proc/" + d).st_uid != me:
            continue
        comm = open("/proc/%s/comm" % d).read().strip()
        maps = open("/proc/%s/maps" % d).read().splitlines()
        mem = open("/proc/%s/mem" % d, "rb", buffering=0)
    except OSError:
        print("%s ? unreadable" % d)
        continue
    found = False
    for line in maps:
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (r)", line)
        if not m:
            continue
        lo, hi = int(m.group(1), 16), int(m.group(2), 16)
        # a sanitizer's shadow is terabytes of reserved zeros: not where a
        # heap or a stack is
        if hi - lo > (1 << 30):
            continue
        keep = max(len(n) for n in needles)
        tail = b""
        try:
            mem.seek(lo)
            while lo < hi:
                step = min(1 << 20, hi - lo)
                chunk = tail + mem.read(step)
                lo += step
                if any(n in chunk for n in needles):
                    sys.stderr.write("%s %s\n" % (d, line))
                    found = True
                    break
                tail = chunk[-keep:]
        except (OSError, OverflowError, ValueError):
            pass
        if found:
            break
    print("%s %s %s" % (d, comm, "FOUND" if found else "clean"))
PY
chmod 0644 "$AG_DIR/scan.py"

fifo=$AG_DIR/hold
mkfifo "$fifo"
ag_as alice "$T" "cat $fifo; echo alice-done" > "$AG_DIR/alice.out" 2>&1 &
client=$!
keeper_up() { pgrep -u "$AG_USER" -x agentgate-ns >/dev/null; }
ag_ok keeper_running_for_alices_command ag_wait_until 60 keeper_up
ag_wait_until 60 pgrep -u "$AG_USER" -x cat >/dev/null
out=$(runuser -u "$AG_USER" -- python3 "$AG_DIR/scan.py" "$BOB_HASH" "$MARK")
printf '%s\n' "$out" | sed 's/^/# sshd: /'
ag_like "$out" "agentgate-ns clean" "keeper_memory_read_by_the_account" "$out"
ag_unlike "$out" "FOUND" "no_process_the_account_can_read_holds_bobs_token_hash" "$out"
# what the gateway forks keeps its memory, and stays unreadable: only
# fresh images (the keeper, the commands) are the account's to read
ag_unlike "$out" " agentgate (clean|FOUND)" "no_copy_of_the_gateway_readable_by_the_account" "$out"
for p in $(pgrep -u "$AG_USER" -x agentgate-ns); do
	ag_is "$(tr -d '\0' < /proc/$p/environ | wc -c)" 0 "keeper_${p}_has_no_environment"
	ag_is "$(readlink /proc/$p/exe)" "$(readlink -f "$AG_DIR/agentgate")" "keeper_${p}_is_the_gateways_image"
done
echo done > "$fifo"
wait "$client"
ag_like "$(cat "$AG_DIR/alice.out")" "alice-done" "alices_command_ran_in_the_sandbox"

# ---- agentgate serve: its host key (root's) is in no process the account reads
ssh-keygen -q -t ed25519 -N '' -f "$AG_DIR/serve_hostkey" -C host || exit 99
SEED=$(python3 - "$AG_DIR/serve_hostkey" <<'PY'
import base64, struct, sys
lines = open(sys.argv[1]).read().splitlines()
d = base64.b64decode("".join(l for l in lines if not l.startswith("-----")))
p = len(b"openssh-key-v1\0")
def s(p):
    n = struct.unpack(">I", d[p:p + 4])[0]
    return d[p + 4:p + 4 + n], p + 4 + n
_, p = s(p); _, p = s(p); _, p = s(p); p += 4
_, p = s(p); priv, _ = s(p)
q = 8
_, q = (lambda b, q: (None, q + 4 + struct.unpack(">I", b[q:q + 4])[0]))(priv, q)
_, q = (lambda b, q: (None, q + 4 + struct.unpack(">I", b[q:q + 4])[0]))(priv, q)
n = struct.unpack(">I", priv[q:q + 4])[0]
print(priv[q + 4:q + 4 + 32].hex())
PY
)
ag_like "$SEED" "^[0-9a-f]{64}$" "host_key_seed_read"
SPORT=$(ag_free_port)
sed -e "s|^gateway:|gateway:\n  server:\n    host_keys: [$AG_DIR/serve_hostkey]\n    allow_users: [$AG_USER]|" \
    "$AG_DIR/policy.yaml" | ag_write_policy "$AG_DIR/serve.yaml"
"$AG_DIR/agentgate" serve --config "$AG_DIR/serve.yaml" --listen "127.0.0.1:$SPORT" \
    --foreground -e 2>>"$AG_DIR/serve.log" &
SRV=$!
AG_SERVER_PIDS+=("$SRV")
ag_wait_until 60 ag_listening "$SRV" "$SPORT"
mkfifo "$AG_DIR/hold2"
ag_as alice -p "$SPORT" "$T" "cat $AG_DIR/hold2; echo serve-done" > "$AG_DIR/serve.out" 2>&1 &
client=$!
cat_runs() { pgrep -u "$AG_USER" -x cat >/dev/null; }
ag_ok serve_command_running ag_wait_until 60 cat_runs
# the key file's text too (what reading it left behind), a line of it
KEYLINE=$(sed -n 2p "$AG_DIR/serve_hostkey")
out=$(runuser -u "$AG_USER" -- python3 "$AG_DIR/scan.py" "$BOB_HASH" "$MARK" "$SEED" "$KEYLINE")
printf '%s\n' "$out" | sed 's/^/# serve: /'
ag_unlike "$out" "FOUND" "no_process_the_account_can_read_holds_serves_host_key" "$out"
ag_unlike "$out" " agentgate (clean|FOUND)" "no_copy_of_serves_memory_readable_by_the_account" "$out"
echo done > "$AG_DIR/hold2"
wait "$client"
ag_like "$(cat "$AG_DIR/serve.out")" "serve-done" "alices_command_ran_under_serve" "$(cat "$AG_DIR/serve.log")"
kill "$SRV" 2>/dev/null
ag_done
