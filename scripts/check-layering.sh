#!/usr/bin/env bash
# check-layering.sh [TOP] - enforce the dependency wall (docs/architecture.md
# section 1) on the tree at TOP (default: this checkout). Exits 1 on any
# breach, 2 if TOP is not an mrcd tree (a library directory is missing or
# holds no source), so that it cannot pass on nothing. The rules:
#
#   1. lib/core includes only C standard / libc headers and its own, and
#      never reads a clock or calls rand().
#   2. A library includes only its own headers and those of the libraries
#      below it:  core: -;  shm: -;  client: shm;  ctl: core;  dp: core, shm;
#      fabric: client, and of lib/client only its public header
#      (mrc_client.h, PUBLIC below).  So nothing under lib/ includes from
#      app/ (or from a library above it), and no include path climbs with
#      "../".  A project header is one of lib/, app/ or test/lib, included
#      with "..." or, without a path, with <...> (lib/fabric takes
#      <mrc_client.h> as an installed header would be).  Test files
#      (test_*.c) may also include the harness of test/lib.
#   3. lib/core, lib/shm, lib/client, lib/ctl and lib/fabric never reach DPDK,
#      directly or through a header they include; in lib/dp only the files
#      of its DPDK part do (DP_DPDK_FILES below: a new DPDK file is added
#      there).
#   4. lib/shm, lib/client and lib/fabric include neither libyaml nor
#      jansson (lib/fabric's other headers are libc's and libfabric's).
#   5. No meson.build refers to a file with "../../": each directory reaches
#      others through the variables and dependencies they declare.
set -u
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" 2>/dev/null || { echo "layering: no tree at $top"; exit 2; }
fail=0

LIBS="core shm client ctl dp fabric"
declare -A DEPS=([core]="" [shm]="" [client]="shm" [ctl]="core" [dp]="core shm" [fabric]="client")
# A library listed here is used by the ones above it only through these
# headers (its others are its own business).
declare -A PUBLIC=([client]="mrc_client.h")
DP_DPDK_FILES="dp.c dp_client.c dp_icrc.c dp_port.c dp_rx.c dp_selftest.c dp_time.c dp_tx.c dp_worker.c dp_internal.h dp_log.h test_dp_icrc.c"

breach() { echo "layering: $*"; fail=1; }

for l in $LIBS; do
	if [ ! -d "lib/$l" ] || [ -z "$(find "lib/$l" -name '*.[ch]' -print -quit)" ]; then
		echo "layering: lib/$l is missing or has no C sources: not an mrcd tree"
		exit 2
	fi
done

