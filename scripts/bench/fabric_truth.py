#!/usr/bin/env python3
"""fabric_truth.py - per-path truth for one fabric run: which EVs the fabric
sends over a failed spine (its ECMP hash, from `fabric.sh hash`) against
which EVs mrcd took out of service (fabric_evs.py's record).

  fabric_truth.py --evs EVS.json --hash HASH.txt --spine S2 [--plane 1]
                  [--fail-s T] [--heal-s T] [--out OUT.json]

HASH.txt holds "SPORT S<k>" lines (fabric.sh hash). On IPv4 an EV is its
UDP source port (protocol.md D5). Prints one summary line and, with --out,
writes {"crossing", "crossing_used", "left_crossing_used" (of those, left
GOOD: recall = left_crossing_used / crossing_used), "retired", "retired_crossing",
"retired_other", "left_good", "left_good_other", "precision", "recall",
"back_good" (crossing EVs retired that were GOOD again after --heal-s),
"per_qp": ...}. "used" = the EV sent data after --fail-s (and before
--heal-s); retired and left GOOD count only in that window.
"""
import argparse
import json
import sys


def tx_at(e, t):
    """the EV's data packets sent by time t (its samples; 0 before the first)"""
    if t is None:
        return 0
    n = 0
    for ts, tx in e.get("tx", []):
        if ts > t:
            break
        n = tx
    return n


def first_sample_after(times, t):
    """the first of the QP's sample times at or after t, or None"""
    for ts in times:
        if ts >= t:
            return ts
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--evs", required=True)
    ap.add_argument("--hash", required=True)
    ap.add_argument("--spine", required=True)
    ap.add_argument("--plane", type=int, default=1)
    ap.add_argument("--fail-s", type=float, default=None)
    ap.add_argument("--heal-s", type=float, default=None)
    ap.add_argument("--out")
    a = ap.parse_args()

    spine_of = {}
    for line in open(a.hash):
        p = line.split()
        if len(p) == 2:
            spine_of[int(p[0])] = p[1]
    d = json.load(open(a.evs))
    tot = dict.fromkeys(["crossing", "crossing_used", "left_crossing_used", "retired", "retired_crossing",
                         "retired_other", "left_good", "left_good_other", "back_good",
                         "evs", "unhashed"], 0)
    per_qp = {}
    for qpn, rec in d["qps"].items():
        q = dict.fromkeys(tot, 0)
        for e in rec["evs"]:
            if e["plane"] != a.plane:
                continue
            q["evs"] += 1
            sp = spine_of.get(e["ev"] & 0xFFFF)
            if sp is None:
                q["unhashed"] += 1
                continue
            crossing = sp == a.spine
            # sent data while the spine was down: more packets at heal_s (or
            # the end) than at the first sample taken after fail_s
            t_a = None if a.fail_s is None else first_sample_after(rec.get("t", []), a.fail_s)
            t_b = None if a.heal_s is None else a.heal_s
            used = t_a is not None and \
                (tx_at(e, t_b) if t_b is not None else e["counters"].get("tx_pkts", 0)) > tx_at(e, t_a)
            # in the failure window: from fail_s to heal_s (plus a sample)
            after = lambda t: t is not None and (a.fail_s is None or t >= a.fail_s) and \
                (a.heal_s is None or t <= a.heal_s + d["interval_s"])
            retired = after(e.get("retired_s"))
            left = after(e.get("left_good_s"))
            q["crossing"] += crossing
            q["crossing_used"] += crossing and used
            q["retired"] += retired
            q["retired_crossing"] += retired and crossing
            q["left_crossing_used"] += left and crossing and used
            q["retired_other"] += retired and not crossing
            q["left_good"] += left
            q["left_good_other"] += left and not crossing
            if retired and crossing and a.heal_s is not None:
                b = e.get("back_good_s")
                q["back_good"] += b is not None and b >= a.heal_s
        per_qp[qpn] = q
        for k in tot:
            tot[k] += q[k]
    tot["precision"] = tot["retired_crossing"] / tot["retired"] if tot["retired"] else None
    tot["recall"] = tot["left_crossing_used"] / tot["crossing_used"] if tot["crossing_used"] else None
    tot["qps"] = len(per_qp)
    tot["per_qp"] = per_qp
    fmt = lambda v: "-" if v is None else "%.3f" % v
    print("EVs on plane %d: %d in %d QPs, %d cross %s, %d of them sent data during the failure and %d of "
          "those left GOOD (recall %s); retired %d: %d crossing, %d not (precision %s); left GOOD "
          "but not crossing %d%s"
          % (a.plane, tot["evs"], tot["qps"], tot["crossing"], a.spine, tot["crossing_used"],
             tot["left_crossing_used"], fmt(tot["recall"]),
             tot["retired"], tot["retired_crossing"], tot["retired_other"], fmt(tot["precision"]),
             tot["left_good_other"],
             "; back GOOD after heal %d of %d" % (tot["back_good"], tot["retired_crossing"])
             if a.heal_s is not None else ""))
    if a.out:
        json.dump(tot, open(a.out, "w"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
