#!/usr/bin/env bash
# HTTP lookups against /healthz, with wrk: GET /lookup (one key) and
# POST /lookup (1,000 keys) on a 100-node ring, each round the three
# scenarios in turn, so that the machine's noise falls on all of them.
#
# Usage: benches/load/http_lookup.sh [--seconds N] [--rounds N] [--connections N]
#   Defaults: 4 s per scenario, 5 rounds, 32 connections. Prints each
#   round and the medians; CI runs it with --seconds 1 --rounds 1.
# Needs target/release/ringd (cargo build --release) and wrk (Debian's
# package; installed here when missing, as .ci/setup does).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=4 rounds=5 connections=32
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    *) echo "usage: $0 [--seconds N] [--rounds N] [--connections N]" >&2; exit 2 ;;
  esac
done
command -v wrk >/dev/null || {
  if [ "$(id -u)" -eq 0 ]; then apt-get install -y -qq wrk >/dev/null; else sudo apt-get install -y -qq wrk >/dev/null; fi
}
bin=${RINGD_BIN:-target/release/ringd}
[ -x "$bin" ] || { echo "build it first: cargo build --release" >&2; exit 1; }
scripts=$PWD/benches/load/http_lookup
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
"$bin" serve --listen 127.0.0.1:0 --store "sqlite://$work/ringd.db" >"$work/ringd.log" 2>&1 &
pid=$!
base=
for _ in $(seq 100); do
  base=$(grep -o 'url=http://[0-9.:]*' "$work/ringd.log" | head -1 | cut -d= -f2) && [ -n "$base" ] && break
  sleep 0.1
done
[ -n "$base" ] || { cat "$work/ringd.log" >&2; exit 1; }
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
ops = [{"op": "upsert", "node": {"id": "node-%03d" % i, "address": "10.0.%d.%d:11211" % (i // 250, i % 250)}} for i in range(100)]
json.dump({"ops": ops, "reason": "benchmark"}, open(work + "/ops.json", "w"))
json.dump({"keys": ["user:%08d" % i for i in range(1000)], "replicas": 3}, open(work + "/batch.json", "w"))
PY
curl -fsS -X PUT "$base/v1/rings/bench" -H 'content-type: application/json' -d '{}' >/dev/null
curl -fsS -X POST "$base/v1/rings/bench/changes" -H 'content-type: application/json' -d @"$work/ops.json" >/dev/null
# wrk counts non-2xx answers apart; any is a failed run.
rate() {
  local out
  out=$(BATCH_BODY="$work/batch.json" wrk -t1 -c"$connections" -d"${seconds}s" -s "$scripts/$1.lua" "$base$2")
  if grep -q "Non-2xx" <<<"$out"; then echo "$out" >&2; exit 1; fi
  awk '/Requests\/sec/ {printf "%.0f", $2}' <<<"$out"
}
echo "wrk -t1 -c$connections, ${seconds} s per scenario, $rounds rounds, 100-node ring, loopback"
echo "round  healthz  lookup  lookup/healthz  batch(1,000 keys)"
h=() g=() b=() ratio=()
for r in $(seq "$rounds"); do
  h+=("$(rate healthz /)")
  g+=("$(rate lookup /)")
  b+=("$(rate batch /v1/rings/bench/lookup)")
  ratio+=("$(awk -v g="${g[-1]}" -v h="${h[-1]}" 'BEGIN {printf "%.1f", 100 * g / h}')")
  printf '%5d  %7d  %6d  %13s%%  %17d\n' "$r" "${h[-1]}" "${g[-1]}" "${ratio[-1]}" "${b[-1]}"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
printf 'median %7d  %6d  %13s%%  %17d\n' "$(median "${h[@]}")" "$(median "${g[@]}")" "$(median "${ratio[@]}")" "$(median "${b[@]}")"
