#!/usr/bin/env python3
"""demo_verdict.py - the demo's report and verdict, from its samples file.

    demo_verdict.py perf SAMPLES CLIENT_EXIT SERVER_EXIT PERF_JSON
        append mrc-perf's result (the client's --json output, which also
        carries the server's counts; "null" when it printed nothing) and
        both exit codes to SAMPLES
    demo_verdict.py report SAMPLES [--png FILE]
        print the report, draw goodput over time with the failure shaded
        (matplotlib, else gnuplot; skipped with a note when neither is
        there) and exit 0 for PASS, 1 for FAIL

SAMPLES is what scripts/lib/demo_monitor.py writes (one JSON object a line;
its docstring lists the records). The phases come from the fault calls'
timestamps, not from labels: "before" is every sample before the blackhole
was asked for, "during" every sample between the blackhole's answer and the
restore's call, "after" every sample from the restore's answer to the end of
the planned transfer (DUR). The verdict is FAIL, with every reason, unless:

  - every phase has at least MIN_SAMPLES samples;
  - the blackhole happened and was restored, began no later than a tenth of
    its planned length after DUR/3, and lasted (restore called - blackhole
    answered, the shortest it can have been) at least 0.9 x DUR/3;
  - no window between two samples while blackholed placed zero bytes at b,
    and no such window is longer than MAX_GAP_S (a stall inside it could
    not be seen);
  - plane 2's EVs left GOOD while blackholed (the median count out of GOOD
    while blackholed above the median before) and came back after (at some
    sample after the restore, no more out of GOOD than that median before);
  - mrc-perf (client and server) exited 0, with zero verify and zero
    completion errors.
Missing data fails (a check never passes on a value it did not read).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

MIN_SAMPLES = 5
MIN_LENGTH = 0.9        # of the planned blackhole
MAX_LATE = 0.1          # of the planned blackhole
MAX_GAP_S = 0.3         # a window longer than this is not a 100 ms window
PHASES = ("before", "during", "after")


class Bad(Exception):
    pass


def load(path):
    recs = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except ValueError:
                raise Bad("%s:%d: not JSON" % (path, n))
            if not isinstance(r, dict) or "kind" not in r:
                raise Bad("%s:%d: not a record" % (path, n))
            recs.append(r)
    return recs


def num(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise Bad("%s: missing or not a number (%r)" % (what, v))
    return v


def plane_evs(s, plane):
    """(EVs out of GOOD, EVs out of rotation, {state: n}) of @plane in sample @s."""
    try:
        st = s["a_planes"][plane]["state"]
        out = s["a_planes"][plane]["pool"]["out"]
        good = st["GOOD"]
    except (KeyError, TypeError):
        raise Bad("sample at t=%s: no EV counts for %s" % (s.get("t"), plane))
    tot = sum(num(v, "%s EVs" % plane) for v in st.values())
    return tot - num(good, "%s GOOD EVs" % plane), num(out, "%s EVs out" % plane), st


def median(v):
    v = sorted(v)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2


def gbps(b0, b1, t0, t1):
    return (b1 - b0) * 8 / (t1 - t0) / 1e9 if t1 > t0 else None


def analyse(recs):
    """Return (report lines, reasons for FAIL, series for the plot)."""
    lines, bad = [], []
    start = [r for r in recs if r["kind"] == "start"]
    if not start:
        return lines, ["no start record: not a demo samples file"], None
    hdr = start[0]
    dur = num(hdr.get("dur"), "start.dur")
    plane = hdr.get("plane", "plane2")
    planned = hdr.get("plan") or {}
    p_bh = num(planned.get("blackhole"), "start.plan.blackhole")
    p_rs = num(planned.get("restore"), "start.plan.restore")
    p_len = p_rs - p_bh
    samples = [r for r in recs if r["kind"] == "sample"]
    for s in samples:
        num(s.get("t"), "sample.t")
        num(s.get("b_placed"), "sample.b_placed at t=%s" % s.get("t"))
    samples.sort(key=lambda s: s["t"])
    faults = {r.get("action"): r for r in recs if r["kind"] == "fault"}
    bh, rs = faults.get("blackhole"), faults.get("restore")

    # ---- the failure itself
    for what, f in (("blackhole", bh), ("restore", rs)):
        if f is not None and not f.get("ok"):
            bad.append("the %s call failed: %s" % (what, f.get("reason") or "?"))
    if bh is None or not bh.get("ok"):
        bad.append("the blackhole never happened")
    if rs is None or not rs.get("ok"):
        bad.append("plane 2 was never restored during the transfer")
    happened = bh is not None and bh.get("ok") and rs is not None and rs.get("ok")
    if happened:
        b_call, b_done = num(bh.get("t_call"), "blackhole.t_call"), num(bh.get("t_done"), "blackhole.t_done")
        r_call, r_done = num(rs.get("t_call"), "restore.t_call"), num(rs.get("t_done"), "restore.t_done")
        length = r_call - b_done
        lines.append("  blackhole:       planned t=%.2f-%.2f s (%.2f s), happened t=%.2f-%.2f s (at least %.2f s)"
                     % (p_bh, p_rs, p_len, b_call, r_done, length))
        if length < MIN_LENGTH * p_len:
            bad.append("the blackhole lasted %.2f s, under %.1f x the planned %.2f s" % (length, MIN_LENGTH, p_len))
        if b_call - p_bh > MAX_LATE * p_len:
            bad.append("the blackhole began %.2f s late (t=%.2f s, planned %.2f s)" % (b_call - p_bh, b_call, p_bh))
        phase = {"before": [s for s in samples if s["t"] < b_call],
                 "during": [s for s in samples if b_done <= s["t"] <= r_call],
                 "after": [s for s in samples if r_done <= s["t"] <= dur]}
        shade = (b_call, r_done)
    else:
        phase = {"before": samples, "during": [], "after": []}
        shade = None

    # ---- goodput per phase
    rate = {}
    for ph in PHASES:
        r = phase[ph]
        if len(r) < MIN_SAMPLES:
            bad.append("phase '%s' has %d samples (fewer than %d)" % (ph, len(r), MIN_SAMPLES))
        if len(r) >= 2:
            rate[ph] = gbps(r[0]["b_placed"], r[-1]["b_placed"], r[0]["t"], r[-1]["t"])
        lines.append("  goodput %-8s %s  (%d samples)" % (ph + ":", "%.2f Gbit/s" % rate[ph]
                                                          if rate.get(ph) is not None else "n/a", len(r)))
    if rate.get("before") and rate.get("during") is not None:
        lines.append("  during/before:   %.2f  (memif planes have no rate limit: the CPUs set the pace)"
                     % (rate["during"] / rate["before"]))

    # ---- the lowest window while blackholed
    d = phase["during"]
    wins = [(s0["t"], s1["t"], gbps(s0["b_placed"], s1["b_placed"], s0["t"], s1["t"]))
            for s0, s1 in zip(d, d[1:]) if s1["t"] > s0["t"]]
    if wins:
        lo = min(wins, key=lambda w: w[2])
        lines.append("  lowest window while blackholed: %.2f Gbit/s (t=%.2f-%.2f s, %.0f ms; 0 would be a stall)"
                     % (lo[2], lo[0], lo[1], (lo[1] - lo[0]) * 1e3))
        for t0, t1, g in wins:
            if g <= 0:
                bad.append("no bytes placed at b in the window t=%.2f-%.2f s while blackholed (a stall)" % (t0, t1))
        gap = max(wins, key=lambda w: w[1] - w[0])
        if gap[1] - gap[0] > MAX_GAP_S:
            bad.append("no sample for %.2f s (t=%.2f-%.2f s) while blackholed: a stall there cannot be ruled out"
                       % (gap[1] - gap[0], gap[0], gap[1]))
    elif happened:
        bad.append("no window while blackholed to judge")

    # ---- plane 2's EVs
    if happened and phase["before"] and phase["during"] and phase["after"]:
        # medians: on a loaded host some of plane 2's EVs leave GOOD for a
        # sample or two before the blackhole too (up to 45 of 48 seen)
        base = median([plane_evs(s, plane)[0] for s in phase["before"]])
        held = median([plane_evs(s, plane)[0] for s in phase["during"]])
        n_before = sum(plane_evs(phase["before"][-1], plane)[2].values())
        peak_s = max(phase["during"], key=lambda s: plane_evs(s, plane)[0])
        peak, peak_out, peak_st = plane_evs(peak_s, plane)
        back = [s for s in phase["after"] if plane_evs(s, plane)[0] <= base]
        low_out = min(plane_evs(s, plane)[1] for s in phase["after"])
        lines.append("  %s EVs:       %d; out of GOOD before: %g (median); while blackholed: %g (median), up to %d (%s), "
                     "%d retired (out of rotation)" % (
                         plane, n_before, base, held, peak,
                         ", ".join("%s %d" % (k, v) for k, v in sorted(peak_st.items()) if k != "GOOD" and v),
                         peak_out))
        lines.append("  %s restored:  %d EVs back in rotation%s" % (
            plane, peak_out - low_out,
            ", all GOOD again by t=%.2f s (%.2f s after the restore)" % (back[0]["t"], back[0]["t"] - rs["t_done"])
            if back else ", NOT all GOOD again by the end"))
        if held <= base:
            bad.append("%s's EVs never left GOOD while blackholed" % plane)
        if not back:
            bad.append("%s's EVs did not come back to GOOD after the restore" % plane)

    # ---- retransmissions, EV transitions: the whole run
    if samples:
        last = samples[-1]
        r = last.get("a_rtx") or {}
        try:
            kinds = {k: num(r.get(k), "a_rtx." + k) for k in ("fast", "nack", "rto", "port_down")}
            lines.append("  retransmits:     %d (fast %d, NACK %d, RTO %d, port down %d)" % (
                sum(kinds.values()), kinds["fast"], kinds["nack"], kinds["rto"], kinds["port_down"]))
            lines.append("  EV transitions:  %d" % num(last.get("a_ev_transitions"), "a_ev_transitions"))
        except Bad as e:
            bad.append(str(e))

    # ---- the application's word
    perf = [r for r in recs if r["kind"] == "perf"]
    if not perf:
        bad.append("no mrc-perf result recorded")
    else:
        p = perf[-1]
        res = p.get("result")
        for side in ("client", "server"):
            code = p.get(side + "_exit")
            if code != 0:
                bad.append("mrc-perf %s exited %s" % (side, code))
        if not isinstance(res, dict):
            bad.append("mrc-perf printed no result")
        else:
            try:
                lines.append("  bytes:           %d in %.2f s (%.2f Gbit/s overall, %.0f messages/s)" % (
                    num(res.get("bytes"), "bytes"), num(res.get("seconds"), "seconds"),
                    num(res.get("gbps"), "gbps"), num(res.get("msgs_per_s"), "msgs_per_s")))
                ve, ce = num(res.get("verify_errors"), "verify_errors"), num(res.get("cq_errors"), "cq_errors")
                lines.append("  verify errors:   %d" % ve)
                lines.append("  completion errors: %d" % ce)
                if ve:
                    bad.append("verify errors: %d" % ve)
                if ce:
                    bad.append("completion errors: %d" % ce)
            except Bad as e:
                bad.append("mrc-perf result: %s" % e)
    series = {"t": [s["t"] for s in samples[1:]],
              "gbps": [gbps(s0["b_placed"], s1["b_placed"], s0["t"], s1["t"]) or 0.0
                       for s0, s1 in zip(samples, samples[1:])],
              "shade": shade, "dur": dur, "plane": plane,
              "out": [plane_evs(s, plane)[0] if s.get("a_planes") else 0 for s in samples[1:]]}
    return lines, bad, series


def verdict(path):
    """(PASS?, report lines, reasons, plot series) of a samples file."""
    try:
        lines, bad, series = analyse(load(path))
    except (OSError, Bad) as e:
        return False, [], [str(e)], None
    return not bad, lines, bad, series


def plot(series, png):
    """Goodput per sample window, the failure window shaded. A note when
    neither matplotlib nor gnuplot is there."""
    if not series or not series["t"]:
        return "no samples to plot"
    title = "mrc-perf a -> b, %s blackholed (shaded)" % series["plane"]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
    if plt is not None:
        fig, ax = plt.subplots(figsize=(9, 4))
        if series["shade"]:
            ax.axvspan(*series["shade"], color="tab:red", alpha=0.15, label="plane 2 blackholed")
        ax.step(series["t"], series["gbps"], where="pre", color="tab:blue", label="goodput (per ~100 ms)")
        ax.set_xlabel("transfer time (s)")
        ax.set_ylabel("Gbit/s placed at b")
        ax.set_ylim(bottom=0)
        ax2 = ax.twinx()
        ax2.plot(series["t"], series["out"], color="tab:orange", lw=1, label="plane 2 EVs out of GOOD")
        ax2.set_ylabel("plane 2 EVs out of GOOD")
        ax2.set_ylim(bottom=0)
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, loc="lower left", fontsize=8)
        ax.set_title(title)
        fig.tight_layout()
        fig.savefig(png, dpi=100)
        plt.close(fig)
        return None
    gp = shutil.which("gnuplot")
    if gp is None:
        return "no PNG: neither matplotlib nor gnuplot is installed (scripts/setup.sh installs them)"
    with tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False) as f:
        for t, g, o in zip(series["t"], series["gbps"], series["out"]):
            f.write("%f %f %d\n" % (t, g, o))
        dat = f.name
    try:
        sh = ("set object 1 rect from %f, graph 0 to %f, graph 1 fc rgb '#f4cccc' fs solid 0.5 behind\n"
              % series["shade"]) if series["shade"] else ""
        script = ("set terminal pngcairo size 900,400\nset output '%s'\nset title \"%s\"\n"
                  "set xlabel 'transfer time (s)'\nset ylabel 'Gbit/s placed at b'\nset y2label 'plane 2 EVs out of GOOD'\n"
                  "set yrange [0:*]\nset y2range [0:*]\nset ytics nomirror\nset y2tics\n"
                  "set key left bottom opaque box\n%s"
                  "plot '%s' using 1:2 with steps title 'goodput (per ~100 ms)', "
                  "'' using 1:3 axes x1y2 with lines title 'plane 2 EVs out of GOOD'\n"
                  % (png, title, sh, dat))
        r = subprocess.run([gp], input=script, text=True, capture_output=True)
        if r.returncode != 0:
            return "gnuplot failed: " + r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "gnuplot failed"
    finally:
        os.unlink(dat)
    return None


def cmd_perf(argv):
    if len(argv) != 4:
        sys.exit("usage: demo_verdict.py perf SAMPLES CLIENT_EXIT SERVER_EXIT PERF_JSON")
    path, cl, srv, pj = argv
    try:
        with open(pj) as f:
            res = json.loads(f.read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        res = None
    with open(path, "a") as f:
        f.write(json.dumps({"kind": "perf", "client_exit": int(cl), "server_exit": int(srv), "result": res},
                           separators=(",", ":")) + "\n")


def cmd_report(argv):
    png = None
    if len(argv) == 3 and argv[1] == "--png":
        png = argv[2]
    elif len(argv) != 1:
        sys.exit("usage: demo_verdict.py report SAMPLES [--png FILE]")
    ok, lines, bad, series = verdict(argv[0])
    for line in lines:
        print(line)
    if png:
        note = plot(series, png)
        print("  plot:            %s" % (note or png))
    print("  result:          %s" % ("PASS" if ok else "FAIL"))
    for reason in bad:
        print("    - " + reason)
    return 0 if ok else 1


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("perf", "report"):
        sys.exit("usage: demo_verdict.py perf|report ...")
    if sys.argv[1] == "perf":
        cmd_perf(sys.argv[2:])
        return 0
    return cmd_report(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
