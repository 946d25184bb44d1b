#!/usr/bin/env bash
# demo.sh - the main job. The two-daemon demo (memif planes, mrc-perf, a plane
# blackholed mid-run) arrives with the daemon and client library; until then
# this sets up, builds, and shows the same story with the real engine on
# virtual time: a transfer through a silent path failure with its figures,
# and the simulator's MRC vs RC comparison under a dead T0-T1 link.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/setup.sh
if [ -f build/build.ninja ]; then
	meson setup --reconfigure build >/dev/null
else
	meson setup build >/dev/null
fi
ninja -C build >/dev/null
echo "== the engine over the test fabric: 4 planes x 25 Gb/s, a path blackholed at 1 ms"
./build/test/sim/test_figures | grep -v '^RUN'
echo
echo "== mrc-sim: 8 hosts, 2 planes, a T0-T1 link silently dead at 50 us"
./build/app/mrc-sim/mrc-sim --scenario test/sim/scenarios/p2p-t0t1-link-down.yaml --transport both
echo
echo "== mrc-sim: permutation traffic, MRC spraying vs RC single path"
./build/app/mrc-sim/mrc-sim --scenario test/sim/scenarios/permutation-8.yaml --transport both
echo
echo "(the two-daemon demo arrives with the daemon: see README.md, Status)"
