#!/usr/bin/env python3
"""fabric_truth_check.py - the per-path truth verdicts of the fabric tests
(scripts/bench/fabric_truth.py, fabric_health.py) on recorded samples, so
that a verdict that passes without the thing it checks is caught without a
fabric:

  fabric_truth_check.py SCRIPTS_DIR FIXTURE_DIR

Fixtures (test/unit/fabric_truth/), recorded by test/integration/
fabric_clos.sh (FABRIC_CLOS_KEEP) and cut to two QPs (NAME.evs.json, the
fabric_evs.py record; NAME.hash, `fabric.sh seen`: each EV's spine):
  good.*       S2 blackholed mid-step, mrcd as it is: must pass
  noretire.*   the same with retirement turned off (FABRIC_TRANSPORT=
               $'ev_min_active: 128\nev_backup: 0': the D44 floor demotes
               every retirement to a SKIP, no backup to promote): must fail
               on recall
  good.* with the failure after the record ends (it never happened), with
  the wrong spine, with no hash: must fail; bad input: exit 2
  clean-*, undone-*, lost-*, loaded-*: counters of healthy steps (nothing;
  a loss inferred and disproved; 44 losses of which 20 stood on a fabric
  that dropped 5 packets; a loaded host: 208 inferred, 139 disproved, 77
  spurious retransmissions, 125 EVs moved): within fabric_health.py's
  bounds, and at its --lossless / --exact levels ok, ok (not --exact),
  fail, fail; an RTO round, unexplained state changes, too many EVs moved
  or losses inferred, a missing counter fail.
"""
import json
import os
import subprocess
import sys
import tempfile

FAILS = []


