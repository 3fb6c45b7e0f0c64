#!/usr/bin/env bash
# The HTTP path of a heavy `jump` ring: a live `ringd serve` on loopback
# with a fresh SQLite store, a `jump` ring, and nodes at weight 1,000,000.
# Times each `PUT …/nodes/{node}` and `POST …/lookup` with 100 keys at
# replicas 1 and 3 (curl's time_total, one request after another), then
# a `GET …/snapshot`, which writes the bucket order one id per bucket.
#
#   cargo build --release && benches/load/jump_http.sh [NODES] [ROUNDS]
#
# RINGD_BIN runs another build (default target/release/ringd).
#
# NODES (default 5) nodes are added, then one more is timed as "add one
# node"; ROUNDS (default 5) lookup requests per replica count.
set -euo pipefail
cd "$(dirname "$0")/../.."
nodes=${1:-5}
rounds=${2:-5}
bin=${RINGD_BIN:-target/release/ringd}
[[ -x $bin ]] || { echo "jump_http: build first: cargo build --release" >&2; exit 1; }

dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve --listen "127.0.0.1:$port" --store "sqlite://$dir/ringd.db" >"$dir/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
B=http://127.0.0.1:$port
for _ in $(seq 100); do curl -sf "$B/healthz" >/dev/null && break; sleep 0.1; done

json='content-type: application/json'
curl -sf -X PUT "$B/v1/rings/heavy" -H "$json" -d '{"algorithm":"jump"}' >/dev/null
put() {
    curl -sf -o /dev/null -w '%{time_total}' -X PUT "$B/v1/rings/heavy/nodes/node-$1" \
        -H "$json" -d '{"weight":1000000}'
}
for i in $(seq 0 $((nodes - 1))); do
    echo "PUT node-$i (weight 1000000, now $(((i + 1) * 1000000)) buckets): $(put "$i") s"
done

keys=$(python3 -c 'import json; print(json.dumps([f"user:{i:08}" for i in range(100)]))')
for r in 1 3; do
    for _ in $(seq "$rounds"); do
        t=$(curl -sf -o /dev/null -w '%{time_total}' -X POST "$B/v1/rings/heavy/lookup" \
            -H "$json" -d "{\"keys\":$keys,\"replicas\":$r}")
        echo "POST lookup, 100 keys, replicas $r: $t s"
    done
done
echo "PUT node-$nodes (add one node to $nodes): $(put "$nodes") s"
size=$(curl -sf -o /dev/null -w '%{size_download} bytes in %{time_total}' "$B/v1/rings/heavy/snapshot")
echo "GET snapshot ($(((nodes + 1) * 1000000)) buckets): $size s"
