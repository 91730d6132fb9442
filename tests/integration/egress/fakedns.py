#!/usr/bin/python3
# egress/fakedns.py - a name server for the egress tests (ag_private_resolver
# in lib.sh makes it the proxy's resolver).
#
#   fakedns.py ADDR UPFILE RELEASE ANSWERED
#
# Listens on ADDR port 53 (UDP) and writes UPFILE once it does.  Every
# name has the IPv4 address 127.0.0.1 and no IPv6 one, except: a name
# under .priv.test has 10.255.255.1; a name under .slow.test is answered
# only once the file RELEASE exists, and ANSWERED is made when it has been.
import os, socket, struct, sys, threading, time

addr, up, release, answered = sys.argv[1:5]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((addr, 53))
open(up, "w").write("up\n")


def answer(q, peer):
    tid = struct.unpack(">H", q[:2])[0]
    i, labels = 12, []
    while q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode())
        i += 1 + q[i]
    name, qtype = ".".join(labels).lower(), struct.unpack(">H", q[i + 1:i + 3])[0]
    slow = name.endswith(".slow.test")
    while slow and not os.path.exists(release):
        time.sleep(0.05)
    a = "10.255.255.1" if name.endswith(".priv.test") else "127.0.0.1"
    an = b""
    if qtype == 1:
        an = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 5, 4) + socket.inet_aton(a)
    s.sendto(struct.pack(">HHHHHH", tid, 0x8180, 1, 1 if an else 0, 0, 0) + q[12:i + 5] + an,
             peer)
    if slow and qtype == 1:
        open(answered, "w").close()


while True:
    q, peer = s.recvfrom(512)
    threading.Thread(target=answer, args=(q, peer), daemon=True).start()
