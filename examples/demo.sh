#!/usr/bin/env bash
# The client library end to end: a ringd on a temporary SQLite store, a
# ring of 4 nodes, a Rust program that routes 100,000 keys through the
# client library (examples/demo_routing.rs), then a 5th node. The program
# sees the new version arrive on its own (no restart, no polling), routes
# the same keys again and checks that about 1/5 of them moved, all to the
# new node.
#
# Run from anywhere in a checkout (Debian/Ubuntu with Rust and curl):
#
#   examples/demo.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ring=demo
keys=${KEYS:-100000}

step() { printf '\n== %s\n' "$*"; }

step "building ringd and the demo program (release)"
cargo build --release --quiet --bin ringd
cargo build --release --quiet --no-default-features --features client --example demo_routing
target=$(cargo metadata --format-version 1 --no-deps 2>/dev/null |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
target=${target:-target}

work=$(mktemp -d)
server_pid=""
demo_pid=""
cleanup() {
    [[ -n $demo_pid ]] && kill "$demo_pid" 2>/dev/null || true
    if [[ -n $server_pid ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step "starting ringd on a free loopback port, SQLite store in a temporary directory"
"$target/release/ringd" serve --listen 127.0.0.1:0 --store "sqlite://$work/ringd.db" \
    >"$work/ringd.out" 2>"$work/ringd.log" &
server_pid=$!
base=""
for _ in $(seq 100); do
    base=$(sed -n 's/^ringd listening on //p' "$work/ringd.out")
    [[ -n $base ]] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/ringd.log" >&2; exit 1; }
    sleep 0.1
done
[[ -n $base ]] || { echo "ringd did not start" >&2; exit 1; }
echo "ringd at $base (pid $server_pid)"

api() { # method path [json body]
    if (($# > 2)); then
        curl -fsS -X "$1" "$base$2" -H 'content-type: application/json' -d "$3"
    else
        curl -fsS -X "$1" "$base$2"
    fi
}
version_of() { sed -n 's/.*"version":\([0-9]*\),"summary".*/\1/p'; }

step "creating ring '$ring' and registering 4 nodes"
api PUT "/v1/rings/$ring" '{"algorithm":"ring"}' >/dev/null
for n in 1 2 3 4; do
    v=$(api PUT "/v1/rings/$ring/nodes/cache-$n" "{\"address\":\"10.0.0.$n:11211\"}" | version_of)
    echo "registered cache-$n -> version $v"
done

step "starting the demo program (routes $keys keys through the client library)"
"$target/release/examples/demo_routing" "$base" "$ring" "$keys" > >(tee "$work/demo.out") &
demo_pid=$!
for _ in $(seq 300); do
    grep -q '^ready at version' "$work/demo.out" 2>/dev/null && break
    kill -0 "$demo_pid" 2>/dev/null || { wait "$demo_pid"; exit 1; }
    sleep 0.1
done
grep -q '^ready at version' "$work/demo.out" || { echo "the demo program did not get ready" >&2; exit 1; }

step "adding a 5th node (the program is not told; its client watches the ring)"
v=$(api PUT "/v1/rings/$ring/nodes/cache-5" '{"address":"10.0.0.5:11211"}' | version_of)
echo "registered cache-5 -> version $v"

status=0
wait "$demo_pid" || status=$?
demo_pid=""

step "what the server says about the change and its clients"
printf '%s\n' "$(api GET "/v1/rings/$ring/diff?from=$((v - 1))&to=$v")" |
    sed -n 's/.*"moved_fraction":\([0-9.eE+-]*\).*/server: diff v'$((v - 1))'->v'$v' moved_fraction \1/p'
printf '%s\n' "$(api GET "/v1/rings/$ring/clients")" |
    sed -n 's/.*"summary":\(.*\)}$/server: client acks \1/p'

if [[ $status -ne 0 ]]; then
    echo "demo FAILED (the program exited with $status)" >&2
    exit "$status"
fi
echo "demo passed"
