#!/usr/bin/env bash
# Change-notification fan-out benchmark: builds ringd and the sse_fanout
# example, raises the open-file limit, and runs the example, which starts
# its own ringd (that inherits the limit) on loopback.
#
#   benches/load/sse_fanout.sh [--changes 30] [N[:light|:full] ...]
#
# Default scenarios: 1000 10000 1000:full.
set -euo pipefail
cd "$(dirname "$0")/../.."

# Each watcher is one descriptor in the example and one in the server,
# each process with its own limit; 1,024 to spare for everything else.
max=10000
for a in "$@"; do
    n=${a%%:*}
    if [[ $n =~ ^[0-9]+$ ]] && ((n > max)); then max=$n; fi
done
need=$((max + 1024))

hard=$(ulimit -Hn)
want=65536
if [[ $hard != unlimited ]] && ((hard < want)); then want=$hard; fi
ulimit -Sn "$want" 2>/dev/null || true
have=$(ulimit -Sn)
if [[ $have != unlimited ]] && ((have < need)); then
    echo "sse_fanout: $max watchers need $need open files per process; the limit is $have (hard limit $hard)." >&2
    echo "sse_fanout: raise the hard limit (e.g. in /etc/security/limits.conf, or run as root) and retry." >&2
    exit 1
fi
echo "open-file limit: $have (needed: $need)" >&2

cargo build --release
cargo build --release --example sse_fanout
exec target/release/examples/sse_fanout "$@"
