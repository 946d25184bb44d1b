#!/usr/bin/env bash
# check-layering-test.sh CHECK - the layering check (scripts/check-layering.sh)
# on fixture trees: a clean one passes; each kind of breach, planted one at a
# time in a copy of it, fails with a message naming the rule; an empty tree, a
# missing directory and a tree without one of the libraries fail too.
set -u
check=${1:?path to check-layering.sh}
T=$(mktemp -d /tmp/mrcd-layering.XXXXXX)
trap 'rm -rf "$T"' EXIT
PASS=0
FAIL=0
ok() { echo "ok   $*"; PASS=$((PASS + 1)); }
bad() { echo "FAIL $*"; FAIL=$((FAIL + 1)); }

# A small tree with the shape of the real one and every allowed edge.
clean() {
	local d=$1
	mkdir -p "$d"/lib/{core,shm,client,ctl,dp,fabric} "$d"/app/mrcd "$d"/test/lib
	printf '#include <stdint.h>\n#include <string.h>\n' > "$d/lib/core/mrcp_x.h"
	printf '#include "mrcp_x.h"\nint mrcp_x(void) { return 0; }\n' > "$d/lib/core/x.c"
	printf '#include <stdatomic.h>\n' > "$d/lib/shm/mrc_shm.h"
	printf '#include "mrc_shm.h"\n' > "$d/lib/shm/shm.c"
	printf '#include "mrc_shm.h"\n#include <pthread.h>\n' > "$d/lib/client/client.c"
	printf '#include <stdint.h>\n' > "$d/lib/client/mrc_client.h"
	printf '#include "mrc_client.h"\n' > "$d/lib/client/client_internal.h"
	# lib/fabric: lib/client's public header taken as an installed one,
	# libfabric's headers, libc and POSIX
	printf '#include <mrc_client.h>\n#include <rdma/fabric.h>\n#include <pthread.h>\n' > "$d/lib/fabric/mrcfi.h"
	printf '#include "mrcfi.h"\n#include <sys/epoll.h>\n' > "$d/lib/fabric/ep.c"
	printf '#include "mrcfi.h"\n#include "mrcp_test.h"\n' > "$d/lib/fabric/test_mrcfi.c"
	printf '#include <mpi.h>\n' > "$d/lib/fabric/test_mpi.c"
	printf '#include <jansson.h>\n#include <yaml.h>\n#include "mrcp_x.h"\n' > "$d/lib/ctl/ctl_proto.c"
	printf '#include "mrcp_test.h"\n#include "mrcp_x.h"\n' > "$d/lib/ctl/test_ctl_proto.c"
	printf '#include <stdint.h>\n#include "mrcp_x.h"\n#include "mrc_shm.h"\n' > "$d/lib/dp/dp.h"
	printf '#include "dp.h"\n' > "$d/lib/dp/dp_fault.c"
	printf '#include <rte_log.h>\n' > "$d/lib/dp/dp_log.h"
	printf '#include <rte_ethdev.h>\n#include "dp.h"\n#include "dp_log.h"\n' > "$d/lib/dp/dp.c"
	printf '#include <stdio.h>\n' > "$d/test/lib/mrcp_test.h"
	printf '#include "dp.h"\n#include "mrcd_config.h"\n#include <rte_eal.h>\n' > "$d/app/mrcd/main.c"
	printf '#include <yaml.h>\n' > "$d/app/mrcd/mrcd_config.h"
	printf "subdir('lib/core')\n" > "$d/meson.build"
	printf "files('../lib/x.c')\n" > "$d/lib/dp/meson.build"
	# a build directory is not the tree
	mkdir -p "$d/build/x" && printf "files('../../y.c')\n" > "$d/build/x/meson.build"
}

