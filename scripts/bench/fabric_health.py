#!/usr/bin/env python3
"""fabric_health.py - per-path truth on a healthy fabric, from a daemon's
counters (`mrcctl --json counters`, docs/control.md): what the QPs closed
between two snapshots did. On a healthy fabric no EV is taken out of
service, no RTO round fires and nothing is retransmitted that had arrived.

  fabric_health.py BEFORE.json AFTER.json [--name A] [--min-qps N] [--exact]
                   [--out OUT.json]

Figures (AFTER - BEFORE of counters.closed_qps, summed over the workers):
  qps                 QPs closed in between (the run's QPs: --min-qps, default 1)
  ev_state_changes    ev.transitions: state changes of their EVs
  evs_moved           their EVs that ever changed state
  rto_rounds          RTO rounds
  rtx_spurious        fast retransmissions found unneeded (the sender's view)
  rx_dup              duplicate data packets received (the receiver's view:
                      a retransmission of a packet that had arrived)
  losses, losses_undone
                      losses inferred, and charges disproved (D64: the
                      packet had arrived after all)
and, reported only: rtx_fast, rtx_rto, silent_rounds, suspects,
suspects_cleared, and the engine's local stalls (engine.stalls, D65: the
worker called a timer's worth late).

Verdicts. Always: qps >= --min-qps and no RTO round (rto_rounds 0: on a
healthy fabric nothing goes unanswered for a whole timeout round). Then
one of three levels:

  bounded (the default; what fabric_clos.sh asserts on a loaded 2-CPU
  host): every EV state change explained by an inferred loss
  (ev_state_changes <= 2 x losses: out of GOOD and back, or a second loss
  retiring it and a probe bringing it back), EVs moved <= --max-moved
  (default 0.10) of the active EVs the QPs had (qps x --ev-active, 128,
  configuration.md), losses inferred <= --max-loss (default 0.02) of the
  data packets sent (tx_data_pkts). On the fabric of fabric.sh (8 QPs of
  48 KiB windows into 64 KiB spine queues) packets on a spine whose queue
  is deeper can come back after their suspect verdict (D65, D74) and are
  inferred lost, then proved delivered (D64): docs/benchmarks.md "A routed
  fabric" has the figures.
  --lossless: every inferred loss disproved (losses == losses_undone: none
  stood), rtx_spurious and rx_dup 0, ev_state_changes <= 2 x losses_undone.
  --exact: --lossless and ev_state_changes 0 (the issue's target).

A key missing from either snapshot fails (a renamed counter must not pass
as 0). Exit 0 ok, 1 a verdict failed, 2 bad input. Prints one line; --out
writes the figures, the bounds and the verdict as JSON. Used by
test/integration/fabric_clos.sh and scripts/bench/fabric_report.py.
"""
import argparse
import json
import sys

FIGURES = [("ev_state_changes", ("ev", "transitions")), ("evs_moved", ("evs_moved",)),
           ("tx_data_pkts", ("tx_data_pkts",)),
           ("rto_rounds", ("rto_rounds",)), ("rtx_spurious", ("rtx_spurious",)), ("rx_dup", ("rx_dup",)),
           ("losses", ("losses",)), ("losses_undone", ("losses_undone",)),
           ("rtx_fast", ("rtx_fast",)), ("rtx_rto", ("rtx_rto",)),
           ("silent_rounds", ("silent_rounds",)), ("suspects", ("suspects",)),
           ("suspects_cleared", ("suspects_cleared",))]


class Missing(Exception):
    pass


def get(d, path):
    for k in path:
        if not isinstance(d, dict) or k not in d:
            raise Missing("/".join(path))
        d = d[k]
    if not isinstance(d, int):
        raise Missing("/".join(path) + " (not a count)")
    return d


def health(before, after):
    """the figures of the closed_qps deltas (and engine.stalls); raises
    Missing when a counter is absent from either snapshot"""
    b, a = before.get("closed_qps"), after.get("closed_qps")
    if b is None or a is None:
        raise Missing("closed_qps")
    out = {"qps": get(a, ("qps",)) - get(b, ("qps",))}
    for name, path in FIGURES:
        out[name] = get(a, path) - get(b, path)
    out["engine_stalls"] = get(after, ("engine", "stalls")) - get(before, ("engine", "stalls"))
    return out


