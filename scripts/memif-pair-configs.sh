#!/usr/bin/env bash
# memif-pair-configs.sh DIR TAG - write DIR/a.yaml and DIR/b.yaml: the
# four-plane memif pair of config/four-planes-memif-{a,b}.yaml with its memif
# and control sockets in DIR (DIR/a.sock, DIR/b.sock; the client sockets
# DIR/a-client.sock, DIR/b-client.sock) and DPDK file prefixes
# TAG-a and TAG-b, so several pairs (the demo, benchmarks, tests) never share
# a socket or a runtime directory. The memif sockets are files
# (socket-abstract=no), so DIR's mode decides who can reach the planes.
set -euo pipefail
dir=${1:?directory}
tag=${2:?file-prefix tag}
top=$(cd "$(dirname "$0")/.." && pwd)
for n in a b; do
	sed -e "s#/tmp/mrcd-demo#$dir#g" -e "s#\"mrcd-$n\"#\"$tag-$n\"#" \
		-e "s#socket: .*/mrcd-$n.sock#socket: $dir/$n.sock#" \
		-e "s#client_socket: .*/mrcd-$n-client.sock#client_socket: $dir/$n-client.sock#" \
		"$top/config/four-planes-memif-$n.yaml" > "$dir/$n.yaml"
done
