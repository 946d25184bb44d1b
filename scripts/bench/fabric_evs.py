#!/usr/bin/env python3
"""fabric_evs.py - follow every EV of every QP of one mrcd, over its control
socket (docs/control.md: qps, evs), until SIGTERM/SIGINT or --seconds; then
write one JSON document:

  {"t0": epoch seconds the sampling started, "samples": n, "interval_s": s,
   "qps": {"<qpn>": {"first_s", "last_s", "t" (its sample times), "evs": [{"index", "ev", "plane",
        "state" (last seen), "counters" (last seen), "left_good_s" (first
        time seen not GOOD, or null), "retired_s" (first time seen
        ASSUMED_BAD, or null), "back_good_s" (first time GOOD again after
        leaving it, or null), "tx" ([[t_s, tx_pkts]] at each sample where
        its data packets sent had changed), "charged" ([[t_s, losses +
        rtos]] likewise: the losses and RTOs charged to it)}]}},
   "timeline": [[t_s, qpn, ev, from_state, to_state], ...]}

A QP's counters are its last sample's (a QP is gone once its client
destroyed it; the daemon's counters.closed_qps holds the exact totals).
Used by test/integration/fabric_clos.sh and scripts/bench/fabric_steps.sh.
"""
import argparse
import json
import signal
import socket
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--socket", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--interval", type=float, default=0.02)
    ap.add_argument("--seconds", type=float, default=3600)
    ap.add_argument("--t0", type=float, default=None, help="epoch seconds times are relative to")
    a = ap.parse_args()

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    s = socket.socket(socket.AF_UNIX)
    s.connect(a.socket)
    f = s.makefile("rw")
    rid = [0]

    def req(cmd, **args):
        rid[0] += 1
        f.write(json.dumps({"v": 1, "cmd": cmd, "id": rid[0], "args": args}) + "\n")
        f.flush()
        r = json.loads(f.readline())
        return r.get("result") if r.get("ok") else None

    t0 = a.t0 if a.t0 is not None else time.time()
    qps, timeline, n = {}, [], 0
    end = time.time() + a.seconds
    while not stop and time.time() < end:
        now = time.time() - t0
        for q in req("qps") or []:
            qpn = q["qpn"]
            evs = req("evs", qpn=qpn)
            if evs is None:
                continue
            rec = qps.setdefault(str(qpn), {"first_s": now, "last_s": now, "t": [], "evs": {}})
            rec["last_s"] = now
            rec["t"].append(round(now, 4))
            for e in evs:
                k = e["index"]
                old = rec["evs"].get(k)
                st = e["state"]
                cur = {"index": k, "ev": e["ev"], "plane": e["plane"], "state": st,
                       "counters": {c: e[c] for c in e if c not in ("index", "ev", "plane", "state", "pool")},
                       "pool": e.get("pool"),
                       "left_good_s": old["left_good_s"] if old else None,
                       "retired_s": old["retired_s"] if old else None,
                       "back_good_s": old["back_good_s"] if old else None,
                       "tx": old["tx"] if old else [],
                       "charged": old["charged"] if old else []}
                tx = e.get("tx_pkts", 0)
                if not cur["tx"] or cur["tx"][-1][1] != tx:
                    cur["tx"].append([round(now, 4), tx])
                ch = e.get("losses", 0) + e.get("rtos", 0)
                if not cur["charged"] or cur["charged"][-1][1] != ch:
                    cur["charged"].append([round(now, 4), ch])
                prev = old["state"] if old else "GOOD"
                if st != prev:
                    timeline.append([round(now, 4), qpn, e["ev"], prev, st])
                if st != "GOOD" and cur["left_good_s"] is None:
                    cur["left_good_s"] = round(now, 4)
                if st == "ASSUMED_BAD" and cur["retired_s"] is None:
                    cur["retired_s"] = round(now, 4)
                if st == "GOOD" and cur["left_good_s"] is not None and cur["back_good_s"] is None:
                    cur["back_good_s"] = round(now, 4)
                rec["evs"][k] = cur
        n += 1
        time.sleep(a.interval)
    for rec in qps.values():
        rec["evs"] = [rec["evs"][k] for k in sorted(rec["evs"])]
    with open(a.out, "w") as o:
        json.dump({"t0": t0, "samples": n, "interval_s": a.interval, "qps": qps,
                   "timeline": timeline}, o)
    return 0


if __name__ == "__main__":
    sys.exit(main())