# The headers each file of lib/ includes, read once (one awk over the tree,
# not a process per file): INC_q[FILE] its "..." ones, INC_a[FILE] its <...>
# ones, INC_p[FILE] its project headers - every "..." and each <name.h>
# (no path) that names a header of lib/, app/ or test/lib. Header names hold
# no blanks; lists are walked with globbing off.
set -f
declare -A projhdr=() INC_q=() INC_a=() INC_p=()
while IFS= read -r h; do projhdr[$h]=1; done < <(find lib app test/lib -name '*.h' -printf '%f\n' 2>/dev/null)
mapfile -t all < <(find lib -name '*.[ch]')
while IFS=$'\t' read -r f k h; do
	if [ "$k" = q ]; then
		INC_q[$f]+="$h "
		INC_p[$f]+="$h "
	else
		INC_a[$f]+="$h "
		[[ "$h" != */* && -n "${projhdr[$h]:-}" ]] && INC_p[$f]+="$h "
	fi
done < <(awk '
	match($0, /^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"/) {
		h = substr($0, RSTART, RLENGTH); sub(/^[^"]*"/, "", h); sub(/"$/, "", h)
		print FILENAME "\tq\t" h; next }
	match($0, /^[[:space:]]*#[[:space:]]*include[[:space:]]*<[^>]+>/) {
		h = substr($0, RSTART, RLENGTH); sub(/^[^<]*</, "", h); sub(/>$/, "", h)
		print FILENAME "\ta\t" h }' "${all[@]}")

# 1. lib/core: libc only, no clock, no rand
allowed='assert|complex|ctype|errno|fenv|float|inttypes|iso646|limits|locale|math|setjmp|signal|stdalign|stdarg|stdatomic|stdbool|stddef|stdint|stdio|stdlib|stdnoreturn|string|tgmath|threads|time|uchar|wchar|wctype|endian|strings'
for f in "${all[@]}"; do
	[[ "$f" == lib/core/* ]] || continue
	for hdr in ${INC_a[$f]:-}; do
		[[ "${hdr%.h}" =~ ^($allowed)$ ]] ||
			breach "lib/core may include only libc headers: $f: <$hdr>"
	done
done
clk=$(grep -rnE 'clock_gettime|gettimeofday|rte_rdtsc|time\(NULL\)|[^_a-z]rand\(|srand\(' lib/core --include='*.[ch]' || true)
[ -n "$clk" ] && breach "lib/core must not read a clock or call rand():"$'\n'"$clk"

# 2. quoted includes resolve inside the library or the ones below it
for l in $LIBS; do
	for f in "${all[@]}"; do
		[[ "$f" == "lib/$l/"* ]] || continue
		base=${f##*/}
		for hdr in ${INC_p[$f]:-}; do
			case "$hdr" in
			*/*) breach "lib/$l: $f includes \"$hdr\" by a path: only headers of lib/$l and ${DEPS[$l]:-nothing else}"
			     continue ;;
			esac
			found=
			[ -e "lib/$l/$hdr" ] && found=1
			for d in ${DEPS[$l]}; do
				[ -e "lib/$d/$hdr" ] || continue
				if [ -n "${PUBLIC[$d]:-}" ] && [[ " ${PUBLIC[$d]} " != *" $hdr "* ]]; then
					breach "lib/$l: $f includes \"$hdr\" (lib/$d/$hdr): of lib/$d it may use only the public header ${PUBLIC[$d]}"
					found=0
				else
					found=1
				fi
			done
			case "$base" in
			test_*.c) [ -e "test/lib/$hdr" ] && found=1 ;;
			esac
			if [ -z "$found" ]; then
				where=$(find lib app test/lib -name "$hdr" 2>/dev/null | head -1)
				breach "lib/$l: $f includes \"$hdr\" (${where:-not found}): lib/$l may use only its own headers and those of ${DEPS[$l]:-no other library}"
			fi
		done
	done
done

# 3. DPDK, directly or through the library headers a file includes. A file
#    is "on DPDK" if it includes <rte_*> / <dpdk/...>, or a project header
#    of lib/ that is; computed to a fixed point.
declare -A ondpdk=()
for f in "${all[@]}"; do
	for hdr in ${INC_a[$f]:-}; do
		[[ "$hdr" == rte_* || "$hdr" == dpdk/* ]] && ondpdk[$f]=1
	done
done
changed=1
while [ "$changed" = 1 ]; do
	changed=0
	for f in "${all[@]}"; do
		[ -n "${ondpdk[$f]:-}" ] && continue
		l=${f#lib/}
		l=${l%%/*}
		for hdr in ${INC_p[$f]:-}; do
			for d in "$l" ${DEPS[$l]:-}; do
				if [ -n "${ondpdk[lib/$d/$hdr]:-}" ]; then
					ondpdk[$f]=1
					changed=1
				fi
			done
		done
	done
done
for f in "${!ondpdk[@]}"; do
	l=${f#lib/}
	l=${l%%/*}
	if [ "$l" = dp ]; then
		case " $DP_DPDK_FILES " in
		*" ${f##*/} "*) ;;
		*) breach "lib/dp: $f reaches DPDK but is not one of its DPDK files ($DP_DPDK_FILES)" ;;
		esac
	else
		breach "lib/$l must stay DPDK-free: $f reaches DPDK"
	fi
done

# 4. no libyaml or jansson in lib/shm, lib/client and lib/fabric
for d in lib/shm lib/client lib/fabric; do
	bad=$(grep -rnE '#[[:space:]]*include[[:space:]]*[<"](yaml|jansson)' "$d" --include='*.[ch]' || true)
	[ -n "$bad" ] && breach "$d must not include libyaml or jansson:"$'\n'"$bad"
done

# 5. no ../../ in a meson.build (build directories are not the tree)
mapfile -t mesons < <(find . \( -path './build*' -o -path './.git' -o -path './subprojects' \) -prune -o -name meson.build -print)
if [ "${#mesons[@]}" -gt 0 ]; then
	while IFS= read -r bad; do
		breach "${bad%%:*} reaches into another directory with ../../ (use its variables): ${bad#*:}"
	done < <(grep -Hn '\.\./\.\./' "${mesons[@]}")
fi

if [ "$fail" -eq 0 ]; then
	echo "layering: ok"
fi
exit "$fail"
