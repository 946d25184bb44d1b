#!/usr/bin/env bash
# control.sh - the control socket rejects malformed JSON, unknown commands,
# out-of-range arguments and over-long lines with a JSON error, keeps the
# connection usable, and none of it disturbs a transfer in progress.
source "$(dirname "$0")/lib.sh"

start_pair || { bad "daemons start"; finish; exit 1; }
proc_start st ctl a selftest --peer "$T/b.sock" --bytes 128M --timeout 120 > "$T/st.out" 2>&1

python3 - "$T/a.sock" > "$T/ctl.out" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rwb")
def ask(line):
    f.write(line + b"\n"); f.flush()
    return json.loads(f.readline())
cases = [
    (b"{not json", "EINVAL"),
    (b"[1,2,3]", "EINVAL"),
    (b'{"v":1,"cmd":"no_such_command"}', "ENOENT"),
    (b'{"v":2,"cmd":"status"}', "EPROTO"),
    (b'{"v":1,"cmd":"qp","args":{"qpn":0}}', "EINVAL"),
    (b'{"v":1,"cmd":"qp","args":{"qpn":16777216}}', "EINVAL"),
    (b'{"v":1,"cmd":"fault_set","args":{"port":"plane1","drop_pct":101}}', "EINVAL"),
    (b'{"v":1,"cmd":"port_admin","args":{"port":9,"up":true}}', "ENOENT"),
    (b'{"v":1,"cmd":"qp","args":{"qpn":12345}}', "ENOENT"),
    (b'{"v":1,"cmd":"status","bogus":1}', "EINVAL"),
    (b'x' * 70000, "E2BIG"),
]
bad = 0
for line, code in cases:
    r = ask(line)
    good = r.get("ok") is False and r["error"]["code"] == code and r["error"]["reason"]
    print(("ok  " if good else "BAD ") + code + " " + json.dumps(r)[:150])
    bad += not good
r = ask(b'{"v":1,"cmd":"status","id":7}')
good = r.get("ok") is True and r.get("id") == 7
print(("ok  " if good else "BAD ") + "still answers after errors")
bad += not good
sys.exit(1 if bad else 0)
PY
check "malformed requests rejected with the right codes" test $? -eq 0
sed 's/^/    /' "$T/ctl.out"
# a client that connects and dies mid-line does not hurt either
python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.send(b'{\"v\":1,'); s.close()" "$T/a.sock"
check "transfer unaffected by control errors" wait "$st"
check "daemon a still answers" ctl a status
finish
