#!/usr/bin/env bash
# check-layering.sh [TOP] - enforce the dependency wall (docs/architecture.md
# section 1) on the tree at TOP (default: this checkout). Exits 1 on any
# breach, 2 if TOP is not an mrcd tree (a library directory is missing or
# holds no source), so that it cannot pass on nothing. The rules:
#
#   1. lib/core includes only C standard / libc headers and its own, and
#      never reads a clock or calls rand().
#   2. A library includes (with "...") only its own headers and those of the
#      libraries below it:  core: -;  shm: -;  client: shm;  ctl: core;
#      dp: core, shm.  So nothing under lib/ includes from app/ (or from a
#      library above it), and no include path climbs with "../".
#      Test files (test_*.c) may also include the harness of test/lib.
#   3. lib/core, lib/shm, lib/client and lib/ctl never reach DPDK, directly or
#      through a header they include; in lib/dp only the files of its DPDK
#      part do (DP_DPDK_FILES below: a new DPDK file is added there).
#   4. lib/shm and lib/client include neither libyaml nor jansson.
#   5. No meson.build refers to a file with "../../": each directory reaches
#      others through the variables and dependencies they declare.
set -u
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" 2>/dev/null || { echo "layering: no tree at $top"; exit 2; }
fail=0

LIBS="core shm client ctl dp"
declare -A DEPS=([core]="" [shm]="" [client]="shm" [ctl]="core" [dp]="core shm")
DP_DPDK_FILES="dp.c dp_client.c dp_icrc.c dp_port.c dp_rx.c dp_selftest.c dp_time.c dp_tx.c dp_worker.c dp_internal.h dp_log.h test_dp_icrc.c"

breach() { echo "layering: $*"; fail=1; }

for l in $LIBS; do
	if [ ! -d "lib/$l" ] || [ -z "$(find "lib/$l" -name '*.[ch]' -print -quit)" ]; then
		echo "layering: lib/$l is missing or has no C sources: not an mrcd tree"
		exit 2
	fi
done

# includes FILE KIND: the headers FILE includes, KIND q ("...") or a (<...>)
includes() {
	if [ "$2" = q ]; then
		sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/p' "$1"
	else
		sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<([^>]+)>.*/\1/p' "$1"
	fi
}

# 1. lib/core: libc only, no clock, no rand
allowed='assert|complex|ctype|errno|fenv|float|inttypes|iso646|limits|locale|math|setjmp|signal|stdalign|stdarg|stdatomic|stdbool|stddef|stdint|stdio|stdlib|stdnoreturn|string|tgmath|threads|time|uchar|wchar|wctype|endian|strings'
while IFS= read -r f; do
	while IFS= read -r hdr; do
		[ -z "$hdr" ] && continue
		grep -qxE "($allowed)" <<<"${hdr%.h}" ||
			breach "lib/core may include only libc headers: $f: <$hdr>"
	done < <(includes "$f" a)
done < <(find lib/core -name '*.[ch]')
clk=$(grep -rnE 'clock_gettime|gettimeofday|rte_rdtsc|time\(NULL\)|[^_a-z]rand\(|srand\(' lib/core --include='*.[ch]' || true)
[ -n "$clk" ] && breach "lib/core must not read a clock or call rand():"$'\n'"$clk"

# 2. quoted includes resolve inside the library or the ones below it
for l in $LIBS; do
	while IFS= read -r f; do
		base=$(basename "$f")
		while IFS= read -r hdr; do
			[ -z "$hdr" ] && continue
			case "$hdr" in
			*/*) breach "lib/$l: $f includes \"$hdr\" by a path: only headers of lib/$l and ${DEPS[$l]:-nothing else}"
			     continue ;;
			esac
			found=
			for d in "$l" ${DEPS[$l]}; do
				[ -e "lib/$d/$hdr" ] && found=1
			done
			case "$base" in
			test_*.c) [ -e "test/lib/$hdr" ] && found=1 ;;
			esac
			if [ -z "$found" ]; then
				where=$(find lib app -name "$hdr" 2>/dev/null | head -1)
				breach "lib/$l: $f includes \"$hdr\" (${where:-not found}): lib/$l may use only its own headers and those of ${DEPS[$l]:-no other library}"
			fi
		done < <(includes "$f" q)
	done < <(find "lib/$l" -name '*.[ch]')
done

# 3. DPDK, directly or through the library headers a file includes. A file
#    is "on DPDK" if it includes <rte_*> / <dpdk/...>, or a quoted header of
#    lib/ that is; computed to a fixed point.
declare -A ondpdk=()
mapfile -t all < <(find lib -name '*.[ch]')
for f in "${all[@]}"; do
	includes "$f" a | grep -qE '^(rte_|dpdk/)' && ondpdk[$f]=1
done
changed=1
while [ "$changed" = 1 ]; do
	changed=0
	for f in "${all[@]}"; do
		[ -n "${ondpdk[$f]:-}" ] && continue
		dir=$(dirname "$f")
		l=${dir#lib/}
		while IFS= read -r hdr; do
			[ -z "$hdr" ] && continue
			for d in "$l" ${DEPS[$l]:-}; do
				if [ -n "${ondpdk[lib/$d/$hdr]:-}" ]; then
					ondpdk[$f]=1
					changed=1
				fi
			done
		done < <(includes "$f" q)
	done
done
for f in "${!ondpdk[@]}"; do
	l=${f#lib/}
	l=${l%%/*}
	if [ "$l" = dp ]; then
		case " $DP_DPDK_FILES " in
		*" $(basename "$f") "*) ;;
		*) breach "lib/dp: $f reaches DPDK but is not one of its DPDK files ($DP_DPDK_FILES)" ;;
		esac
	else
		breach "lib/$l must stay DPDK-free: $f reaches DPDK"
	fi
done

# 4. no libyaml or jansson in lib/shm and lib/client
for d in lib/shm lib/client; do
	bad=$(grep -rnE '#[[:space:]]*include[[:space:]]*[<"](yaml|jansson)' "$d" --include='*.[ch]' || true)
	[ -n "$bad" ] && breach "$d must not include libyaml or jansson:"$'\n'"$bad"
done

# 5. no ../../ in a meson.build (build directories are not the tree)
while IFS= read -r m; do
	bad=$(grep -n '\.\./\.\./' "$m" || true)
	[ -n "$bad" ] && breach "$m reaches into another directory with ../../ (use its variables):"$'\n'"$bad"
done < <(find . \( -path './build*' -o -path './.git' -o -path './subprojects' \) -prune -o -name meson.build -print)

if [ "$fail" -eq 0 ]; then
	echo "layering: ok"
fi
exit "$fail"
