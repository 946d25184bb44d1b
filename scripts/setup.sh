#!/usr/bin/env bash
# setup.sh - install what mrcd needs to build and test on a Debian 12 machine,
# reserve 2 MiB hugepages when possible, and print the memory mode tests use.
# Idempotent and non-interactive: a package already installed is not touched,
# and apt-get runs only when something is missing.
set -euo pipefail

PKGS=(
	# build
	meson ninja-build pkg-config gcc clang
	# DPDK 22.11 (dpdk-testpmd is in dpdk-dev) and the daemon's libraries
	dpdk dpdk-dev libdpdk-dev libnuma-dev libjansson-dev libyaml-dev
	# fuzzing and sanitizer runtimes for clang
	libclang-rt-14-dev
	# tests: frame decoding, memory checks, namespaces, impairments
	tshark python3 valgrind iproute2 nftables procps
	# the libfabric provider (lib/fabric), fi_pingpong, Open MPI over it
	libfabric-dev libfabric-bin openmpi-bin libopenmpi-dev
	# PNG plots: scripts/bench/fabric_steps.sh (gnuplot), scripts/demo.sh
	# (matplotlib, else gnuplot)
	gnuplot-nox python3-matplotlib
	# install: sd_notify for mrcd.service's Type=notify (the systemd meson
	# option), the man pages' lint (mandoc -T lint) and the unit's check
	# (systemd-analyze verify, in the systemd package)
	libsystemd-dev mandoc systemd
	# GET /metrics (telemetry.prometheus: libmicrohttpd) and its test's
	# parser of the exposition (test/integration/prometheus.sh)
	libmicrohttpd-dev python3-prometheus-client
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

if [ "${#missing[@]}" -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# tshark asks whether non-root users may capture; answer no, silently.
	echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections 2>/dev/null || true
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
	echo "setup: all packages present"
fi

# Hugepages: reserve 512 x 2 MiB if we may and none are free yet. Tests use
# --in-memory when pages are free and --no-huge otherwise (both need no mount).
nr=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
free_pages() { awk '/HugePages_Free/{print $2}' /proc/meminfo; }
if [ "$(free_pages)" -lt 256 ] && [ -w "$nr" ]; then
	cur=$(cat "$nr")
	echo $((cur + 512)) > "$nr" 2>/dev/null || true
fi
if [ "$(free_pages)" -gt 0 ]; then
	echo "setup: memory mode: --in-memory ($(free_pages) free 2 MiB hugepages)"
else
	echo "setup: memory mode: --no-huge (no free hugepages)"
fi
