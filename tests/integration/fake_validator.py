#!/usr/bin/python3
# A stand-in for the services agentgate's validator asks (we own none of
# them), speaking each real protocol on 127.0.0.1:
#
#   .../v1/chat/completions   OpenAI Chat Completions (also Ollama, llama.cpp)
#   .../v1/messages           Anthropic Messages (the answer as a tool call)
#   .../v1/data/...           Open Policy Agent's data API
#   anything else             a webhook: the decision document as the body
#
# The first path segment says how to behave, so one server serves every
# case of a test:
#   judge      allow when the command starts with a word of $JUDGE_ALLOW
#              (comma-separated), else deny; confidence 0.9
#   allow, deny  that verdict, whatever the command
#   slow       never answer (until the client hangs up)
#   500, 429   that status; 429 says Retry-After: 0
#   flaky      429 with Retry-After: 0 on every odd request, else judge
#   nonjson    a body that is not JSON (openai: content that is not JSON)
#   extra      a decision with an extra field
#   warn       decision "warn"
#   nan        confidence NaN
#   lowconf    allow with confidence 0.2
#   refusal    the model refuses (openai refusal, anthropic stop_reason refusal)
#   length     openai finish_reason "length", anthropic stop_reason max_tokens
#   huge       2 MiB of answer
#   undefined  OPA without "result"
#   boolean    OPA result true for judge-allowed commands, else false
#   ansi       deny with ESC sequences and newlines in the reason
#   inject     allow, with the reason quoting the command (for corpus tests)
#   approve    webhook: "pending", to be polled at /approve/poll/N (a GET),
#              which stays pending until the test writes $DIR/decide-N (the
#              person's decision document)
#   offsite    webhook: "pending" with a poll URL on another server
#
# Every request is appended to $DIR/requests.jsonl as one object: path,
# headers (lower-cased), body (parsed JSON, or the raw text) -- the test
# asserts the exact wire format from it.  The port (argv[2], default any
# free one) goes to $DIR/port.
import http.server
import json
import os
import select
import socketserver
import sys

D = sys.argv[1]
ALLOW = [w for w in os.environ.get("JUDGE_ALLOW", "").split(",") if w]
count = {"n": 0}


def request_doc(kind, body):
    """The request document the gateway sent, whatever the envelope."""
    if kind == "openai":
        return json.loads(body["messages"][1]["content"])
    if kind == "anthropic":
        return json.loads(body["messages"][0]["content"])
    if kind == "opa":
        return body["input"]
    return body


