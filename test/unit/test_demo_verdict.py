#!/usr/bin/env python3
"""test_demo_verdict.py - the demo's verdict (scripts/lib/demo_verdict.py) on
recorded samples (test/unit/demo_samples/: good.jsonl and good_noisy.jsonl
from real runs, the others derived from good.jsonl by derive.py): PASS for
the good runs, and FAIL with exactly the expected reasons for each run where
something went wrong.

    test_demo_verdict.py SCRIPTS_LIB DEMO_SAMPLES
"""
import os
import subprocess
import sys
import tempfile

lib, d = sys.argv[1], sys.argv[2]
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, lib)
import demo_verdict  # noqa: E402

# file -> the reasons it must fail with (prefixes; every reason given must
# match one of them and each must match a reason); [] = PASS
CASES = {
    "good": [],
    "good_noisy": [],   # a second real run: up to 45 of plane 2's 48 EVs out of GOOD before the blackhole
    "stall": ["no bytes placed at b in the window"],
    "no_blackhole": ["the blackhole never happened", "plane 2 was never restored",
                     "phase 'during' has 0 samples", "phase 'after' has 0 samples"],
    "short_blackhole": ["the blackhole lasted 0.99 s, under 0.9 x the planned 5.00 s"],
    "late_short_blackhole": ["the blackhole lasted 0.19 s", "the blackhole began 7.60 s late",
                             "phase 'during' has", "plane2's EVs never left GOOD"],
    "no_after_phase": ["phase 'after' has 0 samples"],
    "evs_stay_good": ["plane2's EVs never left GOOD while blackholed"],
    "evs_not_back": ["plane2's EVs did not come back to GOOD after the restore"],
    "monitor_gap": ["no sample for 1."],
    "perf_errors": ["mrc-perf client exited 1", "verify errors: 3", "completion errors: 1"],
    "no_perf": ["no mrc-perf result recorded"],
}

failed = 0


def check(name, ok, bad, want):
    global failed
    extra = [r for r in bad if not any(r.startswith(w) for w in want)]
    missing = [w for w in want if not any(r.startswith(w) for r in bad)]
    if ok != (not want) or extra or missing:
        failed += 1
        print("FAIL %s: verdict %s, reasons %r (unexpected %r, missing %r)"
              % (name, "PASS" if ok else "FAIL", bad, extra, missing))
    else:
        print("ok   %s: %s%s" % (name, "PASS" if ok else "FAIL", "".join("\n       - " + r for r in bad)))


for name, want in CASES.items():
    ok, lines, bad, _ = demo_verdict.verdict(os.path.join(d, name + ".jsonl"))
    check(name, ok, bad, want)

with open(os.path.join(d, "good.jsonl")) as f:
    good = f.read()
with tempfile.TemporaryDirectory() as tmp:
    # a file cut in the middle of a line, an empty one, a missing one
    for name, text, want in (("truncated", good[:len(good) // 2], None),
                             ("empty", "", ["no start record"])):
        p = os.path.join(tmp, name + ".jsonl")
        want = want or [p + ":"]
        with open(p, "w") as f:
            f.write(text)
        ok, _, bad, _ = demo_verdict.verdict(p)
        check(name, ok, bad, want)
        if name == "truncated" and not any("not JSON" in r for r in bad):
            failed += 1
            print("FAIL truncated: reason does not say 'not JSON': %r" % bad)
    ok, _, bad, _ = demo_verdict.verdict(os.path.join(tmp, "absent.jsonl"))
    check("absent", ok, bad, ["[Errno 2]"])
    # the command line: exit 0 for PASS, 1 for FAIL, the PNG when a plotter is there
    script = os.path.join(lib, "demo_verdict.py")

    def report(name, code, word, *extra):
        global failed
        r = subprocess.run([sys.executable, script, "report", os.path.join(d, name + ".jsonl")] + list(extra),
                           capture_output=True, text=True)
        if r.returncode != code or "result:          " + word not in r.stdout:
            failed += 1
            print("FAIL report %s: exit %d\n%s%s" % (name, r.returncode, r.stdout, r.stderr))
        else:
            print("ok   report %s: exit %d, %s" % (name, code, word))
        return r.stdout

    png = os.path.join(tmp, "goodput.png")
    out = report("good", 0, "PASS", "--png", png)
    if "plot:            no PNG" in out:
        print("skip the PNG: no matplotlib or gnuplot here")
    elif not os.path.exists(png) or open(png, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
        failed += 1
        print("FAIL report good: no PNG at %s\n%s" % (png, out))
    else:
        print("ok   report good: PNG written")
    report("stall", 1, "FAIL")

print("%d failed" % failed)
sys.exit(1 if failed else 0)
