#!/usr/bin/env bash
# prometheus.sh - GET /metrics (telemetry.prometheus.listen) on two mrcd
# joined by four memif planes, during a verified mrc-perf transfer and after
# it: every line of every scrape parses with python3-prometheus-client's
# parser (and no sample line is lost by it), the expected families are
# there with their types, counters move between two scrapes and never go
# back, the EV probe RTT histogram has observations, no per-QP or per-EV
# label; wrong paths get 404, wrong methods 405, malformed requests 400 and
# oversized ones 414/431 while the transfer goes on, which still completes
# verified, and a second verified transfer runs after them. Both listen on
# 127.0.0.1 only, on ports the kernel says are free.
source "$(dirname "$0")/lib.sh"
PERF=${MRC_PERF:?path to mrc-perf}
DUR=${PROM_DURATION:-6}

PY=$(prom_py) || { bad "python3-prometheus-client is not installed (scripts/setup.sh installs it)"; finish; exit 1; }

# three free TCP ports on 127.0.0.1: two for /metrics, one for mrc-perf's bootstrap
read -r PA PB PP < <(free_ports 3)

make_configs
for n in a b; do
	port=$PA; [ $n = b ] && port=$PB
	python3 - "$T/$n.yaml" "$port" <<'PY' || { bad "config $n: no telemetry section to extend"; finish; exit 1; }
import sys
p, port = sys.argv[1], sys.argv[2]
s = open(p).read()
old = "telemetry:\n  enabled: true\n"
if old not in s:
    sys.exit(1)
s = s.replace(old, old + '  prometheus:\n    listen: "127.0.0.1:%s"\n' % port)
open(p, "w").write(s)
PY
done
start_daemon a && start_daemon b && wait_for 30 links_up a && wait_for 30 links_up b ||
	{ bad "daemons start and links come up"; finish; exit 1; }
ok "daemons start with /metrics on 127.0.0.1:$PA and 127.0.0.1:$PB"

url() { [ "$1" = a ] && echo "http://127.0.0.1:$PA/metrics" || echo "http://127.0.0.1:$PB/metrics"; }
scrape() { # scrape NAME FILE: the body, and its headers in FILE.hdr
	curl -sS --max-time 10 -D "$2.hdr" -o "$2" -w '%{http_code}' "$(url "$1")" | grep -qx 200
}
code() { # code NAME CURL-ARGS...: the HTTP status curl saw
	curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$@"
}
raw() { # raw NAME BYTES: send BYTES (printf format) to NAME's port, print the status line's code or "closed"
	local port=$PA; [ "$1" = a ] || port=$PB
	python3 - "$port" "$2" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=15)
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
try:
    line = s.recv(200).split(b"\r\n")[0].decode()
except socket.timeout:
    line = "timeout"
parts = line.split()
print(parts[1] if len(parts) > 1 and line.startswith("HTTP/") else ("closed" if line == "" else line))
PY
}

check "a answers GET /metrics before any traffic" scrape a "$T/a0.txt"
check "b answers GET /metrics before any traffic" scrape b "$T/b0.txt"
check "Content-Type is text/plain; version=0.0.4" \
	grep -qi '^content-type: text/plain; version=0.0.4' "$T/a0.txt.hdr"

# a verified transfer a -> b, two QPs
proc_start SRV "$PERF" -s "$T/b.sock" --server --port "$PP" --timeout 90 > "$T/perf.srv" 2>&1
proc_start CLI "$PERF" -s "$T/a.sock" --client 127.0.0.1 --port "$PP" --verify --timeout 90 --stats 0 \
	--duration "$DUR" --qps 2 > "$T/perf.out" 2>&1
tx() { ctlj a qps | jget 'sum(q["tx_data_pkts"] for q in d)'; }
sending() { [ "$(tx)" -gt 500 ]; }
check "the transfer is sending" wait_for 30 sending
scrape a "$T/a1.txt" && scrape b "$T/b1.txt"; check "scrape 1 of both during the transfer" test $? -eq 0
base=$(tx)
progressed() { [ "$(tx)" -gt $((base + 5000)) ]; }
check "the transfer moves on" wait_for 30 progressed

