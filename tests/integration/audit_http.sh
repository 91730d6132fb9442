#!/bin/bash
# audit.http_url: every record is POSTed to a collector (a small mock of a
# service we do not own, on 127.0.0.1), the same lines the file gets.  A
# collector that refuses or is gone does not stop commands: the records wait
# in the spool and reach it, first, in order, once it is back.  Only when
# neither the collector nor the spool takes them does audit.required refuse.
. "$(dirname "$0")/lib.sh"
ag_setup

COL=$AG_DIR/collector
mkdir -p "$COL"
cat > "$COL/collector.py" <<'EOF'
# Records each POST body to bodies.jsonl (and method, path, content type to
# requests.log); answers 503 while the file "down" exists, else 204.
import http.server, os, sys
d = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        if os.path.exists(os.path.join(d, "down")):
            self.send_response(503)
        else:
            with open(os.path.join(d, "bodies.jsonl"), "ab") as f:
                f.write(body)
            with open(os.path.join(d, "requests.log"), "a") as f:
                f.write("%s %s %s\n" % (self.command, self.path,
                                        self.headers.get("Content-Type")))
            self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(os.path.join(d, "port.tmp"), "w") as f:
    f.write(str(s.server_address[1]))
os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))
s.serve_forever()
EOF
COL_PID=
start_collector() {
	rm -f "$COL/port"
	"$AG_PYTHON" "$COL/collector.py" "$COL" &
	COL_PID=$!
	# the collector names its port once it listens
	ag_wait_until 60 test -s "$COL/port" || { echo "the collector did not start" >&2; exit 99; }
	COL_PORT=$(cat "$COL/port")
}
stop_collector() {
	[ -n "$COL_PID" ] && kill "$COL_PID" 2>/dev/null && wait "$COL_PID" 2>/dev/null
	COL_PID=
}
trap 'stop_collector; ag_cleanup' EXIT
start_collector

# policy FILE-LINE SPOOL-LINE: the test profile with this audit section
policy() {
	ag_write_policy "$AG_DIR/policy.yaml" <<EOF
version: 1
gateway:
  sandbox: "off"
  audit:
    $1
    http_url: http://127.0.0.1:$COL_PORT/ingest?token=s3cret
    $2
    required: true
users:
  @USER@: test
profiles:
  test:
    allow: [echo, touch]
    paths: { read: ["/"], write: ["/tmp"] }
EOF
}
nlines() { if [ -f "$1" ]; then wc -l < "$1"; else echo 0; fi; }

# (1) file sink and collector: the collector gets the very lines of the file
policy "file: @AUDIT@" ""
ag_run a 'echo to-both'
ag_is "$a_out" "to-both" "collector_up_command_runs"
ag_is "$(nlines "$COL/bodies.jsonl")" 4 "collector_got_four_records"
ag_ok "collector_lines_equal_file_lines" cmp -s "$COL/bodies.jsonl" "$AG_AUDIT"
ag_is "$(sort -u "$COL/requests.log")" "POST /ingest?token=s3cret application/x-ndjson" \
    "posted_as_ndjson"

# (2) collector answering 503, only http_url + spool: commands still run and
# the records wait in the spool, 0600
mkdir "$AG_DIR/spool"
chown "$AG_USER" "$AG_DIR/spool"
chmod 0700 "$AG_DIR/spool"
SPOOL=$AG_DIR/spool/spool-$(id -u "$AG_USER").jsonl
LOCK=$AG_DIR/spool/spool-$(id -u "$AG_USER").lock
spooled() { cat "$SPOOL" 2>/dev/null; }
policy "" "spool: $AG_DIR/spool"
: > "$COL/down"
ag_run b 'echo while-503'
ag_is "$b_out" "while-503" "collector_503_command_runs"
ag_is "$b_rc" 0 "collector_503_status"
ag_is "$(spooled | wc -l)" 4 "collector_503_records_spooled"
ag_is "$(stat -c %a "$SPOOL")" 600 "spool_file_mode"
rm -f "$COL/down"

# ... and with the collector gone altogether (connection refused)
stop_collector
ag_run c 'echo while-gone'
ag_is "$c_out" "while-gone" "collector_gone_command_runs"
ag_is "$(spooled | wc -l)" 8 "collector_gone_records_spooled"
ag_is "$(nlines "$COL/bodies.jsonl")" 4 "collector_got_nothing_while_down"
ag_unlike "$c_err" "s3cret" "token_not_shown_to_the_user"
spooled > "$AG_DIR/spooled"

