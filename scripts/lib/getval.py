#!/usr/bin/env python3
"""getval.py - read one value for a check, or fail saying which one is missing.

    getval.py json FILE PATH [--null VALUE | --str]
    getval.py many FILE PREFIX KEY...
    getval.py word FILE PREFIX KEY [--str | --dash]

json: FILE is a JSON document ("-" for stdin); PATH is dot-separated: a name
is an object member, an integer an array index, and NAME[KEY=VALUE] the one
element of array NAME whose KEY is VALUE (e.g. runs[transport=mrc].finish_ns).
The value must be a number (true/false are not); a JSON null is refused
unless --null gives what to print for it (an unfinished run's finish_ns).
With --str the value must be a non-empty string instead (an EV's state).

many: the numbers at PREFIX.KEY for each KEY, read at once (one process
for a check that judges many figures of one run), printed as "KEY VALUE"
lines; each KEY that is missing, null or not a number is named on stderr
and has no line, and the exit status is 1.

word: the value after the word KEY on the one line of FILE that starts with
the words PREFIX, for the figures mrc-sim prints but does not put in --json
(e.g. PREFIX "mrc failover_us", KEY failover_us). A number, unless --str
(any word) or --dash (a number or "-").

Prints the value and exits 0; otherwise exits 1 with "getval: FILE: PATH:
why" on stderr and prints nothing, so that a verdict built on it fails.
"""
import json
import math
import re
import sys

NUM = re.compile(r"^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$")


def fail(src, what, why):
    sys.stderr.write("getval: %s: %s: %s\n" % (src, what, why))
    sys.exit(1)


def is_number(v):
    return (isinstance(v, (int, float)) and not isinstance(v, bool)
            and not (isinstance(v, float) and (math.isnan(v) or math.isinf(v))))


def step(src, path, cur, comp):
    m = re.fullmatch(r"([^\[\]]*)\[([^=\]]+)=([^\]]*)\]", comp)
    if m:
        name, key, want = m.groups()
        if name:
            cur = step(src, path, cur, name)
        if not isinstance(cur, list):
            fail(src, path, "%s is not an array" % (name or comp))
        hits = [e for e in cur if isinstance(e, dict) and key in e
                and (e[key] if isinstance(e[key], str) else json.dumps(e[key])) == want]
        if len(hits) != 1:
            fail(src, path, "%d elements with %s=%s, not one" % (len(hits), key, want))
        return hits[0]
    if isinstance(cur, list):
        if not re.fullmatch(r"-?[0-9]+", comp):
            fail(src, path, "%s: an array needs an index" % comp)
        i = int(comp)
        if not -len(cur) <= i < len(cur):
            fail(src, path, "index %d: the array has %d elements" % (i, len(cur)))
        return cur[i]
    if not isinstance(cur, dict):
        fail(src, path, "%s: not an object" % comp)
    if comp not in cur:
        fail(src, path, "missing key %s" % comp)
    return cur[comp]


def load(src, what):
    """The JSON document in @src ("-": stdin), or fail naming @what."""
    try:
        text = sys.stdin.read() if src == "-" else open(src).read()
    except OSError as e:
        fail(src, what, e.strerror)
    try:
        return json.loads(text)
    except ValueError as e:
        fail(src, what, "not JSON (%s)" % e)


def walk(src, doc, path):
    for comp in re.findall(r"(?:[^.\[]|\[[^\]]*\])+", path):
        doc = step(src, path, doc, comp)
    return doc


def number(src, path, cur):
    """@cur as printed, or fail: it is not a number."""
    if not is_number(cur):
        fail(src, path, "not a number: %s" % json.dumps(cur)[:60])
    return repr(cur) if isinstance(cur, float) else str(cur)


def do_json(args):
    if not (len(args) == 2 or (len(args) == 4 and args[2] == "--null")
            or (len(args) == 3 and args[2] == "--str")):
        usage()
    src, path = args[0], args[1]
    cur = walk(src, load(src, path), path)
    if cur is None and len(args) == 4:
        print(args[3])
        return
    if len(args) == 3:
        if not isinstance(cur, str) or cur == "":
            fail(src, path, "not a non-empty string: %s" % json.dumps(cur)[:60])
        print(cur)
        return
    print(number(src, path, cur))


def do_many(args):
    if len(args) < 3:
        usage()
    src, prefix, keys = args[0], args[1], args[2:]
    doc = load(src, prefix)
    bad = 0
    for key in keys:
        path = prefix + "." + key
        try:  # fail() exits: here it ends this key only
            v = number(src, path, walk(src, doc, path))
        except SystemExit:
            bad = 1
            continue
        print(key, v)
    sys.exit(bad)


def do_word(args):
    if len(args) not in (3, 4) or (len(args) == 4 and args[3] not in ("--str", "--dash")):
        usage()
    src, prefix, key = args[0], args[1].split(), args[2]
    what = "%s ... %s" % (" ".join(prefix), key)
    try:
        lines = open(src).read().splitlines()
    except OSError as e:
        fail(src, what, e.strerror)
    hits = [l.split() for l in lines if l.split()[:len(prefix)] == prefix]
    if len(hits) != 1:
        fail(src, what, "%d lines start with '%s', not one" % (len(hits), " ".join(prefix)))
    w = hits[0]
    if key not in w or w.index(key) + 1 >= len(w):
        fail(src, what, "no value after %s" % key)
    v = w[w.index(key) + 1]
    mode = args[3] if len(args) == 4 else ""
    if mode == "--str" or (mode == "--dash" and v == "-") or NUM.match(v):
        print(v)
        return
    fail(src, what, "not a number: %s" % v)


def usage():
    sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
    sys.exit(2)


if __name__ == "__main__":
    modes = {"json": do_json, "many": do_many, "word": do_word}
    if len(sys.argv) < 2 or sys.argv[1] not in modes:
        usage()
    modes[sys.argv[1]](sys.argv[2:])