# expect_fail NAME WHAT-THE-MESSAGE-SAYS: the check on $T/t fails with it
expect_fail() {
	local out rc
	out=$(bash "$check" "$T/t" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && grep -qF -- "$2" <<<"$out"; then
		ok "$1: fails ($rc): $(grep -F -- "$2" <<<"$out" | head -1 | cut -c1-120)"
	else
		bad "$1: expected a failure saying \"$2\", got rc $rc: $out"
	fi
}

# breach NAME MESSAGE SHELL-COMMAND: plant one breach in a fresh clean copy
breach() {
	rm -rf "$T/t"
	cp -r "$T/clean" "$T/t"
	(cd "$T/t" && eval "$3")
	expect_fail "$1" "$2"
}

clean "$T/clean"
if out=$(bash "$check" "$T/clean" 2>&1) && grep -q 'layering: ok' <<<"$out"; then
	ok "a clean tree passes"
else
	bad "a clean tree fails: $out"
fi

breach "lib/core includes a system header" "lib/core may include only libc headers" \
	"echo '#include <pthread.h>' >> lib/core/x.c"
breach "lib/core reads a clock" "must not read a clock" \
	"echo 'void f(void) { clock_gettime(0, 0); }' >> lib/core/x.c"
breach "lib/core calls rand()" "must not read a clock or call rand" \
	"echo 'int g(void) { return rand(); }' >> lib/core/x.c"
breach "lib/dp includes a header of app/" "app/mrcd/mrcd_config.h" \
	"echo '#include \"mrcd_config.h\"' >> lib/dp/dp.h"
breach "lib/ctl includes a header of lib/dp (above it)" "lib/ctl may use only its own headers" \
	"echo '#include \"dp.h\"' >> lib/ctl/ctl_proto.c"
breach "an include climbs with ../" "by a path" \
	"echo '#include \"../../app/mrcd/mrcd_config.h\"' >> lib/client/client.c"
breach "lib/ctl includes DPDK" "lib/ctl must stay DPDK-free" \
	"echo '#include <rte_ethdev.h>' >> lib/ctl/ctl_proto.c"
breach "lib/shm reaches DPDK" "lib/shm must stay DPDK-free" \
	"echo '#include <rte_ring.h>' >> lib/shm/mrc_shm.h"
breach "lib/client reaches DPDK through lib/shm's header" "lib/client must stay DPDK-free: lib/client/client.c" \
	"echo '#include <rte_ring.h>' >> lib/shm/mrc_shm.h"
breach "a DPDK-free file of lib/dp reaches DPDK through a header" "lib/dp: lib/dp/dp_fault.c reaches DPDK" \
	"echo '#include \"dp_log.h\"' >> lib/dp/dp_fault.c"
breach "lib/core includes DPDK" "lib/core may include only libc headers" \
	"echo '#include <rte_mbuf.h>' >> lib/core/mrcp_x.h"
breach "lib/client includes jansson" "lib/client must not include libyaml or jansson" \
	"echo '#include <jansson.h>' >> lib/client/client.c"
breach "a meson.build with ../../" "reaches into another directory with ../../" \
	"echo \"files('../../app/mrcd/x.c')\" >> lib/dp/meson.build"
breach "a library without C sources" "lib/ctl is missing or has no C sources" \
	"rm -f lib/ctl/*.c"

# lib/fabric: DPDK-free, lib/client's public header only, nothing of app/
breach "lib/fabric includes a header of app/" "lib/fabric: lib/fabric/ep.c includes \"mrcd_config.h\" (app/mrcd/mrcd_config.h)" \
	"echo '#include \"mrcd_config.h\"' >> lib/fabric/ep.c"
breach "lib/fabric includes a header of app/ with <...>" "lib/fabric: lib/fabric/mrcfi.h includes \"mrcd_config.h\" (app/mrcd/mrcd_config.h)" \
	"echo '#include <mrcd_config.h>' >> lib/fabric/mrcfi.h"
breach "lib/fabric includes lib/client's internal header" "of lib/client it may use only the public header mrc_client.h" \
	"echo '#include \"client_internal.h\"' >> lib/fabric/ep.c"
breach "lib/fabric includes a header of lib/core (not below it)" "lib/fabric may use only its own headers and those of client" \
	"echo '#include <mrcp_x.h>' >> lib/fabric/ep.c"
breach "lib/fabric includes a header of lib/dp" "lib/fabric may use only its own headers and those of client" \
	"echo '#include \"dp.h\"' >> lib/fabric/ep.c"
breach "lib/fabric includes DPDK" "lib/fabric must stay DPDK-free: lib/fabric/ep.c" \
	"echo '#include <rte_mbuf.h>' >> lib/fabric/ep.c"
breach "lib/fabric reaches DPDK through lib/client's header" "lib/fabric must stay DPDK-free: lib/fabric/mrcfi.h" \
	"echo '#include <rte_ring.h>' >> lib/client/mrc_client.h"
breach "lib/fabric includes jansson" "lib/fabric must not include libyaml or jansson" \
	"echo '#include <jansson.h>' >> lib/fabric/ep.c"
breach "lib/fabric climbs with ../" "by a path" \
	"echo '#include \"../client/client_internal.h\"' >> lib/fabric/ep.c"
breach "lib/fabric without C sources" "lib/fabric is missing or has no C sources" \
	"rm -rf lib/fabric"

mkdir -p "$T/empty"
rm -rf "$T/t" && cp -r "$T/empty" "$T/t"
expect_fail "an empty tree" "is missing or has no C sources"
rm -rf "$T/t"
expect_fail "a tree that does not exist" "no tree at"

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ] && [ "$PASS" -gt 0 ]