def judge(doc):
    cmd = doc.get("command", "")
    first = cmd.split()[0] if cmd.split() else ""
    if first in ALLOW:
        return {"decision": "allow", "reason": "%s is on the judge's list" % first,
                "confidence": 0.9}
    return {"decision": "deny", "reason": "%s is not on the judge's list" % (first or "it"),
            "confidence": 0.9}


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def reply(self, status, payload, extra=None):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def envelope(self, kind, decision, mode):
        """decision: the answer document (dict) or raw text for content."""
        if kind == "openai":
            content = decision if isinstance(decision, str) else json.dumps(decision)
            msg = {"role": "assistant", "content": content, "refusal": None}
            fin = "stop"
            if mode == "refusal":
                msg = {"role": "assistant", "content": None,
                       "refusal": "I can't help with that."}
            if mode == "length":
                fin = "length"
            return {"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
                    "choices": [{"index": 0, "message": msg, "finish_reason": fin}]}
        if kind == "anthropic":
            stop = {"refusal": "refusal", "length": "max_tokens"}.get(mode, "tool_use")
            if isinstance(decision, str):
                block = {"type": "text", "text": decision}
                stop = "end_turn" if mode == "nonjson" else stop
            else:
                block = {"type": "tool_use", "id": "toolu_1", "name": "decide",
                         "input": decision}
            return {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                    "content": [block], "stop_reason": stop}
        if kind == "opa":
            if mode == "undefined":
                return {}
            return {"result": decision}
        return decision

    def record(self, body):
        with open(os.path.join(D, "requests.jsonl"), "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "headers": {k.lower(): v for k, v in self.headers.items()},
                                "body": body}) + "\n")

    def pending(self, poll):
        return self.reply(200, {"decision": "pending", "reason": "waiting for an operator",
                                "poll": poll}, {"Retry-After": "0"})

    def do_GET(self):
        self.record(None)
        parts = self.path.split("/")
        if len(parts) == 4 and parts[1] == "approve" and parts[2] == "poll":
            decided = os.path.join(D, "decide-" + parts[3])
            if os.path.exists(decided):
                with open(decided, "rb") as f:
                    return self.reply(200, f.read())
            return self.pending("http://127.0.0.1:%d%s" % (self.server.server_address[1],
                                                           self.path))
        return self.reply(404, {"error": "no such resource"})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self.record(body)
        parts = self.path.split("/")
        mode = parts[1] if len(parts) > 1 else ""
        if "/v1/chat/completions" in self.path:
            kind = "openai"
        elif "/v1/messages" in self.path:
            kind = "anthropic"
        elif "/v1/data/" in self.path:
            kind = "opa"
        else:
            kind = "webhook"
        count["n"] += 1
        if mode == "approve":
            return self.pending("http://127.0.0.1:%d/approve/poll/%d" %
                                (self.server.server_address[1], count["n"]))
        if mode == "offsite":
            return self.pending("http://127.0.0.2:%d/approve/poll/1" %
                                self.server.server_address[1])
        if mode == "slow":
            # hold the request until the gateway gives up and hangs up
            while True:
                r, _, _ = select.select([self.connection], [], [], 3600)
                if r and not self.connection.recv(1, 0):
                    return
        if mode == "500":
            return self.reply(500, {"error": {"message": "internal"}})
        if mode == "429" or (mode == "flaky" and count["n"] % 2 == 1):
            return self.reply(429, {"error": {"message": "rate limited"}},
                              {"Retry-After": "0"})
        try:
            doc = request_doc(kind, body)
        except (KeyError, IndexError, TypeError, ValueError):
            return self.reply(400, {"error": "cannot read the request document"})
        dec = judge(doc)
        if mode == "allow":
            dec = {"decision": "allow", "reason": "fine", "confidence": 1}
        elif mode == "deny":
            dec = {"decision": "deny", "reason": "not today", "confidence": 1}
        elif mode == "nonjson":
            if kind != "openai":
                return self.reply(200, b"<html>allow</html>")
            dec = "Sure! I think this is fine: allow"
        elif mode == "extra":
            dec = dict(dec, decision="allow", override=True)
        elif mode == "warn":
            dec = dict(dec, decision="warn")
        elif mode == "nan":
            text = '{"decision": "allow", "reason": "x", "confidence": NaN}'
            if kind == "webhook":
                return self.reply(200, text.encode())
            if kind == "opa":
                return self.reply(200, ('{"result": %s}' % text).encode())
            if kind == "anthropic":
                return self.reply(200, ('{"type": "message", "content": [{"type": '
                                        '"tool_use", "name": "decide", "input": %s}], '
                                        '"stop_reason": "tool_use"}' % text).encode())
            dec = text
        elif mode == "lowconf":
            dec = {"decision": "allow", "reason": "probably fine", "confidence": 0.2}
        elif mode == "huge":
            dec = {"decision": "allow", "reason": "x" * (2 << 20), "confidence": 1}
        elif mode == "boolean":
            dec = dec["decision"] == "allow"
        elif mode == "ansi":
            dec = {"decision": "deny", "reason": "\x1b[31mred\x1b[0m\nsecond line\x07",
                   "confidence": 1}
        elif mode == "inject":
            dec = {"decision": "allow", "reason": "saw %d bytes" % len(doc["command"]),
                   "confidence": 1}
        return self.reply(200, self.envelope(kind, dec, mode))

    def log_message(self, *a):
        pass


class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass    # a client that gave up (timeout, cap) is part of the test


s = S(("127.0.0.1", int(sys.argv[2]) if len(sys.argv) > 2 else 0), H)
with open(os.path.join(D, "port.tmp"), "w") as f:
    f.write(str(s.server_address[1]))
os.rename(os.path.join(D, "port.tmp"), os.path.join(D, "port"))
s.serve_forever()
