#!/usr/bin/env python3
"""demo_monitor.py - watch the demo's transfer and inject its failure.

    demo_monitor.py DIR DURATION SAMPLES

DIR holds the two daemons' control sockets (a.sock: the sender, b.sock: the
receiver). The monitor connects to both, answers its first requests, and
then creates DIR/monitor.ready: the demo starts mrc-perf only then (a
Python started beside the transfer took seconds of its CPU on a loaded
2-CPU host) and writes the client's PID to DIR/client.pid. The transfer's own clock starts at the first sample in which b
has placed a byte (t = 0); from then on, every CADENCE (100 ms) on a fixed
schedule, the monitor sends ONE `counters` request to each daemon (summed
over workers and QPs by the daemon: docs/control.md) and appends one JSON
line to SAMPLES, flushed at once (the file is never rewritten). At
DURATION/3 it blackholes plane 2 on a (both directions, silently: the link
stays up), at 2*DURATION/3 it restores it, and records each call's start
and end (`kind: fault`). It ends when the client process has gone (or
DURATION + 120 s after it started), and restores plane 2 on the way out if the restore has
not happened yet. scripts/lib/demo_verdict.py reads SAMPLES.

Records, one JSON object a line:
  {"kind": "start", "dur": D, "cadence_s": 0.1, "plan": {"blackhole": D/3, "restore": 2*D/3}}
  {"kind": "sample", "t": s, "rtt_ms": ms, "b_placed": bytes,
   "a_rtx": {"fast", "nack", "rto", "port_down"}, "a_ev_transitions": n,
   "a_wc_err": n, "b_wc_err": n,
   "a_planes": {"plane1": {"state": {...}, "pool": {...}}, ...}}
  {"kind": "fault", "action": "blackhole" | "restore", "t_call": s, "t_done": s,
   "ok": bool, "reason": str}
  {"kind": "end", "t": s, "why": str}
"""
import json
import os
import socket
import sys
import time

CADENCE = 0.1
PLANE = "plane2"


class Ctl:
    """One persistent control connection (docs/control.md: JSON lines)."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.f = self.s.makefile("rwb")
        self.id = 0

    def __call__(self, cmd, **args):
        self.id += 1
        self.f.write(json.dumps({"v": 1, "cmd": cmd, "id": self.id, "args": args}).encode() + b"\n")
        self.f.flush()
        line = self.f.readline()
        if not line:
            raise OSError("control connection closed")
        r = json.loads(line)
        if not r.get("ok"):
            raise OSError(r.get("error", {}).get("reason", "request failed") if isinstance(r.get("error"), dict)
                          else str(r.get("error", "request failed")))
        return r.get("result")


def total(c, key):
    """A QP counter over the daemon's life: the live QPs' plus the closed ones'."""
    return c["live_qps"][key] + c["closed_qps"][key]


def alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    # a zombie (exited, not yet reaped by the shell) has gone too
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: demo_monitor.py DIR DURATION SAMPLES")
    d, dur, path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    cl_pid = None
    a, b = Ctl(os.path.join(d, "a.sock")), Ctl(os.path.join(d, "b.sock"))
    out = open(path, "a")

    def put(rec):
        out.write(json.dumps(rec, separators=(",", ":")) + "\n")
        out.flush()

    def say(msg):
        print(msg, flush=True)

    plan = {"blackhole": dur / 3, "restore": 2 * dur / 3}
    put({"kind": "start", "dur": dur, "cadence_s": CADENCE, "plane": PLANE, "plan": plan})
    t0 = None
    done = {}        # action -> the fault record written

    def fault(action, now):
        rec = {"kind": "fault", "action": action, "t_call": now - t0}
        try:
            if action == "blackhole":
                a("fault_set", port=PLANE, blackhole=True, direction="both")
            else:
                a("fault_clear", port=PLANE)
            rec["ok"], rec["reason"] = True, ""
        except (OSError, ValueError) as e:
            rec["ok"], rec["reason"] = False, str(e)
        rec["t_done"] = time.monotonic() - t0
        put(rec)
        done[action] = rec
        say("   t=%.2f s: %s%s" % (rec["t_call"], {"blackhole": "plane 2 blackholed (silently: its link stays up)",
                                                  "restore": "plane 2 restored"}[action],
                                  "" if rec["ok"] else " FAILED: " + rec["reason"]))

    def due_fault():
        """The next fault not yet done and its time on the monotonic clock."""
        for action in ("blackhole", "restore"):
            if action not in done:
                return action, t0 + plan[action]
        return None, None

    start = time.monotonic()
    nxt = start
    why = "client exited"
    ready = False
    while True:
        if cl_pid is None:
            try:
                with open(os.path.join(d, "client.pid")) as f:
                    cl_pid = int(f.read())
            except (OSError, ValueError):
                pass
        if cl_pid is not None and not alive(cl_pid):
            break
        if time.monotonic() - start > dur + 120:
            why = "deadline"
            break
        # the failure, on the transfer's clock, as soon as it is due
        if t0 is not None:
            action, at = due_fault()
            while action is not None and time.monotonic() >= at:
                fault(action, time.monotonic())
                action, at = due_fault()
        if time.monotonic() >= nxt:
            t_req = time.monotonic()
            try:
                cb = b("counters")
                ca = a("counters")
            except (OSError, ValueError) as e:
                why = "control request failed: %s" % e
                break
            t_resp = time.monotonic()
            placed = total(cb, "rx_data_bytes")
            if not ready:
                open(os.path.join(d, "monitor.ready"), "w").close()
                ready = True
            if t0 is None and placed > 0:
                t0 = t_req
                say("   t=0: the first bytes placed at b (the transfer's clock starts)")
            if t0 is not None:
                put({"kind": "sample", "t": round(t_req - t0, 4), "rtt_ms": round((t_resp - t_req) * 1e3, 2),
                     "b_placed": placed,
                     "a_rtx": {k: total(ca, "rtx_" + k) for k in ("fast", "nack", "rto", "port_down")},
                     "a_ev_transitions": ca["live_qps"]["ev"]["transitions"] + ca["closed_qps"]["ev"]["transitions"],
                     "a_wc_err": total(ca, "wc_err"), "b_wc_err": total(cb, "wc_err"),
                     "a_planes": {n: p["evs"] for n, p in ca["ports"].items()}})
            # the next slot on the fixed schedule; slots missed while the
            # monitor was descheduled are skipped, not made up (the gap
            # shows in the samples)
            nxt += CADENCE
            now = time.monotonic()
            if nxt <= now:
                nxt += CADENCE * (int((now - nxt) / CADENCE) + 1)
        wake = nxt
        if t0 is not None:
            action, at = due_fault()
            if action is not None:
                wake = min(wake, at)
        time.sleep(max(0.0, wake - time.monotonic()))
    if "blackhole" in done and "restore" not in done:
        try:
            a("fault_clear", port=PLANE)
            say("   plane 2 restored on the way out (the transfer ended first)")
        except (OSError, ValueError):
            pass
    put({"kind": "end", "t": None if t0 is None else round(time.monotonic() - t0, 4), "why": why})
    out.close()


if __name__ == "__main__":
    main()
