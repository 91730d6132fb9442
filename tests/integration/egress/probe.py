#!/usr/bin/env python3
"""probe.py - the egress probes of netprobe.c from python3 (issue 32), for
tests/integration/egress_adversary.sh.

Same arguments (KEY=VALUE... GROUP...) and the same output: one line
NAME=reached[:DETAIL] or NAME=refused:REASON per probe, '#' lines for
information.  Every probe is bounded by timeout=MS (default 2000).
Groups: tcp tfo udp mptcp raw vsock unix dns uring netns http socks
autobind; "all" is every group but autobind (which waits for a line on
stdin).
"""
import ctypes
import errno
import os
import select
import socket
import struct
import sys
import time

O = {"port": 0, "uport": 0, "host4": "", "host6": "", "proxy": "127.0.0.1:3128",
     "proxy6": "", "allowed": "", "http_host": "plain.test", "dns": "",
     "dns_port": "53", "vsock_cid": "", "vsock_port": "9999", "abstract": "",
     "unixpath": "", "wildnames": "",
     "netns": "", "timeout": "2000", "prefix": ""}


def T():
    return int(O["timeout"]) / 1000.0


def report(name, result):
    print("%s%s=%s" % (O["prefix"], name, result), flush=True)


def info(name, result):
    print("#%s%s=%s" % (O["prefix"], name, result), flush=True)


def ename(e):
    if isinstance(e, socket.timeout):
        return "ETIMEDOUT"
    n = getattr(e, "errno", None)
    if n is None:
        return type(e).__name__
    return errno.errorcode.get(n, "E%d" % n)


def targets(port):
    t = [("lo4", socket.AF_INET, ("127.0.0.1", port))]
    if O["host4"]:
        t.append(("host4", socket.AF_INET, (O["host4"], port)))
    t.append(("lo6", socket.AF_INET6, ("::1", port)))
    if O["host6"]:
        t.append(("host6", socket.AF_INET6, (O["host6"], port)))
    return t


def banner(s, name):
    s.settimeout(T())
    try:
        b = s.recv(64).split(b"\n")[0].decode("ascii", "replace")
        report(name, "reached:%s" % (b or "connected"))
    except OSError:
        report(name, "reached:connected")


def stream(what, proto):
    for tag, fam, addr in targets(O["port"]):
        name = "%s_%s" % (what, tag)
        try:
            s = socket.socket(fam, socket.SOCK_STREAM, proto)
        except OSError as e:
            report(name, "refused:socket:%s" % ename(e))
            continue
        try:
            s.settimeout(T())
            s.connect(addr)
            banner(s, name)
        except OSError as e:
            report(name, "refused:%s" % ename(e))
        finally:
            s.close()


def wait_connected(s):
    _, w, _ = select.select([], [s], [], T())
    if not w:
        return errno.ETIMEDOUT
    return s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)


def tfo():
    data = b"tfo-probe\n"
    for how in ("sendto", "sendmsg"):
        for tag, fam, addr in targets(O["port"]):
            name = "tfo_%s_%s" % (how, tag)
            try:
                s = socket.socket(fam, socket.SOCK_STREAM)
            except OSError as e:
                report(name, "refused:socket:%s" % ename(e))
                continue
            s.setblocking(False)
            try:
                try:
                    if how == "sendto":
                        s.sendto(data, socket.MSG_FASTOPEN, addr)
                    else:
                        s.sendmsg([data], [], socket.MSG_FASTOPEN, addr)
                except BlockingIOError:
                    pass
                except OSError as e:
                    if e.errno != errno.EINPROGRESS:
                        raise
                err = wait_connected(s)
                if err:
                    report(name, "refused:%s" % errno.errorcode.get(err, err))
                else:
                    s.setblocking(True)
                    banner(s, name)
            except OSError as e:
                report(name, "refused:%s" % ename(e))
            finally:
                s.close()


