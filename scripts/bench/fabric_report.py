#!/usr/bin/env python3
"""fabric_report.py - the tables and plots of scripts/bench/fabric_steps.sh
from its steps.jsonl (one JSON object per step), into the same folder:

  results.json   {"<variant>/<scenario>": {"<transport>": {"steps", "stalled",
                  "p50_s", "p99_s", "max_s", "mean_s", "x_healthy_p50"}}}
  table.markdown       the same as a Markdown table
  cdf-<variant>-<scenario>.png     step-time CDF, one line per transport
  goodput-<variant>-<scenario>.png goodput over time of step 1, one line per
                 transport (100 ms bins of the transports' own delivery
                 counts: mrc-perf's completed messages, the TCP/MPTCP
                 client's acknowledged bytes)
  truth.png      (if truth-timeline.dat exists) EVs not GOOD over time,
                 crossing S2 and not
  health.json, and a second table in table.markdown: per scenario, what
                 mrcd's QPs did (fabric_health.py over counters/: EV state
                 changes, RTO rounds, spurious retransmissions, losses
                 inferred and disproved, on either daemon) and the routers'
                 qdisc drops (drops.json, all transports': reported, not
                 judged); healthy scenarios get a verdict

With --expect-steps N the report is also a verdict (exit 1, every reason
printed): each transport has N steps in each scenario of steps.jsonl (and
every scenario of --expect-scenarios), each healthy scenario has its
counters and its health verdict is ok, and with --expect-truth the truth
run's figures exist and fabric_truth.py's verdict in truth.txt is ok.

Plots are drawn with gnuplot; without it the tables are still written.
A percentile is over the steps that finished; a stalled step has no time
and is counted in "stalled" (and makes max "stalled").
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fabric_health  # noqa: E402

TRANSPORTS = ["mrcd", "tcp", "mptcp"]
HEALTHY = {"one": "healthy", "two": "healthy2"}


def pct(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    k = (len(xs) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def load(out):
    rows = [json.loads(l) for l in open(os.path.join(out, "steps.jsonl")) if l.strip()]
    order = []
    for r in rows:
        key = r["variant"] + "/" + r["scenario"]
        if key not in order:
            order.append(key)
    return rows, order


def summarise(rows, order):
    res = {}
    for key in order:
        var, sc = key.split("/")
        res[key] = {}
        for tr in TRANSPORTS:
            rs = [r for r in rows if r["variant"] == var and r["scenario"] == sc and r["transport"] == tr]
            if not rs:
                continue
            t = [r["seconds"] for r in rs if not r["stalled"] and r["seconds"] is not None]
            stalled = sum(1 for r in rs if r["stalled"])
            res[key][tr] = {"steps": len(rs), "stalled": stalled, "p50_s": pct(t, 50),
                            "p99_s": pct(t, 99), "max_s": max(t) if t and not stalled else None,
                            "mean_s": sum(t) / len(t) if t else None}
    for key in order:
        var = key.split("/")[0]
        hk = var + "/" + HEALTHY.get(var, "healthy")
        for tr, v in res[key].items():
            h = res.get(hk, {}).get(tr, {}).get("p50_s")
            v["x_healthy_p50"] = v["p50_s"] / h if h and v["p50_s"] else None
    return res


def table(res, order, out):
    f = lambda v: "-" if v is None else "%.2f" % v
    lines = ["| fabric / scenario | transport | steps | stalled | p50 s | p99 s | max s | p50 / healthy p50 |",
             "|---|---|---|---|---|---|---|---|"]
    for key in order:
        for tr in TRANSPORTS:
            v = res[key].get(tr)
            if v is None:
                continue
            mx = "stalled" if v["stalled"] else f(v["max_s"])
            lines.append("| %s | %s | %d | %d | %s | %s | %s | %s |" % (
                key, tr, v["steps"], v["stalled"], f(v["p50_s"]), f(v["p99_s"]), mx,
                f(v["x_healthy_p50"])))
    return "\n".join(lines) + "\n"


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script.encode(), check=True)


def rate_bins(path, bin_s=0.1):
    pts = []
    for l in open(path):
        p = l.split()
        if len(p) == 2:
            pts.append((float(p[0]), float(p[1])))
    if not pts:
        return []
    out, t, k, prev = [], bin_s, 0, 0.0
    t_end = pts[-1][0]
    while t <= t_end + bin_s:
        while k + 1 < len(pts) and pts[k + 1][0] <= t:
            k += 1
        cur = pts[k][1] if pts[k][0] <= t else 0.0
        out.append((t - bin_s / 2, (cur - prev) * 8 / bin_s / 1e6))
        prev = cur
        t += bin_s
    return out


def plots(rows, res, order, out):
    if shutil.which("gnuplot") is None:
        print("fabric_report.py: no gnuplot: tables only", file=sys.stderr)
        return
    colours = {"mrcd": "#1b9e77", "tcp": "#d95f02", "mptcp": "#7570b3"}
    for key in order:
        var, sc = key.split("/")
        # CDF
        dat = []
        for tr in TRANSPORTS:
            t = sorted(r["seconds"] for r in rows if r["variant"] == var and r["scenario"] == sc
                       and r["transport"] == tr and not r["stalled"] and r["seconds"] is not None)
            if not t:
                continue
            p = os.path.join(out, "series", "cdf-%s-%s-%s.dat" % (var, sc, tr))
            with open(p, "w") as f:
                for i, x in enumerate(t):
                    f.write("%.4f %.4f\n" % (x, (i + 1) / len(t)))
            st = res[key][tr]["stalled"]
            dat.append("'%s' using 1:2 with steps lw 2 lc rgb '%s' title '%s%s'" % (
                p, colours[tr], tr, " (%d stalled)" % st if st else ""))
        if dat:
            gnuplot("set terminal pngcairo size 800,500 noenhanced\nset output '%s'\n"
                    "set title 'step time CDF: %s'\nset xlabel 'step time (s)'\nset ylabel 'fraction of steps'\n"
                    "set key bottom right\nset grid\nset yrange [0:1.02]\nplot %s\n"
                    % (os.path.join(out, "cdf-%s-%s.png" % (var, sc)), key, ", ".join(dat)))
        # goodput over time, step 1
        dat, t_max, stalled = [], 0.0, []
        for tr in TRANSPORTS:
            s = os.path.join(out, "series", "%s-%s-%s-1.dat" % (var, sc, tr))
            if not os.path.exists(s):
                continue
            b = rate_bins(s)
            if not b:
                continue
            p = s[:-4] + ".rate"
            with open(p, "w") as f:
                for t, r in b:
                    f.write("%.3f %.1f\n" % (t, r))
            st1 = [r for r in rows if r["variant"] == var and r["scenario"] == sc
                   and r["transport"] == tr and r["step"] == 1]
            if st1 and st1[0]["stalled"]:
                stalled.append(tr)
            else:
                t_max = max(t_max, b[-1][0])
            dat.append("'%s' using 1:2 with lines lw 2 lc rgb '%s' title '%s%s'" % (
                p, colours[tr], tr, " (stalled)" if tr in stalled else ""))
        if dat:
            # the finished steps set the time axis; a stalled one runs off it
            xr = "set xrange [0:%.2f]\n" % (t_max * 1.3) if t_max > 0 and stalled else ""
            gnuplot("set terminal pngcairo size 800,500 noenhanced\nset output '%s'\n"
                    "set title 'goodput, step 1: %s%s'\nset xlabel 'time from the step start (s)'\n"
                    "set ylabel 'Mbit/s (100 ms bins)'\nset grid\nset yrange [0:*]\n%splot %s\n"
                    % (os.path.join(out, "goodput-%s-%s.png" % (var, sc)), key,
                       " (stalled: %s, given up at 30 s)" % ", ".join(stalled) if stalled else "",
                       xr, ", ".join(dat)))
    tl = os.path.join(out, "truth-timeline.dat")
    if os.path.exists(tl):
        head = open(tl).readline()
        when = head[head.find("(") + 1:head.rfind(")")] if "(" in head else ""
        gnuplot("set terminal pngcairo size 800,500 noenhanced\nset output '%s'\n"
                "set title 'per-path truth: EVs not GOOD (%s)'\n"
                "set xlabel 'time (s)'\nset ylabel 'EVs'\nset grid\nset yrange [0:*]\n"
                "plot '%s' using 1:3 with lines lw 2 title 'not GOOD, cross S2', "
                "'%s' using 1:5 with lines lw 2 title 'not GOOD, other spines'\n"
                % (os.path.join(out, "truth.png"), when.replace("'", ""), tl, tl))


def health_rows(out, order):
    """{key: {"a": figures or None, "b": ..., "drops": n or None, "verdict": [...] or None}}"""
    drops = {}
    try:
        drops = json.load(open(os.path.join(out, "drops.json")))
    except (OSError, ValueError):
        pass
    res = {}
    for key in order:
        var, sc = key.split("/")
        r = {"drops": drops.get(key)}
        reasons = []
        for h in "ab":
            try:
                b = json.load(open(os.path.join(out, "counters", "%s-%s-0-%s.json" % (var, sc, h))))
                a = json.load(open(os.path.join(out, "counters", "%s-%s-1-%s.json" % (var, sc, h))))
                r[h] = fabric_health.health(b, a)
                reasons += ["mrcd %s: %s" % (h, x) for x in fabric_health.verdict(r[h])]
            except (OSError, ValueError, fabric_health.Missing) as e:
                r[h] = None
                reasons.append("mrcd %s: no counters (%s)" % (h, e))
        # the routers' drops are reported, not judged: TCP and MPTCP steps
        # run on the same fabric and fill its queues (loss-based congestion
        # control); mrcd's own verdict is its counters'
        r["healthy"] = sc == HEALTHY.get(var, "healthy")
        r["verdict"] = reasons if r["healthy"] else None
        res[key] = r
    return res


def health_table(hr, order):
    f = lambda r, h, k: "-" if r.get(h) is None else str(r[h][k])
    lines = ["", "mrcd's QPs per scenario (closed-QP counters; a = sender A, b = receiver B), "
             "routers' qdisc drops; healthy scenarios judged by fabric_health.py:", "",
             "| fabric / scenario | QPs | EV state changes a / b | RTO rounds a / b | spurious rtx a | "
             "dup rx b | losses inferred / disproved a | silent rounds a | router drops | verdict |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for key in order:
        r = hr[key]
        v = "-" if r["verdict"] is None else ("ok" if not r["verdict"] else "FAIL: " + "; ".join(r["verdict"]))
        lines.append("| %s | %s | %s / %s | %s / %s | %s | %s | %s / %s | %s | %s | %s |" % (
            key, f(r, "a", "qps"), f(r, "a", "ev_state_changes"), f(r, "b", "ev_state_changes"),
            f(r, "a", "rto_rounds"), f(r, "b", "rto_rounds"), f(r, "a", "rtx_spurious"), f(r, "b", "rx_dup"),
            f(r, "a", "losses"), f(r, "a", "losses_undone"), f(r, "a", "silent_rounds"),
            "-" if r["drops"] is None else r["drops"], v))
    return "\n".join(lines) + "\n"


def expect(rows, res, hr, order, steps, scenarios, truth, out):
    """the reasons the run is incomplete or its healthy truth fails"""
    r = []
    want = list(order)
    for key in scenarios or []:
        if key not in want:
            want.append(key)
    for key in want:
        for tr in TRANSPORTS:
            n = res.get(key, {}).get(tr, {}).get("steps", 0)
            if n != steps:
                r.append("%s %s: %d steps of %d" % (key, tr, n, steps))
        h = hr.get(key)
        if h is not None and h["verdict"]:
            r += ["%s: %s" % (key, x) for x in h["verdict"]]
    if not any(hr.get(k, {}).get("healthy") for k in want):
        r.append("no healthy scenario")
    if truth:
        try:
            t = json.load(open(os.path.join(out, "truth.json")))
            if not t.get("eligible") or t.get("recall") is None:
                r.append("truth: nothing eligible to judge")
            txt = open(os.path.join(out, "truth.txt")).read()
            if "verdict: ok" not in txt:
                r.append("truth: fabric_truth.py's verdict is not ok")
        except (OSError, ValueError) as e:
            r.append("truth: %s" % e)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--expect-steps", type=int, default=None)
    ap.add_argument("--expect-scenarios", default="", help="variant/scenario keys, space separated")
    ap.add_argument("--expect-truth", action="store_true")
    a = ap.parse_args()
    try:
        rows, order = load(a.out)
    except (OSError, ValueError, KeyError) as e:
        print("fabric_report.py: %s" % e, file=sys.stderr)
        return 1
    res = summarise(rows, order)
    hr = health_rows(a.out, order)
    json.dump(res, open(os.path.join(a.out, "results.json"), "w"), indent=1)
    json.dump(hr, open(os.path.join(a.out, "health.json"), "w"), indent=1)
    text = table(res, order, a.out) + health_table(hr, order)
    open(os.path.join(a.out, "table.markdown"), "w").write(text)
    sys.stdout.write(text)
    plots(rows, res, order, a.out)
    if a.expect_steps is not None:
        reasons = expect(rows, res, hr, order, a.expect_steps, a.expect_scenarios.split(), a.expect_truth, a.out)
        for x in reasons:
            print("fabric_report.py: FAIL %s" % x)
        print("fabric_report.py: verdict %s" % ("ok" if not reasons else "FAIL (%d)" % len(reasons)))
        return 1 if reasons else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