# bad requests, while the transfer runs
check "GET /nope: 404" test "$(code "http://127.0.0.1:$PA/nope")" = 404
check "GET /: 404" test "$(code "http://127.0.0.1:$PB/")" = 404
check "GET /metrics/extra: 404" test "$(code "$(url a)/extra")" = 404
check "POST /metrics with a body: 405" test "$(code -X POST --data-binary hello "$(url a)")" = 405
check "PUT /metrics: 405" test "$(code -X PUT "$(url b)")" = 405
check "DELETE /metrics: 405" test "$(code -X DELETE "$(url a)")" = 405
check "HEAD /metrics: 200" test "$(code -I "$(url a)")" = 200
big=$(head -c 40000 /dev/zero | tr '\0' a)
check "a 40 KB header: 431" test "$(code -H "X-Big: $big" "$(url a)")" = 431
check "a 40 KB URL: 414" test "$(code "$(url b)?$big")" = 414
check "a 1 MB POST body: 405" \
	test "$(head -c 1000000 /dev/zero | code -X POST --data-binary @- "$(url a)")" = 405
check "HTTP/1.1 without Host: 400" test "$(raw a 'GET /metrics HTTP/1.1\r\n\r\n')" = 400
check "a header line without a colon: 400" \
	test "$(raw a 'GET /metrics HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n')" = 400
check "a bad Content-Length: 400" \
	test "$(raw b 'GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n')" = 400
check "a request line without a version: 400" test "$(raw a 'GET /metrics\r\n\r\n')" = 400
check "HTTP/9.9: 505 (not served)" test "$(raw b 'GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n')" = 505
# a one-word request line: libmicrohttpd 0.9.75 closes without an answer
r=$(raw a 'GARBAGE\r\n\r\n')
check "a one-word request line: closed or 4xx (got $r)" test "$r" = closed -o "${r#4}" != "$r"

scrape a "$T/a2.txt" && scrape b "$T/b2.txt"; check "scrape 2 of both during the transfer, after the bad requests" test $? -eq 0

wait "$CLI"; rc=$?
wait "$SRV"
summary=$(grep -E "goodput|errors" "$T/perf.out" | tr -s ' ' | paste -sd' ' | cut -c1-160)
check "the transfer completes verified: $summary" test "$rc" -eq 0
check "mrc-perf saw no verify or completion error" grep -q "completion errors 0, verify errors 0" "$T/perf.out"

scrape a "$T/a3.txt" && scrape b "$T/b3.txt"; check "scrape 3 of both after the transfer" test $? -eq 0

# every scrape, judged in one place
"$PY" - "$T" <<'PY'
import math, os, sys
from prometheus_client.parser import text_string_to_metric_families

T = sys.argv[1]
fails = 0
def ok(what): print("ok   " + what)
def bad(what):
    global fails
    fails += 1
    print("FAIL " + what)

def parse(path):
    """{(sample name, frozenset(labels)): value}, {family: type}; every
    line a comment or a sample, every sample line parsed"""
    text = open(path).read()
    lines = [l for l in text.split("\n") if l]
    comments = [l for l in lines if l.startswith("#")]
    sample_lines = [l for l in lines if not l.startswith("#")]
    if any(not (l.startswith("# HELP ") or l.startswith("# TYPE ")) for l in comments):
        raise ValueError("a comment that is neither HELP nor TYPE")
    # one line at a time: each must parse on its own (with its family's TYPE)
    types = {}
    for l in comments:
        if l.startswith("# TYPE "):
            _, _, name, t = l.split(" ", 3)
            types[name] = t
    samples, fam_types = {}, {}
    for fam in text_string_to_metric_families(text):
        fam_types[fam.name] = fam.type
        for s in fam.samples:
            key = (s.name, frozenset(s.labels.items()))
            if key in samples:
                raise ValueError("duplicate sample %s" % (key,))
            samples[key] = s.value
    if len(samples) != len(sample_lines):
        raise ValueError("%d sample lines, %d parsed" % (len(sample_lines), len(samples)))
    for l in sample_lines:
        list(text_string_to_metric_families(l + "\n"))
    return samples, fam_types, types

scr = {}
for n in ("a", "b"):
    for i in range(4):
        p = os.path.join(T, "%s%d.txt" % (n, i))
        try:
            scr[n, i] = parse(p)
            ok("%s%d: every line parses (%d samples, %d families)" % (n, i, len(scr[n, i][0]), len(scr[n, i][1])))
        except Exception as e:
            bad("%s%d does not parse: %s" % (n, i, e))