def udp():
    for tag, fam, addr in targets(O["uport"]):
        name = "udp_%s" % tag
        try:
            s = socket.socket(fam, socket.SOCK_DGRAM)
        except OSError as e:
            report(name, "refused:socket:%s" % ename(e))
            continue
        try:
            s.settimeout(T())
            s.sendto(b"udp-probe\n", addr)
            s.recv(64)
            report(name, "reached:echo")
        except OSError as e:
            report(name, "refused:%s" % ename(e))
        finally:
            s.close()


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def raw():
    ident = os.getpid() & 0xffff
    for tag, fam, addr in targets(0):
        v6 = fam == socket.AF_INET6
        name = "raw_icmp%s_%s" % ("6" if v6 else "", tag)
        try:
            s = socket.socket(fam, socket.SOCK_RAW,
                              socket.IPPROTO_ICMPV6 if v6 else socket.IPPROTO_ICMP)
        except OSError as e:
            report(name, "refused:socket:%s" % ename(e))
            continue
        try:
            hdr = struct.pack("!BBHHH", 128 if v6 else 8, 0, 0, ident, 1)
            if not v6:
                hdr = struct.pack("!BBHHH", 8, 0, csum(hdr), ident, 1)
            s.settimeout(T())
            s.sendto(hdr, addr)
            end = time.monotonic() + T()
            while True:
                left = end - time.monotonic()
                if left <= 0:
                    raise socket.timeout()
                s.settimeout(left)
                b = s.recv(256)
                if not v6:
                    b = b[(b[0] & 0xf) * 4:]
                if len(b) >= 8 and b[0] == (129 if v6 else 0) and \
                        struct.unpack("!H", b[4:6])[0] == ident:
                    report(name, "reached:echo-reply")
                    break
        except OSError as e:
            report(name, "refused:%s" % ename(e))
        finally:
            s.close()
    # raw UDP: a hand-made datagram to the outside UDP listener
    for tag, fam, addr in targets(O["uport"]):
        if fam != socket.AF_INET:
            continue
        name = "raw_udp_%s" % tag
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
        except OSError as e:
            report(name, "refused:socket:%s" % ename(e))
            continue
        sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sink.bind(("0.0.0.0", 0))
            sink.settimeout(T())
            d = b"raw-probe\n"
            s.sendto(struct.pack("!HHHH", sink.getsockname()[1], O["uport"], 8 + len(d), 0) + d,
                     (addr[0], 0))
            sink.recv(64)
            report(name, "reached:echo")
        except OSError as e:
            report(name, "refused:%s" % ename(e))
        finally:
            s.close()
            sink.close()
    # AF_PACKET: a whole frame onto the loopback interface
    name = "packet_lo4"
    try:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    except OSError as e:
        report(name, "refused:socket:%s" % ename(e))
        return
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sink.bind(("127.0.0.1", 0))
        sink.settimeout(T())
        d = b"packet-probe\n"
        udph = struct.pack("!HHHH", sink.getsockname()[1], O["uport"], 8 + len(d), 0)
        lo = socket.inet_aton("127.0.0.1")
        iph = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udph) + len(d), 0, 0, 64, 17, 0, lo, lo)
        iph = iph[:10] + struct.pack("!H", csum(iph)) + iph[12:]
        s.bind(("lo", 0))
        s.send(b"\0" * 12 + b"\x08\x00" + iph + udph + d)
        sink.recv(64)
        report(name, "reached:echo")
    except OSError as e:
        report(name, "refused:%s" % ename(e))
    finally:
        s.close()
        sink.close()


def vsock():
    for kind, typ in (("stream", socket.SOCK_STREAM), ("seqpacket", socket.SOCK_SEQPACKET),
                      ("dgram", socket.SOCK_DGRAM)):
        name = "vsock_%s" % kind
        try:
            s = socket.socket(socket.AF_VSOCK, typ)
        except OSError as e:
            report(name, "refused:socket:%s" % ename(e))
            continue
        try:
            if not O["vsock_cid"]:
                # socket(2) only: CID 2 is the hypervisor, not ours to poke
                report(name, "reached:socket-created")
                continue
            addr = (int(O["vsock_cid"], 0), int(O["vsock_port"], 0))
            if typ == socket.SOCK_DGRAM:
                s.sendto(b"vsock-probe\n", addr)
                report(name, "reached:sent-to-cid-%d" % addr[0])
            else:
                s.settimeout(T())
                s.connect(addr)
                report(name, "reached:cid-%d" % addr[0])
        except OSError as e:
            report(name, "refused:connect:%s" % ename(e))
        finally:
            s.close()


def unix():
    paths = [p for p in O["unixpath"].split(",") if p]
    for name, path in ([("unix_abstract", "\0" + O["abstract"] if O["abstract"] else "")] +
                       [("unix_path" + ("_%d" % (i + 1) if i else ""), p)
                        for i, p in enumerate(paths)]):
        if not path:
            continue
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(T())
            s.connect(path)
            banner(s, name)
        except OSError as e:
            report(name, "refused:%s" % ename(e))
        finally:
            s.close()


