#!/usr/bin/env bash
# demo.sh - the main job. The two-daemon demo (memif planes, mrc-perf, a plane
# blackholed mid-run) arrives with the daemon and client library; until then
# this sets up, builds, and runs the engine's two-node scenarios: transfers
# with loss, trims, an outage and a silent path, on virtual time.
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
echo "mrcd daemon: not built yet; running the engine's two-node scenarios"
./build/test/unit/test_engine
