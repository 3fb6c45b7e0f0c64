#!/usr/bin/env bash
# Watcher load: builds ringd and the watch_load example and runs it with
# the arguments given (see benches/load/watch_load/main.rs), for example
#
#   benches/load/watch_load.sh --watchers 100000 --rings 100 --store etcd
#   benches/load/watch_load.sh --watchers 10000 --protocol long-poll
#
# The example raises its open-file limits itself (the hard one too, which
# takes root, past the hard limit it was started with); the ringd it
# starts inherits them.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --locked --bin ringd --example watch_load
exec target/release/examples/watch_load "$@"
