#!/usr/bin/python3
# egress/server.py - a local HTTPS server standing in for a public host in
# integration/egress.sh (issue 32).
#
#   server.py static DIR CERT KEY PORTFILE LOG   files under DIR (a PEP 503
#                                                "simple" index, its wheels)
#   server.py git DIR CERT KEY PORTFILE LOG      `git http-backend` (CGI) with
#                                                DIR as GIT_PROJECT_ROOT
#
# It listens on 127.0.0.1 port 0 and writes the port it got to PORTFILE
# (written whole, by rename) once it accepts connections: no race for a
# port, and the test waits for the file.  LOG gets one line per accepted
# TCP connection ("connect") and per request ("METHOD PATH Host: ..."),
# flushed at once, so the test can tell which hosts were reached at all.
# TLS is set up in each connection's own thread: a client that connects
# and says nothing holds up no other.
import http.server
import os
import socket
import socketserver
import ssl
import subprocess
import sys
import threading

mode, root, cert, key, portfile, logpath = sys.argv[1:7]
root = os.path.abspath(root)
log_lock = threading.Lock()
log_file = open(logpath, "a", buffering=1, encoding="utf-8")


def log(line):
    with log_lock:
        log_file.write(line + "\n")
        log_file.flush()


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)


class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def __init__(self, *a, **kw):
        super().__init__(*a, directory=root, **kw)

    def log_message(self, fmt, *args):
        pass

    def note(self):
        log("%s %s Host: %s" % (self.command, self.path, self.headers.get("Host", "")))

    def do_HEAD(self):
        self.note()
        if mode == "git":
            return self.cgi()
        super().do_HEAD()

    def do_GET(self):
        self.note()
        if mode == "git":
            return self.cgi()
        super().do_GET()

    def do_POST(self):
        self.note()
        if mode == "git":
            return self.cgi()
        self.send_error(405)

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def cgi(self):
        path, _, query = self.path.partition("?")
        data = self.body()
        env = {
            "PATH": "/usr/bin:/bin",
            "GIT_PROJECT_ROOT": root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REMOTE_ADDR": self.client_address[0],
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(data)),
        }
        for h, e in (("Git-Protocol", "GIT_PROTOCOL"),
                     ("Content-Encoding", "HTTP_CONTENT_ENCODING")):
            if self.headers.get(h):
                env[e] = self.headers[h]
        p = subprocess.run(["git", "http-backend"], input=data, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.stderr:
            log("http-backend: " + p.stderr.decode(errors="replace").strip())
        head, sep, payload = p.stdout.partition(b"\r\n\r\n")
        if not sep:
            head, sep, payload = p.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        if p.returncode != 0 and not sep:
            status, headers, payload = 500, [], b""
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def get_request(self):
        conn, addr = self.socket.accept()
        log("connect %s:%d" % addr)
        return conn, addr

    def finish_request(self, request, client_address):
        try:
            request = ctx.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            log("tls-failed %s" % e)
            return
        self.RequestHandlerClass(request, client_address, self)


srv = Server(("127.0.0.1", 0), Handler)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
