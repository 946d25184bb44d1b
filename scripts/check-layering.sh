#!/usr/bin/env bash
# check-layering.sh - enforce the dependency wall (docs/architecture.md):
#   lib/core   includes only C standard / libc headers (and its own headers);
#   lib/shm    and lib/client never include DPDK.
# Also: lib/core never reads a clock or calls rand(). Exits 1 on any breach.
set -u
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 2
fail=0

# Headers lib/core may include with <...>. Anything else (rte_*, yaml, jansson,
# pthread, sys/*, unistd, ...) is a breach.
allowed='assert|complex|ctype|errno|fenv|float|inttypes|iso646|limits|locale|math|setjmp|signal|stdalign|stdarg|stdatomic|stdbool|stddef|stdint|stdio|stdlib|stdnoreturn|string|tgmath|threads|time|uchar|wchar|wctype|endian|strings'
if [ -d lib/core ]; then
	while IFS= read -r line; do
		hdr=$(sed -nE 's/.*#[[:space:]]*include[[:space:]]*<([^>]+)>.*/\1/p' <<<"$line")
		[ -z "$hdr" ] && continue
		base=${hdr%.h}
		if ! grep -qxE "($allowed)" <<<"$base"; then
			echo "layering: lib/core may include only libc headers: $line"
			fail=1
		fi
	done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<' lib/core --include='*.[ch]' || true)
	# Quoted includes must name a header inside lib/core itself.
	while IFS= read -r line; do
		hdr=$(sed -nE 's/.*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/p' <<<"$line")
		[ -z "$hdr" ] && continue
		if [ ! -e "lib/core/$hdr" ]; then
			echo "layering: lib/core includes a header from outside lib/core: $line"
			fail=1
		fi
	done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' lib/core --include='*.[ch]' || true)
	clk=$(grep -rnE 'clock_gettime|gettimeofday|rte_rdtsc|time\(NULL\)|[^_a-z]rand\(|srand\(' lib/core --include='*.[ch]' || true)
	if [ -n "$clk" ]; then
		echo "layering: lib/core must not read a clock or call rand():"
		echo "$clk"
		fail=1
	fi
fi
for d in lib/shm lib/client; do
	[ -d "$d" ] || continue
	bad=$(grep -rnE '#[[:space:]]*include[[:space:]]*[<"](rte_|dpdk/|yaml|jansson)' "$d" --include='*.[ch]' || true)
	if [ -n "$bad" ]; then
		echo "layering: $d must not include DPDK, libyaml or jansson:"
		echo "$bad"
		fail=1
	fi
done
if [ "$fail" -eq 0 ]; then
	echo "layering: ok"
fi
exit "$fail"