# (3) collector back: the next session sends the spooled records first, in
# order, then its own; each arrives once and the spool is emptied
start_collector
policy "" "spool: $AG_DIR/spool"
ag_run d 'echo collector-back'
ag_is "$d_out" "collector-back" "collector_back_command_runs"
ag_is "$(nlines "$COL/bodies.jsonl")" 16 "collector_has_every_record"
head -n 4 "$COL/bodies.jsonl" > "$AG_DIR/first"
sed -n '5,12p' "$COL/bodies.jsonl" > "$AG_DIR/drained"
ag_ok "spooled_records_arrive_first_in_order" cmp -s "$AG_DIR/drained" "$AG_DIR/spooled"
ag_is "$(sort "$COL/bodies.jsonl" | uniq -d | wc -l)" 0 "each_record_exactly_once"
ag_is "$("$AG_PYTHON" -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
print([(x["event"], x.get("command")) for x in r[4:]])' "$COL/bodies.jsonl")" \
    "[('session_start', None), ('command_start', 'echo while-503'), ('command', 'echo while-503'), ('session_end', None), ('session_start', None), ('command_start', 'echo while-gone'), ('command', 'echo while-gone'), ('session_end', None), ('session_start', None), ('command_start', 'echo collector-back'), ('command', 'echo collector-back'), ('session_end', None)]" \
    "collector_sequence"
ag_is "$(stat -c %s "$SPOOL")" 0 "spool_emptied"

# a drain cut short notes how far the collector got (in the lock file):
# what it has is not sent again; a note that is not at a record's end is
# not trusted (sent twice rather than never)
: > "$COL/down"
ag_run g 'echo partly'
rm -f "$COL/down"
ag_is "$(nlines "$SPOOL")" 4 "spooled_again"
first=$(head -n 1 "$SPOOL" | wc -c)
printf '%020d\n' "$first" > "$LOCK"
: > "$COL/bodies.jsonl"
ag_run h 'echo after-partial'
ag_is "$(nlines "$COL/bodies.jsonl")" 7 "sent_records_not_sent_again"
ag_is "$(head -n 1 "$COL/bodies.jsonl" | grep -c '"command":"echo partly"')" 1 \
    "drain_resumes_after_the_noted_record"
: > "$COL/down"
ag_run i 'echo odd-note'
rm -f "$COL/down"
printf '%020d\n' 7 > "$LOCK"
: > "$COL/bodies.jsonl"
ag_run j 'echo after-odd-note'
ag_is "$(nlines "$COL/bodies.jsonl")" 8 "odd_note_sends_everything"

# concurrent sessions while a backlog drains: one drains, the others queue
# behind; still every record once, the backlog first
: > "$COL/down"
for i in 1 2 3 4 5; do ag_ssh "echo backlog-$i" >/dev/null 2>&1; done
rm -f "$COL/down"
spooled > "$AG_DIR/backlog"
ag_is "$(wc -l < "$AG_DIR/backlog")" 20 "backlog_spooled"
: > "$COL/bodies.jsonl"
pids=()
for i in $(seq 1 10); do
	ag_ssh "echo concurrent-$i" >/dev/null 2>&1 &
	pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
ag_is "$fails" 0 "concurrent_sessions_ran"
ag_is "$(nlines "$COL/bodies.jsonl")" 60 "concurrent_every_record_arrived"
ag_is "$(sort "$COL/bodies.jsonl" | uniq -d | wc -l)" 0 "concurrent_each_record_once"
ag_ok "backlog_arrived_first" cmp -s <(head -n 20 "$COL/bodies.jsonl") "$AG_DIR/backlog"
ag_is "$(stat -c %s "$SPOOL")" 0 "concurrent_spool_emptied"

# (4) collector gone and a spool the account cannot write: required refuses
stop_collector
mkdir "$AG_DIR/rospool"
chmod 0755 "$AG_DIR/rospool"	# root's
policy "" "spool: $AG_DIR/rospool"
rm -f "/tmp/agentgate-http-$$"
ag_run e "touch /tmp/agentgate-http-$$"
ag_is "$e_rc" 126 "collector_and_spool_down_refuses"
ag_like "$e_err" "^agentgate: .*audit collector http://127\.0\.0\.1:[0-9]+/ingest: .*audit spool .*rospool.*not run" \
    "collector_and_spool_down_message"
ag_unlike "$e_err" "s3cret" "token_not_in_refusal"
ag_ok "collector_and_spool_down_command_did_not_run" test ! -e "/tmp/agentgate-http-$$"

# ... but with required: false the command runs
sed -i 's/required: true/required: false/' "$AG_DIR/policy.yaml"
ag_run f "echo not-required"
ag_is "$f_out" "not-required" "not_required_runs_without_collector"

ag_done
