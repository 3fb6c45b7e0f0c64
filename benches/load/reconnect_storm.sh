#!/usr/bin/env bash
# Reconnect storm: builds ringd, the reconnect_storm tool and the follower
# program of the client asked for, then runs the tool with the arguments
# given (see benches/load/reconnect_storm/main.rs), for example
#
#   benches/load/reconnect_storm.sh --followers 10000 --client go
#   benches/load/reconnect_storm.sh --followers 10000 --client python --protocol long-poll
#
# The Go follower is built into target/reconnect_storm/; the JavaScript one
# needs clients/js's packages and the Python one the venv that
# .ci/js-client and .ci/python-client make (both are made here if missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
client=rust
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --client) client="${args[i + 1]:-}" ;;
    --client=*) client="${args[i]#--client=}" ;;
  esac
done
cargo build --release --locked --bin ringd --example reconnect_storm
case "$client" in
  go)
    mkdir -p target/reconnect_storm
    (cd clients/go/benchmarks && go build -o ../../../target/reconnect_storm/go-followers ./followers)
    ;;
  js)
    [ -d clients/js/node_modules ] || npm ci --prefix clients/js --no-audit --no-fund
    ;;
  python)
    if [ ! -x target/python-client-venv/bin/python ]; then
      python3 -m venv target/python-client-venv
      target/python-client-venv/bin/pip install --quiet ./clients/python
    fi
    ;;
esac
exec target/release/examples/reconnect_storm "$@"
