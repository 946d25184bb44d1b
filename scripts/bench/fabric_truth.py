#!/usr/bin/env python3
"""fabric_truth.py - per-path truth for one fabric run: which EVs the fabric
sends over a failed spine (its ECMP hash, from `fabric.sh hash`) against
which EVs mrcd took out of service (fabric_evs.py's record).

  fabric_truth.py --evs EVS.json --hash HASH.txt --spine S2 [--plane 1]
                  [--fail-s T] [--fail-done-s T] [--heal-s T] [--judge-s W]
                  [--losses-to-retire K]
                  [--min-eligible N] [--min-recall R] [--min-precision P]
                  [--out OUT.json]

HASH.txt holds "EV S<k>" lines, the EV as the record has it: on IPv4 its
UDP source port (16-bit EVs, protocol.md D5), on IPv6 32 bits, source port
and flow label (D4); from `fabric.sh seen` (the spine the leaf sent the
EV's packets to, what fabric_clos.sh uses) or `fabric.sh hash` (the
kernel's route lookup: right on IPv4 only). An EV it does not name is counted
in "unhashed" and judged nowhere. Times are seconds on the record's clock: --fail-s when the
failure was ordered, --fail-done-s when it was in place (its rule
installed; default --fail-s), --heal-s when it was healed.

What can be asked of mrcd. On a fabric without trimming an EV is retired
(ASSUMED_BAD) on its second inferred loss among its last 8 sends (D30; an
RTO round retires at once, K = --losses-to-retire, default 2), and a loss
is inferred from differential evidence only (D65): later sends, on other
EVs, acknowledged, or the verdict time after a probe's answer. So an EV
crossing the failed spine can be required to be retired only if

  - it sent at least K data packets into the failure: its tx count grew
    by K or more from the first sample at or after --fail-done-s (a packet
    sent between the order and the rule may have crossed), and
  - those packets went out at least --judge-s (W, default 0.25 s) before
    the end of the record of its QP (its last sample, or --heal-s): the
    time for the verdicts (a few RTTs through full queues, the SKIP of the
    first loss ending, the next send, its verdict) and for a sample to see
    the result. A send in the step's last moments cannot have been judged.

Those are the "eligible" EVs; recall = eligible EVs retired / eligible EVs.
Retirement is seen reliably: a retired EV stays ASSUMED_BAD while the path
is dead (its resurrection probes go unanswered), whereas SKIP (one loss)
lasts a rotation and a sample may miss it.

Precision = of the EVs out of service (ASSUMED_BAD) at the end of the
failure as `mrcctl evs` shows it (each QP's last sample before --heal-s, or
its last sample), retired during it and at least W before that end, the
ones that cross the spine. An EV on a live path that a host pause got
retired (an RTO round after the peer was descheduled through the whole
linear phase, D65) comes back by proof (D64) or probe (D45) within a few
hundred ms: it is counted in "retired_other" and "precision_any" (over
every EV retired during the failure, from --fail-s to --heal-s plus a
sample), not judged; one that stays out is.

Also counted, not judged: EVs crossing it that sent anything into the
failure ("crossing_sent") and of those the ones seen leaving GOOD, and EVs
with one packet into it that were charged a loss or RTO or seen leaving
GOOD ("charged_1", of "eligible_1").

Verdicts (with --min-*): "eligible" >= N, "recall" >= R, "precision" >= P;
a figure that cannot be computed (nothing eligible, nothing retired, no
sample after the failure) fails. Exit 1 when a verdict fails, 2 on bad
input. Prints one summary line and the verdicts; --out writes every
figure, "verdicts" and "per_qp" as JSON.
"""
import argparse
import json
import sys


def value_at(hist, t):
    """the value of a [[t, v], ...] history (changes only) at time t: the
    last change at or before t, 0 before the first"""
    if t is None:
        return 0
    n = 0
    for ts, v in hist:
        if ts > t:
            break
        n = v
    return n


def first_at_or_after(times, t):
    for ts in times:
        if ts >= t:
            return ts
    return None