if fails:
    print("%d failed" % fails); sys.exit(1)

def total(n, i, name, **want):
    v = [val for (s, labels), val in scr[n, i][0].items()
         if s == name and all(dict(labels).get(k) == w for k, w in want.items())]
    return sum(v) if v else None

expect = {
    "mrcd_port_rx_pkts_total": "counter", "mrcd_port_tx_pkts_total": "counter",
    "mrcd_port_rx_bytes_total": "counter", "mrcd_port_tx_bytes_total": "counter",
    "mrcd_port_rx_bad_icrc_total": "counter", "mrcd_port_rx_dropped_total": "counter",
    "mrcd_port_tx_dropped_total": "counter", "mrcd_port_link_up": "gauge", "mrcd_port_admin_up": "gauge",
    "mrcd_plane_evs": "gauge", "mrcd_qps": "gauge", "mrcd_client_sessions": "gauge",
    "mrcd_qp_retransmits_total": "counter", "mrcd_qp_rto_rounds_total": "counter",
    "mrcd_qp_losses_undone_total": "counter", "mrcd_ev_transitions_total": "counter",
    "mrcd_qp_tx_data_pkts_total": "counter", "mrcd_qp_rx_data_pkts_total": "counter",
    "mrcd_worker_busy_ratio": "gauge", "mrcd_worker_loops_total": "counter",
    "mrcd_worker_sleep_seconds_total": "counter", "mrcd_engine_rx_pkts_total": "counter",
    "mrcd_ev_probe_rtt_seconds": "histogram", "mrcd_ev_probe_timeouts_total": "counter",
    "mrcd_info": "gauge",
}
for n in ("a", "b"):
    _, _, types = scr[n, 3]
    missing = [f for f, t in expect.items() if types.get(f) != t]
    if missing: bad("%s: families missing or of the wrong type: %s" % (n, missing))
    else: ok("%s: the %d expected families, with their types" % (n, len(expect)))
    wrong = [f for f, t in types.items() if t == "counter" and not f.endswith("_total")]
    if wrong: bad("%s: counters not named _total: %s" % (n, wrong))
    else: ok("%s: every counter (%d) is named _total" % (n, sum(t == "counter" for t in types.values())))
    labels = {k for (s, ls) in scr[n, 3][0] for k, _ in ls}
    if labels - {"port", "plane", "state", "kind", "worker", "le", "version"}:
        bad("%s: unexpected labels %s" % (n, labels))
    else: ok("%s: labels %s only (no per-QP or per-EV label)" % (n, sorted(labels)))

def moved(n, name, i=1, j=2, **want):
    x, y = total(n, i, name, **want), total(n, j, name, **want)
    if x is None or y is None: bad("%s: %s missing" % (n, name)); return
    if y > x: ok("%s: %s moved during the transfer (%g -> %g)" % (n, name, x, y))
    else: bad("%s: %s did not move (%g -> %g)" % (n, name, x, y))
moved("a", "mrcd_port_tx_pkts_total"); moved("a", "mrcd_port_tx_bytes_total")
moved("a", "mrcd_qp_tx_data_pkts_total"); moved("a", "mrcd_engine_tx_pkts_total")
moved("a", "mrcd_worker_loops_total")
moved("b", "mrcd_port_rx_pkts_total"); moved("b", "mrcd_port_rx_bytes_total")
moved("b", "mrcd_qp_rx_data_pkts_total"); moved("b", "mrcd_engine_rx_pkts_total")

# counters never go back, scrape to scrape
for n in ("a", "b"):
    back = []
    for i in range(3):
        s0, s1 = scr[n, i][0], scr[n, i + 1][0]
        for key, v in s0.items():
            name = key[0]
            fam = name[:-len("_total")] if name.endswith("_total") else name
            if (name.endswith("_total") or name.endswith("_bucket") or name.endswith("_count")) and key in s1 \
                    and s1[key] < v:
                back.append((name, dict(key[1]), v, s1[key]))
            if key not in s1:
                back.append((name, dict(key[1]), v, None))
    if back: bad("%s: counters went back or vanished: %s" % (n, back[:5]))
    else: ok("%s: no counter went back over 4 scrapes" % n)

