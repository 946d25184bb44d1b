#!/usr/bin/env python3
"""dissector_check.py GEN TSHARK LUA - decode the capture dissector_gen
writes with tshark and tools/wireshark/mrc.lua, once with the preferences
of the manifest's run a and once with the defaults (run d), and compare
every field of every frame with the manifest: the values lib/core's
encoder was given. Fails on any mismatch, on a frame count that is not the
manifest's, on a Lua error or an exception (malformed) in any frame, and
when a field or expert info the dissector defines is checked by no frame
(so a field added to mrc.lua needs a frame here too)."""
import ipaddress
import subprocess
import sys
import tempfile


def die(msg):
    print(msg)
    sys.exit(1)


def norm(x):
    """A value as tshark prints it or the manifest states it, comparable."""
    if x in ("True", "False"):
        return int(x == "True")
    try:
        return int(x, 0)
    except ValueError:
        pass
    if ":" in x:
        try:
            return ipaddress.ip_address(x)
        except ValueError:
            pass
    return x


def same(got, want):
    if want.startswith("^"):
        return got.startswith(want[1:])
    g, w = got.split("|"), want.split("|")
    return len(g) == len(w) and all(norm(a) == norm(b) for a, b in zip(g, w))


def mrc_fields(tshark, lua):
    """(value fields, expert fields) that mrc.lua registers."""
    out = subprocess.run([tshark, "-G", "fields", "-X", "lua_script:" + lua],
                         capture_output=True, text=True, check=True).stdout
    values, experts = [], []
    for line in out.splitlines():
        c = line.split("\t")
        if c[0] != "F" or c[4] != "mrc":
            continue
        (experts if c[3] == "FT_NONE" else values).append(c[2])
    if len(values) < 100 or len(experts) < 10:
        die(f"tshark lists {len(values)} mrc fields and {len(experts)} expert infos: is {lua} loaded?")
    return values, experts


def decode(tshark, lua, pcap, opts, fields):
    cmd = [tshark, "-r", pcap, "-X", "lua_script:" + lua, *opts, "-T", "fields",
           "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=|", "-E", "quote=n",
           "-e", "frame.number", "-e", "_ws.malformed", "-e", "_ws.lua.error"]
    for f in fields:
        cmd += ["-e", f]
    r = subprocess.run(cmd, capture_output=True, text=True)
    err = "\n".join(l for l in r.stderr.splitlines() if "Running as user" not in l)
    if r.returncode != 0 or "Lua" in err:
        die(f"tshark failed (exit {r.returncode}): {err}")
    rows = {}
    for line in r.stdout.splitlines():
        c = line.split("\t")
        if len(c) != len(fields) + 3:
            die(f"tshark printed {len(c)} columns, want {len(fields) + 3}: {line[:200]}")
        rows[int(c[0])] = c
    return rows


def main():
    gen, tshark, lua = sys.argv[1:4]
    with tempfile.TemporaryDirectory(prefix="mrcd-dissector.") as work:
        pcap, manifest = work + "/mrc.pcap", work + "/mrc.manifest"
        subprocess.run([gen, pcap, manifest], check=True)
        opts, want, nframes = {"d": []}, [], None
        for line in open(manifest):
            c = line.rstrip("\n").split("\t")
            if c[0] == "P":
                opts[c[1]] = c[2].split()
            elif c[0] == "N":
                nframes = int(c[1])
            elif c[0] in ("a", "d", "*"):
                want.append((c[0], int(c[1]), c[2], c[3]))
        if nframes is None or not want or "a" not in opts:
            die("the manifest is incomplete")

        values, experts = mrc_fields(tshark, lua)
        extra = sorted({f for _, _, f, _ in want if f not in ("experts", "malformed") and f not in values})
        fields = values + experts + extra
        col = {f: i + 3 for i, f in enumerate(fields)}
        checked, raised, bad, n = set(), set(), 0, 0
        for run in ("a", "d"):
            rows = decode(tshark, lua, pcap, opts[run], fields)
            if sorted(rows) != list(range(1, nframes + 1)):
                die(f"run {run}: tshark decoded frames {sorted(rows)[:5]}..., want 1..{nframes}")
            malformed = {no: "0" for no in rows}
            for r, no, field, value in want:
                if field == "malformed" and r in ("*", run):
                    malformed[no] = value
            for no, row in rows.items():
                if row[2]:
                    bad += 1
                    print(f"run {run} frame {no}: Lua error")
                if str(int(bool(row[1]))) != malformed[no]:
                    bad += 1
                    print(f"run {run} frame {no}: malformed = {int(bool(row[1]))}, want {malformed[no]}")
            for r, no, field, value in want:
                if r not in ("*", run) or field == "malformed":
                    continue
                row, n = rows[no], n + 1
                if field == "experts":
                    got = ",".join(sorted(e for e in experts if row[col[e]]))
                    exp = ",".join(sorted(value.split(","))) if value else ""
                    ok = got == exp
                    raised |= set(exp.split(",")) - {""}
                else:
                    got, exp = row[col[field]], value
                    ok = got == "" if exp == "-" else same(got, exp)
                    if ok and exp != "-":
                        checked.add(field)
                if not ok:
                    bad += 1
                    print(f"run {run} frame {no}: {field} = '{got[:80]}', want '{exp[:80]}'")
        missing = [f for f in values if f not in checked] + [e for e in experts if e not in raised]
        for f in missing:
            print(f"not checked by any frame: {f}")
        print(f"{nframes} frames x 2 runs, {n} checks, {bad} wrong; "
              f"{len(values)} fields and {len(experts)} expert infos, {len(missing)} unchecked")
        sys.exit(1 if bad or missing else 0)


main()