def run(script, *args):
    p = subprocess.run([sys.executable, script] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def expect(what, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", what, "" if cond else "\n     " + detail.replace("\n", "\n     ")))
    if not cond:
        FAILS.append(what)


def main():
    scripts, fx = sys.argv[1], sys.argv[2]
    truth = os.path.join(scripts, "fabric_truth.py")
    health = os.path.join(scripts, "fabric_health.py")
    tmp = tempfile.mkdtemp(prefix="fabric-truth-check.")
    out = os.path.join(tmp, "out.json")
    args = json.load(open(os.path.join(fx, "fixtures.json")))
    judge = ["--min-eligible", "20", "--min-recall", "0.95", "--min-precision", "0.9", "--out", out]

    def t(name, *extra, spine="S2", hashf=None):
        a = args[name]
        rc, txt = run(truth, "--evs", os.path.join(fx, name + ".evs.json"),
                      "--hash", hashf or os.path.join(fx, name + ".hash"), "--spine", spine,
                      "--fail-s", str(a["fail_s"]), "--fail-done-s", str(a["fail_done_s"]), *judge, *extra)
        try:
            v = json.load(open(out))
        except (OSError, ValueError):
            v = {}
        os.path.exists(out) and os.unlink(out)
        return rc, txt, v

    rc, txt, v = t("good")
    expect("a recorded good run passes (recall %s, precision %s)" % (v.get("recall"), v.get("precision")),
           rc == 0 and v.get("verdicts") == {"eligible": True, "recall": True, "precision": True}, txt)

    rc, txt, v = t("noretire")
    expect("a run with every EV kept in service fails on recall (recall %s, %s eligible)"
           % (v.get("recall"), v.get("eligible")),
           rc == 1 and v.get("verdicts", {}).get("eligible") is True and v["verdicts"].get("recall") is False, txt)

    rc, txt, v = t("good", "--fail-s", "1000", "--fail-done-s", "1000")
    expect("a run where the failure never happened fails (nothing eligible, no recall, no precision)",
           rc == 1 and v.get("eligible") == 0 and v.get("recall") is None
           and not any(v.get("verdicts", {}).values()), txt)

    rc, txt, v = t("good", spine="S3")
    expect("the same EVs against the wrong spine fail (recall %s, precision %s)"
           % (v.get("recall"), v.get("precision")),
           rc == 1 and v["verdicts"]["recall"] is False and v["verdicts"]["precision"] is False, txt)

    empty = os.path.join(tmp, "empty.hash")
    open(empty, "w").close()
    rc, txt, v = t("good", hashf=empty)
    expect("a run without the fabric's hash fails (every EV unhashed)",
           rc == 1 and v.get("unhashed") == v.get("evs") and v.get("evs", 0) > 0, txt)

    rc, txt = run(truth, "--evs", os.path.join(tmp, "none.json"), "--hash", empty, "--spine", "S2")
    expect("a missing record is bad input (exit 2)", rc == 2, txt)
    rc, txt, v = t("good", "--fail-s", "7", "--fail-done-s", "6")
    expect("a failure in place before it was ordered is bad input (exit 2)", rc == 2, txt)

    def h(name, *extra, before=None):
        return run(health, before or os.path.join(fx, name + "-0.json"), os.path.join(fx, name + "-1.json"),
                   "--min-qps", "16", *extra)

    rc, txt = h("clean")
    expect("healthy counters with nothing moved pass", rc == 0, txt)
    rc, txt = h("undone")
    expect("a loss inferred and disproved (D64) passes", rc == 0, txt)
    rc, txt = h("undone", "--lossless")
    expect("... also with --lossless", rc == 0, txt)
    rc, txt = h("undone", "--exact")
    expect("... but not with --exact", rc == 1 and "--exact" in txt, txt)
    rc, txt = h("lost", "--min-qps", "32")
    expect("losses that stood (20 of 44) are within the bounds", rc == 0, txt)
    rc, txt = h("lost", "--min-qps", "32", "--lossless")
    expect("... but fail --lossless", rc == 1 and "disproved" in txt, txt)
    rc, txt = h("loaded")
    expect("a loaded healthy run (208 losses inferred, 139 disproved, 125 EVs moved) is within the bounds",
           rc == 0, txt)
    rc, txt = h("loaded", "--lossless")
    expect("... and fails --lossless (77 spurious retransmissions)", rc == 1 and "rtx_spurious 77" in txt, txt)
    rc, txt = h("clean", "--min-qps", "17")
    expect("fewer QPs closed than the run had fails", rc == 1, txt)

    def mutated(name, **delta):
        """the AFTER snapshot of NAME with closed_qps counters grown by delta"""
        d = json.load(open(os.path.join(fx, name + "-1.json")))
        for k, v in delta.items():
            if k == "transitions":
                d["closed_qps"]["ev"]["transitions"] += v
            else:
                d["closed_qps"][k] += v
        f = os.path.join(tmp, "%s-%s-1.json" % (name, "-".join(delta)))
        json.dump(d, open(f, "w"))
        return run(health, os.path.join(fx, name + "-0.json"), f, "--min-qps", "16")

    rc, txt = mutated("loaded", rto_rounds=1)
    expect("an RTO round on a healthy fabric fails", rc == 1 and "rto_rounds 1" in txt, txt)
    rc, txt = mutated("loaded", transitions=20)
    expect("EV state changes that inferred losses do not explain fail", rc == 1 and "explain" in txt, txt)
    rc, txt = mutated("loaded", evs_moved=100)
    expect("more than 10% of the active EVs moved fails", rc == 1 and "EVs moved" in txt, txt)
    rc, txt = mutated("loaded", losses=200, losses_undone=200)
    expect("losses inferred for more than 2% of the packets fail, disproved or not",
           rc == 1 and "of the 16384 data packets" in txt, txt)
    d = json.load(open(os.path.join(fx, "clean-0.json")))
    del d["closed_qps"]["rx_dup"]
    nokey = os.path.join(tmp, "nokey.json")
    json.dump(d, open(nokey, "w"))
    rc, txt = h("clean", before=nokey)
    expect("a missing counter fails, it does not count as 0", rc == 1 and "rx_dup" in txt, txt)

    print("%d failed" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