for n in ("a", "b"):
    links = [v for (s, l), v in scr[n, 2][0].items() if s == "mrcd_port_link_up"]
    if len(links) == 4 and all(v == 1 for v in links): ok("%s: 4 ports, link up" % n)
    else: bad("%s: link up on 4 ports: %s" % (n, links))
    evs = [total(n, 2, "mrcd_plane_evs", plane=str(p)) for p in (1, 2, 3, 4)]
    if all(e is not None and e > 0 for e in evs): ok("%s: live EVs on every plane during the transfer: %s" % (n, evs))
    else: bad("%s: live EVs per plane during the transfer: %s" % (n, evs))
    good = total(n, 2, "mrcd_plane_evs", state="GOOD")
    if good: ok("%s: %d EVs GOOD during the transfer" % (n, good))
    else: bad("%s: no EV GOOD during the transfer (%s)" % (n, good))
    sess = total(n, 2, "mrcd_client_sessions")
    if sess and sess >= 1: ok("%s: %d client session(s) during the transfer" % (n, sess))
    else: bad("%s: client sessions during the transfer: %s" % (n, sess))
    ratio = total(n, 2, "mrcd_worker_busy_ratio")
    if ratio is not None and 0 < ratio <= 1: ok("%s: worker busy ratio %.3f" % (n, ratio))
    else: bad("%s: worker busy ratio %s" % (n, ratio))

# the probe RTT histogram: observations, cumulative buckets, +Inf = _count
cnt = 0
for n in ("a", "b"):
    s = scr[n, 3][0]
    b = sorted(((float(dict(l)["le"]), v) for (name, l), v in s.items() if name == "mrcd_ev_probe_rtt_seconds_bucket"))
    c = total(n, 3, "mrcd_ev_probe_rtt_seconds_count")
    sm = total(n, 3, "mrcd_ev_probe_rtt_seconds_sum")
    if len(b) < 2 or b[-1][0] != math.inf or b[-1][1] != c or any(b[k][1] > b[k + 1][1] for k in range(len(b) - 1)):
        bad("%s: probe RTT histogram malformed: %s count %s" % (n, b, c))
    else:
        ok("%s: probe RTT histogram: %d buckets, %d observations, mean %.1f us" %
           (n, len(b), c, 1e6 * sm / c if c else 0))
    cnt += c or 0
if cnt > 0: ok("EV probe RTTs observed: %d" % cnt)
else: bad("no EV probe RTT observed on either daemon")
print("%d failed" % fails)
sys.exit(1 if fails else 0)
PY
check "the scrapes, judged (above)" test $? -eq 0

# traffic still moves after all that: a second verified transfer
PP2=$(free_ports 1)
proc_start SRV "$PERF" -s "$T/b.sock" --server --port "$PP2" --timeout 60 > "$T/perf2.srv" 2>&1
proc_start CLI "$PERF" -s "$T/a.sock" --client 127.0.0.1 --port "$PP2" --verify --timeout 60 --stats 0 \
	--duration 2 --qps 1 > "$T/perf2.out" 2>&1
wait "$CLI"; rc=$?
wait "$SRV"
check "a second verified transfer after the bad requests" \
	test "$rc" -eq 0 -a -n "$(grep 'completion errors 0, verify errors 0' "$T/perf2.out")"

# libmicrohttpd's one thread (MHD-single), asleep in poll/epoll when idle:
# over this whole test (tens of seconds) it used well under a second of CPU
for n in a b; do
	eval "pid=\$PID_$n"
	mhd=$(grep -l '^MHD' /proc/"$pid"/task/*/comm 2>/dev/null | wc -l)
	ticks=$(for t in /proc/"$pid"/task/*; do
		grep -q '^MHD' "$t/comm" && awk '{print $14 + $15}' "$t/stat"; done | head -1)
	check "$n: one HTTP thread ($mhd), $ticks CPU ticks (< 100: it does not spin)" \
		test "$mhd" -eq 1 -a -n "$ticks" -a "${ticks:-999}" -lt 100
done

stop_daemon a; ra=$?
stop_daemon b; rb=$?
check "both daemons stop cleanly (exit $ra, $rb)" test "$ra" -eq 0 -a "$rb" -eq 0
check "the /metrics port is closed once a has stopped" test "$(code "$(url a)")" = 000
finish