def last_at_or_before(times, t):
    r = None
    for ts in times:
        if ts > t:
            break
        r = ts
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--evs", required=True)
    ap.add_argument("--hash", required=True)
    ap.add_argument("--spine", required=True)
    ap.add_argument("--plane", type=int, default=1)
    ap.add_argument("--fail-s", type=float, default=None)
    ap.add_argument("--fail-done-s", type=float, default=None)
    ap.add_argument("--heal-s", type=float, default=None)
    ap.add_argument("--judge-s", type=float, default=0.25)
    ap.add_argument("--losses-to-retire", type=int, default=2)
    ap.add_argument("--min-eligible", type=int, default=None)
    ap.add_argument("--min-recall", type=float, default=None)
    ap.add_argument("--min-precision", type=float, default=None)
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.fail_done_s is None:
        a.fail_done_s = a.fail_s
    if a.fail_s is not None and a.fail_done_s < a.fail_s:
        print("fabric_truth.py: --fail-done-s before --fail-s", file=sys.stderr)
        return 2

    spine_of = {}
    try:
        for line in open(a.hash):
            p = line.split()
            if len(p) == 2:
                spine_of[int(p[0])] = p[1]
        d = json.load(open(a.evs))
        qps = d["qps"]
        interval = d["interval_s"]
    except (OSError, ValueError, KeyError) as e:
        print("fabric_truth.py: %s" % e, file=sys.stderr)
        return 2
    keys = ["evs", "unhashed", "crossing", "crossing_sent", "left_crossing_sent", "eligible",
            "retired_eligible", "eligible_1", "charged_1", "retired", "retired_crossing",
            "retired_other", "out_at_end", "out_at_end_crossing", "left_good", "left_good_other",
            "back_good"]
    # each EV's state changes, to replay its state at a time
    changes = {}
    for t, qpn, ev, _, to in d.get("timeline", []):
        changes.setdefault((str(qpn), ev), []).append((t, to))
    tot = dict.fromkeys(keys, 0)
    per_qp = {}
    for qpn, rec in qps.items():
        q = dict.fromkeys(keys, 0)
        times = rec.get("t", [])
        end = rec["last_s"] if a.heal_s is None else min(rec["last_s"], a.heal_s)
        t_a = None if a.fail_s is None else first_at_or_after(times, a.fail_done_s)
        t_c = last_at_or_before(times, end - a.judge_s)
        t_0 = None if a.fail_s is None else last_at_or_before(times, a.fail_s)
        for e in rec["evs"]:
            if e["plane"] != a.plane:
                continue
            q["evs"] += 1
            sp = spine_of.get(e["ev"])
            if sp is None:
                q["unhashed"] += 1
                continue
            crossing = sp == a.spine
            tx = e.get("tx", [])
            # packets sent into the failure: after the rule was in place
            sent = 0 if t_a is None else value_at(tx, end) - value_at(tx, t_a)
            # ... and early enough to have been judged and seen
            judged_n = 0 if t_a is None or t_c is None or t_c <= t_a else value_at(tx, t_c) - value_at(tx, t_a)
            # in the failure window: from fail_s to heal_s (plus a sample)
            inwin = lambda t: t is not None and a.fail_s is not None and t >= a.fail_s and \
                (a.heal_s is None or t <= a.heal_s + interval)
            retired = inwin(e.get("retired_s"))
            t_end = last_at_or_before(times, end)
            st_end = "GOOD"
            for t, to in changes.get((str(qpn), e["ev"]), []):
                if t_end is None or t > t_end:
                    break
                st_end = to
            # ... and retired at least W before that: a verdict that stood
            out_end = retired and st_end == "ASSUMED_BAD" and t_end is not None and \
                e["retired_s"] <= t_end - a.judge_s
            left = inwin(e.get("left_good_s"))
            ch = e.get("charged", [])
            charged = a.fail_s is not None and value_at(ch, end + interval) > value_at(ch, t_0)
            q["crossing"] += crossing
            q["crossing_sent"] += crossing and sent > 0
            q["left_crossing_sent"] += crossing and sent > 0 and left
            elig = crossing and judged_n >= a.losses_to_retire
            q["eligible"] += elig
            q["retired_eligible"] += elig and retired
            e1 = crossing and judged_n >= 1
            q["eligible_1"] += e1
            q["charged_1"] += e1 and (charged or left or retired)
            q["retired"] += retired
            q["retired_crossing"] += retired and crossing
            q["retired_other"] += retired and not crossing
            q["out_at_end"] += out_end
            q["out_at_end_crossing"] += out_end and crossing
            q["left_good"] += left
            q["left_good_other"] += left and not crossing
            if retired and crossing and a.heal_s is not None:
                b = e.get("back_good_s")
                q["back_good"] += b is not None and b >= a.heal_s
        per_qp[qpn] = q
        for k in tot:
            tot[k] += q[k]
    tot["precision"] = tot["out_at_end_crossing"] / tot["out_at_end"] if tot["out_at_end"] else None
    tot["precision_any"] = tot["retired_crossing"] / tot["retired"] if tot["retired"] else None
    tot["recall"] = tot["retired_eligible"] / tot["eligible"] if tot["eligible"] else None
    tot["charged_1_recall"] = tot["charged_1"] / tot["eligible_1"] if tot["eligible_1"] else None
    tot["qps"] = len(per_qp)
    tot["judge_s"] = a.judge_s
    tot["losses_to_retire"] = a.losses_to_retire
    fmt = lambda v: "-" if v is None else "%.3f" % v
    print("EVs on plane %d: %d in %d QPs, %d cross %s; eligible (>= %d packets into the failure, "
          "%.2f s before the record's end) %d, retired %d (recall %s); out of service at the end %d: "
          "%d crossing (precision %s); retired at any time %d: %d crossing, %d not (%s); "
          "with >= 1 packet into it %d, charged or seen leaving GOOD %d; sent into it "
          "at all %d, seen leaving GOOD %d%s"
          % (a.plane, tot["evs"], tot["qps"], tot["crossing"], a.spine, a.losses_to_retire, a.judge_s,
             tot["eligible"], tot["retired_eligible"], fmt(tot["recall"]),
             tot["out_at_end"], tot["out_at_end_crossing"], fmt(tot["precision"]),
             tot["retired"], tot["retired_crossing"], tot["retired_other"], fmt(tot["precision_any"]),
             tot["eligible_1"], tot["charged_1"], tot["crossing_sent"], tot["left_crossing_sent"],
             "; back GOOD after heal %d of %d" % (tot["back_good"], tot["retired_crossing"])
             if a.heal_s is not None else ""))
    verdicts = {}
    reasons = []
    if a.min_eligible is not None:
        verdicts["eligible"] = tot["eligible"] >= a.min_eligible
        if not verdicts["eligible"]:
            reasons.append("%d eligible EVs, fewer than %d: the failure came too late in the step, "
                           "or the record has no samples after it" % (tot["eligible"], a.min_eligible))
    if a.min_recall is not None:
        verdicts["recall"] = tot["recall"] is not None and tot["recall"] >= a.min_recall
        if not verdicts["recall"]:
            reasons.append("recall %s below %.2f" % (fmt(tot["recall"]), a.min_recall))
    if a.min_precision is not None:
        verdicts["precision"] = tot["precision"] is not None and tot["precision"] >= a.min_precision
        if not verdicts["precision"]:
            reasons.append("precision %s below %.2f%s" % (fmt(tot["precision"]), a.min_precision,
                                                          " (nothing out of service)" if not tot["out_at_end"] else ""))
    tot["verdicts"] = verdicts
    tot["per_qp"] = per_qp
    if verdicts:
        print("verdict: " + ("ok" if not reasons else "FAIL: " + "; ".join(reasons)))
    if a.out:
        json.dump(tot, open(a.out, "w"))
    return 1 if reasons else 0


if __name__ == "__main__":
    sys.exit(main())
