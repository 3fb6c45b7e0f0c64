#!/usr/bin/env bash
# Lease benchmark: starts the servers on loopback in a temporary
# directory, runs the lease_load example against them with their pids
# (and etcd's metrics URL), and removes everything afterwards.
#
#   benches/load/lease_load.sh sqlite [lease_load options...]
#   benches/load/lease_load.sh etcd   [lease_load options...]
#
# sqlite: one `ringd serve` on a SQLite file.
# etcd:   one single-member etcd (from PATH; `.ci/setup --test` installs
#         it) and two `ringd serve` instances on it, the nodes spread over
#         both (`--route sticky`; pass `--route rotate` to renew each lease
#         through the other instance too). Set-up changes are 125 nodes
#         each, under etcd's default --max-txn-ops of 128.
#
# Defaults of the example: 10,000 nodes renewing every 3 s with a 10 s TTL,
# a 60 s steady phase; e.g. `--nodes 1000 --duration 20s` for a short run,
# `--drain-after 5s` to time a dead node's drain. RINGD_BIN runs another
# server build (default target/release/ringd). Needs curl and python3
# besides etcd (`.ci/setup --test` installs all three).
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-}
case "$mode" in
  sqlite | etcd) shift ;;
  *) echo "usage: $0 sqlite|etcd [lease_load options...]" >&2; exit 2 ;;
esac

cargo build --release --locked
cargo build --release --locked --example lease_load
bin=${RINGD_BIN:-target/release/ringd}
load=target/release/examples/lease_load

dir=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Waits for a URL to answer 2xx, or fails naming the log to read.
wait_for() {
  for _ in $(seq 300); do
    curl -sf "$1" >/dev/null && return 0
    sleep 0.1
  done
  echo "lease_load: $1 did not answer; its log:" >&2
  cat "$2" >&2
  exit 1
}

# Starts `ringd serve` on STORE with log file LOG; sets $url and $pid.
# Its output goes through a pipe to a `cat` that writes the log file, so
# the log's writes (a line per request at the default level) are that
# process's, and ringd's own storage writes are its store's alone.
start_ringd() {
  local port pipe=$2.pipe
  port=$(free_port)
  mkfifo "$pipe"
  cat "$pipe" >"$2" &
  pids+=("$!")
  "$bin" serve --listen "127.0.0.1:$port" --store "$1" >"$pipe" 2>&1 &
  pid=$!
  pids+=("$pid")
  url=http://127.0.0.1:$port
  wait_for "$url/healthz" "$2"
}

args=()
if [[ $mode == sqlite ]]; then
  start_ringd "sqlite://$dir/ringd.db" "$dir/ringd.log"
  args+=(--url "$url" --pid "ringd=$pid")
  args+=(--store-file "$dir/ringd.db" --store-file "$dir/ringd.db-wal" --store-file "$dir/ringd.db-shm")
else
  command -v etcd >/dev/null || { echo "lease_load: etcd is not on PATH (.ci/setup --test installs it)" >&2; exit 1; }
  client=http://127.0.0.1:$(free_port)
  peer=http://127.0.0.1:$(free_port)
  etcd --name=bench --data-dir="$dir/etcd" \
    --listen-client-urls="$client" --advertise-client-urls="$client" \
    --listen-peer-urls="$peer" --initial-advertise-peer-urls="$peer" \
    --initial-cluster="bench=$peer" --logger=zap --log-level=warn >"$dir/etcd.log" 2>&1 &
  etcd_pid=$!
  pids+=("$etcd_pid")
  wait_for "$client/health" "$dir/etcd.log"
  store=etcd://${client#http://}
  start_ringd "$store" "$dir/ringd-a.log"
  args+=(--url "$url" --pid "ringd-a=$pid")
  start_ringd "$store" "$dir/ringd-b.log"
  args+=(--url "$url" --pid "ringd-b=$pid" --pid "etcd=$etcd_pid")
  args+=(--etcd-metrics "$client/metrics" --batch 125)
fi

status=0
"$load" "${args[@]}" "$@" || status=$?
if ((status != 0)); then
  for log in "$dir"/*.log; do
    echo "--- $(basename "$log") (last 20 lines)" >&2
    tail -n 20 "$log" >&2
  done
fi
exit "$status"
