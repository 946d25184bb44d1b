#!/usr/bin/env python3
"""derive.py - make the failing demo runs from the recorded good one.

    derive.py DIR

DIR/good.jsonl is a samples file a real `bash scripts/demo.sh` wrote
(scripts/lib/demo_monitor.py, 15 s, plane 2 blackholed from t=5 to t=10 s,
then `demo_verdict.py perf`). Each other file in DIR is that run with one
thing gone wrong, the way it went wrong on real hosts or could; test_demo_verdict.py
says which verdict each must get. Run again after re-recording good.jsonl.
"""
import copy
import json
import os
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def save(path, recs):
    with open(path, "w") as f:
        for r in recs:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


def fault(recs, action):
    return next(r for r in recs if r["kind"] == "fault" and r["action"] == action)


def samples(recs):
    return [r for r in recs if r["kind"] == "sample"]


def stall(recs):
    """b placed nothing for 300 ms in the middle of the blackhole (three
    windows): later samples lose what those windows had moved."""
    recs = copy.deepcopy(recs)
    s = [x for x in samples(recs) if 7.0 <= x["t"]]
    frozen = s[0]["b_placed"]
    lost = s[3]["b_placed"] - frozen
    for x in s[1:4]:
        x["b_placed"] = frozen
    for x in s[4:]:
        x["b_placed"] -= lost
    return recs


def drop_faults(recs):
    """The monitor never blackholed plane 2 (no fault calls), so its EVs
    never moved either: what the old monitor did when it ran late."""
    out = []
    for r in copy.deepcopy(recs):
        if r["kind"] == "fault":
            continue
        if r["kind"] == "sample":
            for p in r["a_planes"].values():
                n = sum(p["state"].values())
                p["state"] = {k: (n if k == "GOOD" else 0) for k in p["state"]}
                p["pool"]["active"] += p["pool"]["out"]
                p["pool"]["out"] = 0
        out.append(r)
    return out


def short(recs, b_at, r_at):
    """The fault calls at b_at and r_at instead of the plan (t=12.6-12.8 s
    is the run the issue reported)."""
    recs = copy.deepcopy(recs)
    b, r = fault(recs, "blackhole"), fault(recs, "restore")
    b["t_done"] = b_at + (b["t_done"] - b["t_call"])
    b["t_call"] = b_at
    r["t_done"] = r_at + (r["t_done"] - r["t_call"])
    r["t_call"] = r_at
    return recs


def no_after(recs):
    """The run's samples end at the restore: no 'after' phase."""
    r_at = fault(recs, "restore")["t_call"]
    return [copy.deepcopy(r) for r in recs if r["kind"] != "sample" or r["t"] <= r_at]


def evs_stay_good(recs):
    """Plane 2's EVs never left GOOD (as when the blackhole missed the
    plane, or the counts were not read)."""
    recs = copy.deepcopy(recs)
    for x in samples(recs):
        p = x["a_planes"]["plane2"]
        n = sum(p["state"].values())
        p["state"] = {k: (n if k == "GOOD" else 0) for k in p["state"]}
        p["pool"]["active"] += p["pool"]["out"]
        p["pool"]["out"] = 0
    return recs


def evs_not_back(recs):
    """Plane 2's EVs stayed retired after the restore."""
    recs = copy.deepcopy(recs)
    r_done = fault(recs, "restore")["t_done"]
    peak = max((x for x in samples(recs) if x["t"] < r_done),
               key=lambda x: x["a_planes"]["plane2"]["pool"]["out"])
    for x in samples(recs):
        if x["t"] >= r_done:
            x["a_planes"]["plane2"] = copy.deepcopy(peak["a_planes"]["plane2"])
    return recs


def monitor_gap(recs):
    """The monitor was descheduled for a second while blackholed: no
    samples between t=6.0 and t=7.0 s."""
    return [copy.deepcopy(r) for r in recs if r["kind"] != "sample" or not 6.0 < r["t"] < 7.0]


def perf_errors(recs):
    """mrc-perf saw 3 verify errors and 1 completion error and exited 1."""
    recs = copy.deepcopy(recs)
    p = next(r for r in recs if r["kind"] == "perf")
    p["client_exit"] = 1
    p["result"]["verify_errors"] = 3
    p["result"]["cq_errors"] = 1
    p["result"]["exit"] = 1
    return recs


def no_perf(recs):
    """mrc-perf's result was never recorded."""
    return [copy.deepcopy(r) for r in recs if r["kind"] != "perf"]


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    good = load(os.path.join(d, "good.jsonl"))
    for name, recs in (("stall", stall(good)),
                       ("no_blackhole", drop_faults(good)),
                       ("short_blackhole", short(good, 5.0, 6.0)),
                       ("late_short_blackhole", short(good, 12.6, 12.8)),
                       ("no_after_phase", no_after(good)),
                       ("evs_stay_good", evs_stay_good(good)),
                       ("evs_not_back", evs_not_back(good)),
                       ("monitor_gap", monitor_gap(good)),
                       ("perf_errors", perf_errors(good)),
                       ("no_perf", no_perf(good))):
        save(os.path.join(d, name + ".jsonl"), recs)


if __name__ == "__main__":
    main()
