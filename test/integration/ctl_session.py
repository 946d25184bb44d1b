#!/usr/bin/env python3
"""ctl_session.py - raw control-protocol sessions for limits.sh (docs/control.md).

  ctl_session.py SOCKET regions N
      attach (a 1 MiB heap), then reg_mr N regions of 4 KiB; print one JSON
      object: {"ok": regions registered, "error": {code, reason} of the first
      refusal or null}.
  ctl_session.py SOCKET fill-qps SESSIONS
      open up to SESSIONS sessions and create QPs in each until the daemon
      refuses one; print {"sessions", "qps", "per_session": [...],
      "error": {code, reason} of the refusal that ended the last session}.
      Every session stays open until all are done (the QPs are held at once),
      then all close (the daemon destroys their QPs).
  ctl_session.py SOCKET selftest-held
      open a selftest listener on this connection (no "detach") and print
      {"id": ...}; then wait for a line on stdin and close the connection.

Descriptors an attach reply carries (SCM_RIGHTS) are closed at once.
"""
import array
import json
import os
import socket
import sys

ABI = 2  # MRC_SHM_ABI_VERSION (lib/shm/mrc_shm.h)


class Conn:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(30)
        self.s.connect(path)
        self.buf = b""
        self.next_id = 0

    def _line(self):
        while b"\n" not in self.buf:
            msg, anc, _, _ = self.s.recvmsg(1 << 16, socket.CMSG_SPACE(16 * 4))
            for lvl, typ, data in anc:
                if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                    fds = array.array("i")
                    fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
                    for fd in fds:
                        os.close(fd)
            if not msg:
                raise EOFError("the daemon closed the connection")
            self.buf += msg
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def req(self, cmd, **args):
        self.next_id += 1
        rid = self.next_id
        self.s.sendall((json.dumps({"v": 1, "id": rid, "cmd": cmd, "args": args}) + "\n").encode())
        while True:
            r = self._line()
            if r.get("id") == rid:
                return r

    def close(self):
        self.s.close()


def err_of(r):
    e = r.get("error") or {}
    return {"code": e.get("code"), "reason": e.get("reason", e.get("message"))}


def attach(c, heap=1 << 20):
    r = c.req("attach", abi=ABI, heap_bytes=heap)
    if not r.get("ok"):
        raise SystemExit("attach refused: %s" % json.dumps(r))
    return r["result"]


def regions(path, n):
    c = Conn(path)
    a = attach(c)
    ok, error = 0, None
    for k in range(n):
        r = c.req("reg_mr", ofs=a["heap_ofs"] + k * 4096, len=4096, access=3)
        if not r.get("ok"):
            error = err_of(r)
            break
        ok += 1
    c.close()
    return {"ok": ok, "error": error}


def fill_qps(path, sessions):
    conns, per, error = [], [], None
    for _ in range(sessions):
        c = Conn(path)
        conns.append(c)
        attach(c, 65536)
        n = 0
        while True:
            r = c.req("qp_create")
            if not r.get("ok"):
                error = err_of(r)
                break
            n += 1
        per.append(n)
        if error and "per_client" not in (error["reason"] or ""):
            break  # the daemon's table is full, not this session's share
        error = None
    for c in conns:
        c.close()
    return {"sessions": len(per), "qps": sum(per), "per_session": per, "error": error}


def selftest_held(path):
    c = Conn(path)
    r = c.req("selftest_listen", region_bytes=1 << 20)
    print(json.dumps({"id": r["result"]["id"]} if r.get("ok") else {"error": err_of(r)}), flush=True)
    sys.stdin.readline()
    c.close()
    return None


def main():
    path, mode = sys.argv[1], sys.argv[2]
    if mode == "regions":
        out = regions(path, int(sys.argv[3]))
    elif mode == "fill-qps":
        out = fill_qps(path, int(sys.argv[3]))
    elif mode == "selftest-held":
        out = selftest_held(path)
    else:
        raise SystemExit("usage: ctl_session.py SOCKET regions N | fill-qps SESSIONS | selftest-held")
    if out is not None:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
