#!/usr/bin/env python3
"""prom_format_parse.py TEST_PROM_FORMAT - the text test_prom_format writes
for its escaping case (PROM_FORMAT_DUMP), read back by python3-prometheus-
client's parser: every sample line parsed, and the label values that went
through the escaping come back as they were (a port named a"b\\c<LF>d)."""
import os
import subprocess
import sys
import tempfile

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    # Debian's python3-prometheus-client, behind another python3 on PATH
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("FAIL python3-prometheus-client is not installed (scripts/setup.sh installs it)")
    sys.exit(1)

with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "metrics.txt")
    r = subprocess.run([sys.argv[1]], env=dict(os.environ, PROM_FORMAT_DUMP=out), capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(out):
        print("FAIL test_prom_format:", r.stdout[-500:], r.stderr[-500:])
        sys.exit(1)
    text = open(out, encoding="utf-8").read()

fails = 0
def check(what, cond):
    global fails
    print(("ok   " if cond else "FAIL ") + what)
    fails += not cond

lines = [l for l in text.split("\n") if l and not l.startswith("#")]
samples = [s for f in text_string_to_metric_families(text) for s in f.samples]
check("every sample line parsed (%d lines, %d samples)" % (len(lines), len(samples)), len(lines) == len(samples))
ports = {s.labels["port"] for s in samples if s.name == "mrcd_port_rx_pkts_total"}
check("the escaped port name reads back: %r" % sorted(ports), ports == {'a"b\\c\nd', "plane2"})
ver = [s.labels["version"] for s in samples if s.name == "mrcd_info"]
check("the escaped version reads back: %r" % ver, ver == ["x\\y"])
h = [(s.labels.get("le"), s.value) for s in samples if s.name == "mrcd_ev_probe_rtt_seconds_bucket"]
check("the histogram's buckets end with +Inf", len(h) > 1 and h[-1][0] == "+Inf")
print("%d failed" % fails)
sys.exit(1 if fails else 0)