def dns():
    servers = []
    for d in filter(None, O["dns"].split(",")):
        if d == "resolv":
            try:
                for line in open("/etc/resolv.conf"):
                    w = line.split()
                    if len(w) >= 2 and w[0] == "nameserver":
                        servers.append(w[1])
            except OSError as e:
                info("dns_resolv", "unreadable:%s" % ename(e))
        else:
            servers.append(d)
    ident = (os.getpid() * 31 + 7) & 0xffff
    q = struct.pack("!HHHHHH", ident, 0x0100, 1, 0, 0, 0) + \
        b"\x16agentgate-egress-probe\x07invalid\0" + struct.pack("!HH", 1, 1)
    for srv in servers:
        tag = "".join(c if c.isalnum() else "_" for c in srv)
        fam = socket.AF_INET6 if ":" in srv else socket.AF_INET
        addr = (srv, int(O["dns_port"]))
        name = "dns_udp_%s" % tag
        s = socket.socket(fam, socket.SOCK_DGRAM)
        try:
            s.settimeout(T())
            s.sendto(q, addr)
            b = s.recv(512)
            report(name, "reached:answer" if b[:2] == q[:2] else "refused:no-answer")
        except OSError as e:
            report(name, "refused:%s" % ename(e))
        finally:
            s.close()
        name = "dns_tcp_%s" % tag
        s = socket.socket(fam, socket.SOCK_STREAM)
        try:
            s.settimeout(T())
            s.connect(addr)
            report(name, "reached:connected")
        except OSError as e:
            report(name, "refused:%s" % ename(e))
        finally:
            s.close()


def uring():
    """io_uring_setup(2) itself (425 on every architecture with the generic table)."""
    libc = ctypes.CDLL(None, use_errno=True)
    params = ctypes.create_string_buffer(120)
    fd = libc.syscall(425, 8, params)
    if fd < 0:
        report("uring_setup", "refused:%s" % errno.errorcode.get(ctypes.get_errno(), "E?"))
    else:
        os.close(fd)
        report("uring_setup", "reached:io_uring_setup-works")


def keys():
    """request_key(2) (249 on x86_64, 218 on aarch64): its upcall runs in the host's namespaces."""
    libc = ctypes.CDLL(None, use_errno=True)
    nr = 218 if os.uname().machine == "aarch64" else 249
    k = libc.syscall(nr, b"dns_resolver", b"agentgate-probe.invalid", b"x", 0)
    e = ctypes.get_errno()
    if k < 0 and e in (errno.ENOSYS, errno.EPERM, errno.EACCES):
        report("keyring_request_key", "refused:%s" % errno.errorcode.get(e, "E?"))
    else:
        report("keyring_request_key", "reached:%s" % (errno.errorcode.get(e, "E?") if k < 0 else "a-key"))


def netns():
    if not O["netns"]:
        return
    try:
        me = os.stat("/proc/self/ns/net").st_ino
    except OSError as e:
        report("netns", "refused:stat:%s" % ename(e))
        return
    report("netns", "reached:shared-host-namespace" if str(me) == O["netns"] else "refused:private")


def hostport(s):
    if s.startswith("["):
        h, _, p = s[1:].partition("]:")
    else:
        h, _, p = s.rpartition(":")
    return h, int(p)