def verdict(h, min_qps=1, exact=False, lossless=False, max_moved=0.10, max_loss=0.02, ev_active=128):
    """the reasons a healthy run fails ([] = ok)"""
    r = []
    if h["qps"] < min_qps:
        r.append("%d QPs closed, fewer than %d: the run's QPs are not in the counters" % (h["qps"], min_qps))
    if h["rto_rounds"] != 0:
        r.append("rto_rounds %d" % h["rto_rounds"])
    if lossless or exact:
        for name in ("rtx_spurious", "rx_dup"):
            if h[name] != 0:
                r.append("%s %d" % (name, h[name]))
        if h["losses"] != h["losses_undone"]:
            r.append("%d losses inferred, %d of them disproved" % (h["losses"], h["losses_undone"]))
        if h["ev_state_changes"] > 2 * h["losses_undone"]:
            r.append("%d EV state changes, more than the %d undone charges explain"
                     % (h["ev_state_changes"], h["losses_undone"]))
        if exact and h["ev_state_changes"] != 0:
            r.append("ev_state_changes %d (--exact)" % h["ev_state_changes"])
        return r
    if h["ev_state_changes"] > 2 * h["losses"]:
        r.append("%d EV state changes, more than the %d inferred losses explain (2 each)"
                 % (h["ev_state_changes"], h["losses"]))
    evs = h["qps"] * ev_active
    if h["evs_moved"] > max_moved * evs:
        r.append("%d EVs moved, more than %.0f%% of the %d active EVs" % (h["evs_moved"], 100 * max_moved, evs))
    if h["losses"] > max_loss * h["tx_data_pkts"]:
        r.append("%d losses inferred, more than %.1f%% of the %d data packets"
                 % (h["losses"], 100 * max_loss, h["tx_data_pkts"]))
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--name", default="mrcd")
    ap.add_argument("--min-qps", type=int, default=1)
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--lossless", action="store_true")
    ap.add_argument("--max-moved", type=float, default=0.10)
    ap.add_argument("--max-loss", type=float, default=0.02)
    ap.add_argument("--ev-active", type=int, default=128)
    ap.add_argument("--out")
    a = ap.parse_args()
    try:
        h = health(json.load(open(a.before)), json.load(open(a.after)))
    except (OSError, ValueError) as e:
        print("fabric_health.py: %s" % e, file=sys.stderr)
        return 2
    except Missing as e:
        print("fabric_health.py: %s: no counter %s" % (a.name, e), file=sys.stderr)
        return 1
    reasons = verdict(h, a.min_qps, a.exact, a.lossless, a.max_moved, a.max_loss, a.ev_active)
    level = "exact" if a.exact else "lossless" if a.lossless else \
        "bounded: moved <= %.0f%% of %d x %d EVs, losses <= %.1f%% of packets, changes <= 2 x losses" \
        % (100 * a.max_moved, h["qps"], a.ev_active, 100 * a.max_loss)
    print("%s: %d QPs closed; EV state changes %d (EVs moved %d), RTO rounds %d, spurious "
          "retransmissions %d (duplicates received %d); losses inferred %d, disproved %d; "
          "retransmissions fast %d, RTO %d; silent rounds %d, suspects %d (cleared %d), engine stalls %d; "
          "data packets %d; [%s] %s"
          % (a.name, h["qps"], h["ev_state_changes"], h["evs_moved"], h["rto_rounds"], h["rtx_spurious"],
             h["rx_dup"], h["losses"], h["losses_undone"], h["rtx_fast"], h["rtx_rto"], h["silent_rounds"],
             h["suspects"], h["suspects_cleared"], h["engine_stalls"], h["tx_data_pkts"], level,
             "ok" if not reasons else "FAIL: " + ", ".join(reasons)))
    if a.out:
        json.dump(dict(h, verdict=reasons, level=level), open(a.out, "w"))
    return 1 if reasons else 0


if __name__ == "__main__":
    sys.exit(main())
