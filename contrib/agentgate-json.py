#!/usr/bin/env python3
"""agentgate-json.py - run commands through agentgate's JSON Lines protocol.

    contrib/agentgate-json.py [SSH-OPTION...] agent@host -- COMMAND...

Opens one session (`ssh -s agent@host agentgate-json`), sends each COMMAND
as a request and prints what came back: the exit status, the working
directory afterwards and the command's own output, or why it was refused.
The commands share the session: a `cd` or `export` carries over to the next
one.  The exit status is that of the last command (126 when refused).

    contrib/agentgate-json.py agent@host -- 'cd ~/work' 'make check' 'git status --short'
"""
import json
import subprocess
import sys


def main(argv):
    if "--" not in argv or argv.index("--") == 0:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    cut = argv.index("--")
    ssh, commands = argv[:cut], argv[cut + 1:]
    proc = subprocess.Popen(["ssh", *ssh[:-1], "-s", ssh[-1], "agentgate-json"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    # every request up front: the session answers them in order
    for n, command in enumerate(commands, 1):
        proc.stdin.write(json.dumps({"id": n, "command": command}) + "\n")
    proc.stdin.close()
    status = 0
    for line in proc.stdout:
        r = json.loads(line)
        if "error" in r:
            print("request %s: %s" % (r.get("id"), r["error"]), file=sys.stderr)
            status = 2
            continue
        sys.stdout.write(r["stdout"])
        sys.stderr.write(r["stderr"])
        status = r["exit_code"]
        if r["decision"] in ("deny", "ask-deny"):
            print("[%s] refused: %s" % (r["id"], r["reason"]), file=sys.stderr)
        else:
            print("[%s] exit %s%s in %s (%d ms)" % (r["id"], r["exit_code"],
                  " (output cut)" if r["truncated"] else "", r["cwd"], r["duration_ms"]),
                  file=sys.stderr)
    proc.wait()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
