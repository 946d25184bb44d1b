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
    text = "\n".join(lines) + "\n"
    open(os.path.join(out, "table.markdown"), "w").write(text)
    return text


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
        gnuplot("set terminal pngcairo size 800,500 noenhanced\nset output '%s'\n"
                "set title 'per-path truth: EVs not GOOD (S2 blackholed at 3 s, healed at 6 s)'\n"
                "set xlabel 'time (s)'\nset ylabel 'EVs'\nset grid\nset yrange [0:*]\n"
                "plot '%s' using 1:3 with lines lw 2 title 'not GOOD, cross S2', "
                "'%s' using 1:5 with lines lw 2 title 'not GOOD, other spines'\n"
                % (os.path.join(out, "truth.png"), tl, tl))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rows, order = load(a.out)
    res = summarise(rows, order)
    json.dump(res, open(os.path.join(a.out, "results.json"), "w"), indent=1)
    sys.stdout.write(table(res, order, a.out))
    plots(rows, res, order, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
