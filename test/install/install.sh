#!/usr/bin/env bash
# install.sh - 'meson install' into a DESTDIR gives an operator everything
# and nothing else: the four programs, libmrc-client (.so, .a, header,
# mrc-client.pc), the man pages, the example configurations and examples
# under share/doc/mrcd, mrcd.service with its tmpfiles.d and sysusers.d
# snippets. Then: the examples build against the installed pkg-config file
# alone (PKG_CONFIG_LIBDIR into the DESTDIR, PKG_CONFIG_SYSROOT_DIR) and
# load the installed library; systemd-analyze verify passes the unit (a
# reason is printed and the test is SKIPPED, not passed, where it cannot
# run); the installed programs print meson.build's version; and the
# installed mrcd tells $NOTIFY_SOCKET READY=1 once it serves and STOPPING=1
# on SIGTERM (Type=notify), when built with libsystemd.
# Env: BUILD (build root), VERSION (meson's), MESON, and lib.sh's.
source "$(dirname "$0")/../integration/lib.sh"
BUILD=${BUILD:?build root} VERSION=${VERSION:?project version} MESON=${MESON:?meson}
skipped=()
skip() { echo "skip $*"; skipped+=("$*"); }

D=$T/root
"$MESON" install -C "$BUILD" --no-rebuild --quiet --destdir "$D" > "$T/install.log" 2>&1
check "meson install --destdir" test $? -eq 0 || tail -20 "$T/install.log"
# the installation directories, as configured
"$MESON" introspect --buildoptions "$BUILD" > "$T/opts.json"
opt() { python3 -c "import json,sys; print(next(o['value'] for o in json.load(open(sys.argv[1])) if o['name']==sys.argv[2]))" "$T/opts.json" "$1"; }
prefix=$(opt prefix)
abs() { case $1 in /*) echo "$1" ;; *) echo "$prefix/$1" ;; esac; }
bindir=$(abs "$(opt bindir)") libdir=$(abs "$(opt libdir)") incdir=$(abs "$(opt includedir)")
mandir=$(abs "$(opt mandir)") datadir=$(abs "$(opt datadir)") sysconfdir=$(abs "$(opt sysconfdir)")
unitdir=$(opt systemd_unitdir); [ -n "$unitdir" ] || unitdir=$prefix/lib/systemd/system
doc=$datadir/doc/mrcd
[ -n "$prefix" ] && [ -n "$libdir" ] || { bad "meson introspect gave no prefix/libdir"; finish; exit; }

# ---- the file list: everything expected, nothing else ----
want=(
	"$bindir/mrcd" "$bindir/mrcctl" "$bindir/mrc-perf" "$bindir/mrc-sim"
	"$libdir/libmrc-client.so" "$libdir/libmrc-client.so.0" "$libdir/libmrc-client.so.$VERSION"
	"$libdir/libmrc-client.a" "$libdir/pkgconfig/mrc-client.pc" "$incdir/mrc_client.h"
	"$mandir/man8/mrcd.8" "$mandir/man8/mrcctl.8" "$mandir/man1/mrc-perf.1"
	"$mandir/man1/mrc-sim.1" "$mandir/man5/mrcd.yaml.5"
	"$doc/examples/hello_write.c" "$doc/examples/pingpong.c" "$doc/examples/Makefile"
	"$unitdir/mrcd.service" "$prefix/lib/tmpfiles.d/mrcd.conf" "$prefix/lib/sysusers.d/mrcd.conf"
)
for f in "$TOP"/config/*.yaml; do want+=("$doc/config/$(basename "$f")"); done
missing=""
for f in "${want[@]}"; do [ -e "$D$f" ] || missing="$missing $f"; done
check "all ${#want[@]} expected files installed${missing:+ (missing:$missing)}" test -z "$missing"
# the libfabric provider is installed when it was built; nothing else may be
extra=$(cd "$D" && find . \( -type f -o -type l \) | sed 's#^\.##' | sort | while read -r f; do
	case " ${want[*]} " in *" $f "*) continue ;; esac
	case $f in "$libdir"/libfabric/libmrc-fi.so) continue ;; esac
	echo "$f"
done)
check "nothing else installed${extra:+ (extra: $(echo $extra))}" test -z "$extra"
for f in "${want[@]:0:4}"; do
	[ -x "$D$f" ] || bad "$f is not executable"
done

# ---- the installed programs print meson.build's version ----
for p in mrcd mrcctl mrc-perf mrc-sim; do
	v=$("$D$bindir/$p" --version 2>&1)
	check "installed $p --version: '$v'" test "$v" = "$p $VERSION"
done

# ---- the examples, against the installed mrc-client.pc only ----
cp -r "$D$doc/examples" "$T/ex"
export PKG_CONFIG_LIBDIR=$D$libdir/pkgconfig PKG_CONFIG_PATH= PKG_CONFIG_SYSROOT_DIR=$D
cflags=$(echo $(pkg-config --cflags mrc-client)) libs=$(echo $(pkg-config --libs mrc-client))
check "pkg-config finds the installed mrc-client $VERSION" test "$(pkg-config --modversion mrc-client)" = "$VERSION"
check "its -I and -L point into the DESTDIR ($cflags $libs)" \
	test "$cflags $libs" = "-I$D$incdir -L$D$libdir -lmrc-client"
make -C "$T/ex" CC="${CC:-cc}" CFLAGS="-O2 -Wall -Wextra -Werror -std=gnu11" > "$T/make.log" 2>&1
rc=$?
check "make builds hello_write and pingpong from share/doc/mrcd/examples (exit $rc)" \
	test "$rc" -eq 0 -a -x "$T/ex/hello_write" -a -x "$T/ex/pingpong"
[ "$rc" -eq 0 ] || cat "$T/make.log"
unset PKG_CONFIG_LIBDIR PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
lib=$(LD_LIBRARY_PATH=$D$libdir ldd "$T/ex/hello_write" | awk '/libmrc-client/{print $3}')
check "hello_write loads the installed libmrc-client ($lib)" test "$lib" = "$D$libdir/libmrc-client.so.0"
out=$(LD_LIBRARY_PATH=$D$libdir timeout 20 "$T/ex/hello_write" "$T/nobody.sock" 2>&1); rc=$?
check "hello_write runs and says why without a daemon (exit $rc: $out)" \
	grep -q "mrc_open: .*$T/nobody.sock" <<<"$out"

# ---- mrcd.service, tmpfiles.d, sysusers.d ----
unit=$D$unitdir/mrcd.service
notify=false
[ "$(ldd "$D$bindir/mrcd" | grep -c 'libsystemd\.so')" -gt 0 ] && notify=true
key() { sed -n "s/^$1=//p" "$unit"; }
check "ExecStart runs the installed mrcd with $sysconfdir/mrcd/mrcd.yaml" \
	test "$(key ExecStart)" = "$bindir/mrcd -c $sysconfdir/mrcd/mrcd.yaml"
check "Type=$($notify && echo notify || echo simple) (mrcd linked with libsystemd: $notify)" \
	test "$(key Type)" = "$($notify && echo notify || echo simple)"
check "Restart=on-failure, not on a configuration error (exit 2)" \
	test "$(key Restart)/$(key RestartPreventExitStatus)" = on-failure/2
check "RuntimeDirectory=mrcd for /run/mrcd/mrcd.sock, group mrcd" \
	test "$(key RuntimeDirectory)/$(key Group)" = mrcd/mrcd
check "sysusers.d makes the group mrcd" grep -qx 'g mrcd -' "$D$prefix/lib/sysusers.d/mrcd.conf"
check "tmpfiles.d makes /run/mrcd for the group mrcd" \
	grep -qx 'd /run/mrcd 0750 root mrcd -' "$D$prefix/lib/tmpfiles.d/mrcd.conf"
if ! command -v systemd-analyze >/dev/null; then
	skip "systemd-analyze verify: systemd-analyze is not installed (Debian package systemd)"
else
	# can it verify at all here? A unit that must pass first.
	printf '[Unit]\nDescription=probe\n[Service]\nExecStart=/bin/true\n' > "$T/probe.service"
	if ! out=$(systemd-analyze verify --man=no "$T/probe.service" 2>&1) || [ -n "$out" ]; then
		skip "systemd-analyze verify: cannot verify even a trivial unit here: $out"
	else
		# the same unit with ExecStart in the DESTDIR (verify checks that it
		# is executable); Documentation= resolved against the installed pages
		mkdir -p "$T/unit"
		sed "s#^ExecStart=$bindir/#ExecStart=$D$bindir/#" "$unit" > "$T/unit/mrcd.service"
		out=$(MANPATH=$D$mandir systemd-analyze verify "$T/unit/mrcd.service" 2>&1); rc=$?
		check "systemd-analyze verify mrcd.service: no error, no warning${out:+ ($out)}" \
			test "$rc" -eq 0 -a -z "$out"
		# and it does complain about a bad one (the check can fail)
		printf 'Bogus=1\n' >> "$T/unit/mrcd.service"
		out=$(MANPATH=$D$mandir systemd-analyze verify "$T/unit/mrcd.service" 2>&1)
		check "systemd-analyze verify reports an unknown key" grep -q Bogus <<<"$out"
	fi
fi

# ---- sd_notify: READY=1 once the control socket answers, STOPPING=1 ----
if ! $notify; then
	skip "sd_notify: mrcd was built without libsystemd (-Dsystemd=disabled or no libsystemd-dev): Type=simple"
else
	python3 - "$T/notify.sock" "$T/notify.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as log:
    while True:
        log.write(s.recv(4096).decode().replace("\n", " ") + "\n")
PY
	proc_track $!
	wait_for 20 test -S "$T/notify.sock"
	prefix_tag="mrcd-it-$(basename "$T")-i"
	sed -e "s#\"--file-prefix\", \"mrcd\"#\"--file-prefix\", \"$prefix_tag\"#" \
		"$D$doc/config/mrcd-default.yaml" > "$T/d.yaml"
	printf 'control:\n  socket: %s\n' "$T/d.sock" >> "$T/d.yaml"
	check "the installed default config, with its own prefix and socket" grep -q "$prefix_tag" "$T/d.yaml"
	NOTIFY_SOCKET=$T/notify.sock proc_start pid "$D$bindir/mrcd" -c "$T/d.yaml" > "$T/d.log" 2>&1
	check "the installed mrcd sends READY=1" wait_for -p "$pid" 60 grep -q '^READY=1' "$T/notify.log"
	check "... once its control socket answers" "$D$bindir/mrcctl" -s "$T/d.sock" status
	proc_stop -g 30 "$pid"
	check "it exits 0 on SIGTERM (got $?)" test $? -eq 0
	check "and sent STOPPING=1" grep -q '^STOPPING=1' "$T/notify.log"
fi
finish; rc=$?
if [ "$rc" -eq 0 ] && [ "${#skipped[@]}" -gt 0 ]; then
	echo "SKIPPED (not passed): ${skipped[*]}"
	exit 77
fi
exit "$rc"
