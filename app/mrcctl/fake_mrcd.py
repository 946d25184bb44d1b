#!/usr/bin/env python3
"""fake_mrcd.py - a stand-in for mrcd's control socket, for mrcctl's unit test.

    fake_mrcd.py SOCKET [--verify-errors N] [--run-polls N] [--sender-fail]
                        [--hang CMD] [--fail CMD] [-- SOCKET [options]]...

Speaks the framing of docs/control.md (one JSON request per line, one reply
per line, in order) with canned results (--hang: never answer CMD; --fail: answer
CMD with ENOSPC), and plays either selftest role.
Several daemons, each with its own options and state, can share one process
(one Python start-up is slow on a busy machine). Every request line is
appended to SOCKET.log. Each socket is bound under a temporary name and
renamed into place once listening, so a client that sees the file can
connect; "ready" is written to stdout once every socket listens.
"""
import argparse
import errno
import json
import os
import socketserver
import sys
import threading

SENDER_INFO = "aa" * 208
RECEIVER_INFO = "bb" * 208

lock = threading.Lock()


def err(code, reason):
    """An error object as mrcd sends it: the number is the code's errno."""
    return {"errno": getattr(errno, code), "code": code, "reason": reason}


def status_of(opts, s):
    """One selftest_status result; the sender advances one step per poll."""
    if s["role"] == "sender":
        if s["state"] == "running":
            s["polls"] += 1
            if s["polls"] >= opts.run_polls:
                s["state"] = "failed" if opts.sender_fail else "done"
        frac = min(1.0, s["polls"] / opts.run_polls)
        done = int(s["bytes"] * frac)
        msgs = done // s["msg_size"]
        return {
            "id": s["id"], "role": "sender", "state": s["state"],
            "qp_state": "ERR" if s["state"] == "failed" else "RTS",
            "bytes_target": s["bytes"], "bytes_done": done, "msgs_done": msgs,
            "imm_msgs": msgs, "elapsed_ns": s["polls"] * 100000000,
            "goodput_gbps": 9.87 if done else 0.0, "rtx_total": 12,
            "ev_transitions": 3, "verify_errors": 0,
            "error": "peer unreachable" if s["state"] == "failed" else "",
            "extra": {"ignored": True},
        }
    # the receiver sees one message less on its first poll after the run
    s["polls"] += 1
    imm = s["expect_imm"] - (1 if s["polls"] == 1 and s["expect_imm"] else 0)
    return {
        "id": s["id"], "role": "receiver", "state": s["state"], "qp_state": "RTS",
        "bytes_target": 0, "bytes_done": 0, "msgs_done": imm, "imm_msgs": imm,
        "elapsed_ns": 0, "goodput_gbps": 0, "rtx_total": 0, "ev_transitions": 0,
        "verify_errors": opts.verify_errors, "error": "",
    }


def handle(opts, sessions, cmd, args):
    """Return (ok, result-or-error) or None for no reply."""
    if cmd in opts.hang:
        return None
    if cmd in opts.fail:
        return False, err("ENOSPC", "no room")
    if cmd == "version":
        return True, {"protocol": 1, "daemon": "fake-0.1"}
    if cmd == "status":
        return True, {"uptime_s": 12.5, "ports": {"up": 2, "total": 2},
                      "lcores": [1, 2], "name": "fake"}
    if cmd == "qps":
        return True, [
            {"qpn": 1, "state": "RTS", "peer": {"node": "10.0.0.2"}, "evs": 8},
            {"qpn": 22, "state": "ERR", "peer": {"node": "fd00::2"}, "evs": 128},
        ]
    if cmd == "qp":
        if args.get("qpn") != 5:
            return False, err("ENOENT", "qpn %s: no such QP" % args.get("qpn"))
        return True, {"qpn": 5, "state": "RTS", "cc": {"cwnd": 65536, "rtt_us": 12.25},
                      "evs": [{"ev": 1, "state": "GOOD"}, {"ev": 2, "state": "DENIED"}]}
    if cmd == "faults":
        return True, []
    with lock:
        if cmd == "selftest_listen":
            sid = 7
            sessions[sid] = {"id": sid, "role": "receiver", "state": "listening",
                             "polls": 0, "expect_imm": 0}
            return True, {"id": sid, "info": RECEIVER_INFO,
                          "region_bytes": args.get("region_bytes", 64 << 20)}
        if cmd == "selftest_start":
            if args["peer_info"] != RECEIVER_INFO:
                return False, err("EINVAL", "args.peer_info: not a receiver")
            sid = 3
            sessions[sid] = {"id": sid, "role": "sender", "state": "connected",
                             "polls": 0, "bytes": args["bytes"],
                             "msg_size": args.get("msg_size", 65536)}
            return True, {"id": sid, "info": SENDER_INFO}
        s = sessions.get(args.get("id"))
        if cmd.startswith("selftest_") and s is None:
            return False, err("ENOENT", "args.id: no such selftest")
        if cmd == "selftest_accept":
            if args["peer_info"] != SENDER_INFO:
                return False, err("EINVAL", "args.peer_info: not a sender")
            s["state"] = "connected"
            # what the sender will have sent once done (the test's --bytes/--msg-size)
            s["expect_imm"] = (1 << 20) // 4096
            return True, {}
        if cmd == "selftest_run":
            s["state"] = "running"
            return True, {}
        if cmd == "selftest_status":
            return True, status_of(opts, s)
        if cmd == "selftest_stop":
            del sessions[s["id"]]
            return True, {}
    return True, {}


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        opts, sessions = self.server.opts, self.server.sessions
        for raw in self.rfile:
            with open(opts.socket + ".log", "ab") as log:
                log.write(raw)
            try:
                req = json.loads(raw)
                assert req["v"] == 1 and isinstance(req.get("id", 0), int)
            except (ValueError, KeyError, AssertionError):
                self.reply({"v": 1, "ok": False,
                            "error": err("EINVAL", "bad request")})
                continue
            out = handle(opts, sessions, req["cmd"], req.get("args", {}))
            if out is None:
                continue
            rep = {"v": 1, "id": req.get("id"), "ok": out[0]}
            rep["result" if out[0] else "error"] = out[1]
            self.reply(rep)

    def reply(self, rep):
        self.wfile.write(json.dumps(rep).encode() + b"\n")
        self.wfile.flush()


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def parse(argv):
    p = argparse.ArgumentParser()
    p.add_argument("socket")
    p.add_argument("--verify-errors", type=int, default=0)
    p.add_argument("--run-polls", type=int, default=3)
    p.add_argument("--sender-fail", action="store_true")
    p.add_argument("--hang", action="append", default=[])
    p.add_argument("--fail", action="append", default=[])
    return p.parse_args(argv)


def main():
    specs, cur = [], []
    for a in sys.argv[1:]:
        if a == "--":
            specs.append(cur)
            cur = []
        else:
            cur.append(a)
    specs.append(cur)
    servers = []
    for spec in specs:
        opts = parse(spec)
        tmp = opts.socket + ".tmp"
        if os.path.exists(tmp):
            os.unlink(tmp)
        srv = Server(tmp, Handler)       # binds and listens
        srv.opts, srv.sessions = opts, {}
        os.rename(tmp, opts.socket)
        servers.append(srv)
    for srv in servers[1:]:
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    print("ready", flush=True)
    servers[0].serve_forever()


if __name__ == "__main__":
    sys.exit(main())
