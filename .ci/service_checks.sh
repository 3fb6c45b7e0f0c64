# Checks of a running ringd that .ci/packages and .ci/image share, sourced
# by both. The caller sets `base` (the server's URL) and `token` (empty for
# none), and defines `fail MESSAGE`, which prints what it can about the
# server and exits.

# A free loopback port.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

expect() { # what, expected, actual
  [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

# curl with the caller's token, failing on an HTTP error.
ringd_curl() {
  if [ -n "${token:-}" ]; then
    curl -fsS -H "authorization: Bearer $token" "$@"
  else
    curl -fsS "$@"
  fi
}

wait_healthy() {
  for _ in $(seq 1 150); do
    curl -fsS "$base/healthz" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  fail "ringd did not answer /healthz at $base"
}

# The ring `cache` with the node `cache-1`: versions 1 and 2.
write_ring() {
  ringd_curl -X PUT "$base/v1/rings/cache" -H 'content-type: application/json' \
    -d '{"algorithm":"ring"}' >/dev/null
  ringd_curl -X PUT "$base/v1/rings/cache/nodes/cache-1" -H 'content-type: application/json' \
    -d '{"address":"10.0.0.1:11211"}' >/dev/null
}

read_back() { # when
  local node
  node=$(ringd_curl "$base/v1/rings/cache/nodes/cache-1") || fail "$1: the node is gone"
  case "$node" in *'"address":"10.0.0.1:11211"'*) ;; *) fail "$1: the node reads back as $node";; esac
  expect "$1: the ring's version" 2 \
    "$(ringd_curl "$base/v1/rings/cache" | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')"
}