def proxy_sock(which=None):
    if which == "v6":
        which = "[%s]:%d" % (O["proxy6"], hostport(O["proxy"])[1])
    h, p = hostport(which or O["proxy"])
    s = socket.socket(socket.AF_INET6 if ":" in h else socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(T())
    s.connect((h, p))
    return s


def read_all(s):
    buf = b""
    s.settimeout(T())
    try:
        while len(buf) < 65536:
            b = s.recv(4096)
            if not b:
                break
            buf += b
    except OSError:
        pass
    return buf


def http_probe(name, req, min200=1):
    try:
        s = proxy_sock()
    except OSError as e:
        report(name, "refused:proxy:%s" % ename(e))
        return
    try:
        s.sendall(req.encode())
        buf = read_all(s)
    except OSError as e:
        report(name, "refused:%s" % ename(e))
        return
    finally:
        s.close()
    codes = []
    for line in buf.split(b"\n"):
        if line.startswith(b"HTTP/1.") and len(line) >= 12:
            try:
                codes.append(int(line[9:12]))
            except ValueError:
                pass
    st = ",".join(map(str, codes))
    if b"agentgate-outside" in buf:
        report(name, "reached:outside-listener")
    elif sum(200 <= c < 300 for c in codes) >= min200:
        report(name, "reached:%s" % st)
    else:
        report(name, "refused:%s" % (st or "closed"))


def http_connect(name, authority):
    http_probe(name, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (authority, authority))


def http():
    p, hh = O["port"], O["http_host"]
    http_connect("http_connect_lo4", "127.0.0.1:%d" % p)
    if O["host4"]:
        http_connect("http_connect_host4", "%s:%d" % (O["host4"], p))
    http_connect("http_connect_lo6", "[::1]:%d" % p)
    if O["host6"]:
        http_connect("http_connect_host6", "[%s]:%d" % (O["host6"], p))
    http_connect("http_connect_localhost", "localhost:%d" % p)
    http_connect("http_connect_http_rule_host", "%s:80" % hh)
    if O["allowed"]:
        http_probe("http_connect_host_header_allowed",
                   "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: %s\r\n\r\n" % (p, O["allowed"]))
        http_connect("http_connect_allowed", O["allowed"])
    http_probe("http_smuggle_after_refusal",
               "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n"
               "GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (p, p, p, p))
    http_probe("http_get_allowed",
               "GET http://%s/pub/ok HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (hh, hh))
    http_probe("http_host_header_differs",
               "GET http://%s/pub/x HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % (hh, p))
    http_probe("http_origin_form",
               "GET /pub/x HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % p)
    http_probe("http_get_lo4",
               "GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % (p, p))


def socks5(name, cmd, host, port, proxy=None):
    try:
        s = proxy_sock(proxy)
    except OSError as e:
        report(name, "refused:proxy:%s" % ename(e))
        return
    try:
        s.sendall(b"\x05\x01\x00")
        if s.recv(2) != b"\x05\x00":
            report(name, "refused:greeting")
            return
        try:
            a = b"\x01" + socket.inet_pton(socket.AF_INET, host)
        except OSError:
            try:
                a = b"\x04" + socket.inet_pton(socket.AF_INET6, host)
            except OSError:
                a = b"\x03" + bytes([len(host)]) + host.encode()
        s.sendall(b"\x05" + bytes([cmd, 0]) + a + struct.pack("!H", port))
        r = s.recv(300)
        if len(r) < 2:
            report(name, "refused:closed")
        elif r[1] != 0:
            report(name, "refused:socks-%d" % r[1])
        elif cmd == 1:
            banner(s, name)
        else:
            report(name, "reached:socks-granted-cmd-%d" % cmd)
    except OSError as e:
        report(name, "refused:%s" % ename(e))
    finally:
        s.close()


def socks():
    p = O["port"]
    socks5("socks_connect_lo4", 1, "127.0.0.1", p)
    if O["host4"]:
        socks5("socks_connect_host4", 1, O["host4"], p)
    socks5("socks_connect_lo6", 1, "::1", p)
    socks5("socks_connect_localhost", 1, "localhost", p)
    socks5("socks_connect_http_rule_host", 1, O["http_host"], 80)
    socks5("socks_bind", 2, "0.0.0.0", 0)
    socks5("socks_udp_associate", 3, "0.0.0.0", 0)
    if O["allowed"]:
        h, ap = hostport(O["allowed"])
        socks5("socks_connect_allowed", 1, h, ap)
        if O["proxy6"]:
            socks5("socks_connect_allowed_via_proxy6", 1, h, ap, "v6")
    if O["proxy6"]:
        socks5("socks_connect_lo4_via_proxy6", 1, "127.0.0.1", p, "v6")


def autobind():
    socks_, names = [], []
    for fam, name in ((socket.AF_INET, "autobind4"), (socket.AF_INET6, "autobind6")):
        try:
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.listen(8)
        except OSError as e:
            report(name, "refused:listen:%s" % ename(e))
            continue
        info(name, str(s.getsockname()[1]))
        socks_.append(s)
        names.append(name)
    got = {}
    info("autobind", "waiting")
    end = time.monotonic() + 60
    while time.monotonic() < end:
        r, _, _ = select.select([sys.stdin] + socks_, [], [], end - time.monotonic())
        if not r:
            break
        for s in r:
            if s in socks_:
                c, peer = s.accept()
                c.sendall(b"agentgate-probe\n")
                c.close()
                got[names[socks_.index(s)]] = peer[0]
        if sys.stdin in r:
            sys.stdin.readline()
            break
    for s, name in zip(socks_, names):
        report(name, "reached:from-%s" % got[name] if name in got else "refused:no-connection")
        s.close()


GROUPS = [("netns", netns), ("tcp", lambda: stream("tcp", 0)),
          ("mptcp", lambda: stream("mptcp", 262)), ("tfo", tfo), ("udp", udp),
          ("uring", uring), ("keys", keys), ("raw", raw), ("vsock", vsock), ("unix", unix), ("dns", dns),
          ("http", http), ("socks", socks), ("autobind", autobind)]


def main():
    groups = []
    for a in sys.argv[1:]:
        k, eq, v = a.partition("=")
        if eq:
            if k not in O:
                print("probe.py: unknown key %s" % k, file=sys.stderr)
                return 2
            O[k] = v
        else:
            groups.append(a)
    O["port"] = int(O["port"] or 0)
    O["uport"] = int(O["uport"] or 0) or O["port"]
    for g, f in GROUPS:
        if g in groups or ("all" in groups and g != "autobind"):
            f()
    return 0


if __name__ == "__main__":
    sys.exit(main())
