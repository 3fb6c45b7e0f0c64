"""Schemathesis hooks for ./.ci/schemathesis.

Every write to a ring may carry an optimistic-concurrency precondition,
`If-Match: "<version>"` or `expected_version=<version>` (both must then
name the same version), and it holds only when it names the version the
ring is at now. No schema can say which version that is: it depends on
what the run has done so far. So almost every precondition generated
from the schema is stale, and the write is refused with 412 (or 400 when
the header and the field disagree). Those refusals are what a correct
server must answer, and tests/api/versions.rs and tests/api/preconditions.rs
check them exactly.

Four rules of a ring's configuration cannot be said in JSON Schema either,
so the document states them in prose: `ketama` hashes with `md5` only; a
`maglev` table size is prime (the permutations Maglev fills its table
with need it); a `set_config` to `table` names its `partitions`, and
one to `maglev` its `table_size`; and a
table's partitions × replicas are at most 2^23. A configuration generated from the schema breaks them most
of the time, and is refused with 400 naming the field; tests/api/errors*.rs
and the placement tests check those refusals.

A lookup, too, takes its key as exactly one of two query parameters,
`key` or `key_b64`, which OpenAPI cannot say of parameters. And how
many steps a rollout's change can take depends on the ring and the
change, not on the request: a `jump` ring, a new config or a re-labelled
node takes one step, a `ketama` node as many as its weight changes by, a
fraction per step may be out of reach within 100 steps, and the per-node
cap is for `table` rings only. The document says so in prose (each such
request is refused with 422 or 400 naming the field, which
tests/api/rollouts.rs checks), so a generated policy is paced with
`steps: 1`, which every change takes.

Here, just before each call, a case that schemathesis generated as valid
is made into the request a correct client would send: each precondition
it carries is set to the ring's current version, read from the server
(or dropped when the call creates the ring), each configuration it
carries gets `md5` for `ketama` (and a hash of the four general ones
elsewhere), `ring` for a proxy's mode (whose nodes need addresses of the
proxy's form, which no schema can say), the nearest prime for its table size and,
for `table`, partitions (256 when a `set_config` has none, fewer when
there would be too many slots), a table size of 65537 for a `maglev`
`set_config` that has none, and a lookup keeps one of its keys. An
export goes to a ring of the proxy's own mode, which the hook creates
once with one node at an address the proxy takes and keeps so (writes
aimed at it go to another ring; the rings the run makes are `ring`
rings, which no proxy computes: 422, as tests/api/exports.rs checks),
with only the settings of that proxy (the
others are refused with 400 naming them, which no schema can say per
path value). Cases generated as invalid are sent
as they are. Nothing else is changed, and a ring that does not exist is
otherwise left alone (the write must answer 404).

An ack's `failure` names a version newer than the one the ack applied
(a client reports the version it could not move to), with an error a
person can read: not only white space. Neither rule crosses from one
field to another in JSON Schema, so the document says them in prose
and a generated failure gets the applied version plus one and, when
blank, an error text; tests/api/acks.rs checks the refusals.
"""

import json
import os
import urllib.error
import urllib.parse
import urllib.request

import schemathesis
from schemathesis import GenerationMode

BASE = os.environ["RINGD_URL"]
TOKEN = os.environ["RINGD_TOKEN"]


def current_version(ring):
    """The ring's current version, or None if it does not exist."""
    request = urllib.request.Request(
        f"{BASE}/v1/rings/{urllib.parse.quote(ring, safe='')}",
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)["version"]
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        raise


# The settings each export format takes (the others are its 400s).
EXPORT_SETTINGS = {
    "nginx": {"upstream", "key", "keepalive"},
    "haproxy": {"backend", "header"},
    "twemproxy": {"pool", "listen", "redis"},
}


def call(method, path, body):
    """A request to the server under test, its status."""
    request = urllib.request.Request(
        f"{BASE}{path}",
        data=json.dumps(body).encode(),
        method=method,
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


def proxy_ring(format_name):
    """The name of a ring of the proxy's mode with one node, made once."""
    ring = f"export-{format_name}"
    if current_version(ring) is None:
        call("PUT", f"/v1/rings/{ring}", {"algorithm": format_name})
        call("PUT", f"/v1/rings/{ring}/nodes/a", {"address": "10.0.0.1:11211"})
    return ring


def follow_export_rules(case):
    format_name = (case.path_parameters or {}).get("format")
    if format_name not in EXPORT_SETTINGS:
        return
    case.path_parameters["ring"] = proxy_ring(format_name)
    query = case.query or {}
    for name in [n for n in query if n != "version" and n not in EXPORT_SETTINGS[format_name]]:
        del query[name]
    # Version 2, the first with the node: nginx and twemproxy refuse an
    # empty server list.
    if "version" in query:
        query["version"] = 2
    listen = query.get("listen")
    if isinstance(listen, str) and int(listen.rsplit(":", 1)[1]) > 65535:
        query["listen"] = listen.rsplit(":", 1)[0] + ":22121"


MAX_TABLE_SIZE = 1 << 24


def is_prime(n):
    if n < 2:
        return False
    f = 2
    while f * f <= n:
        if n % f == 0:
            return False
        f += 1
    return True


def nearest_prime(n):
    """The first prime at or above `n`, or below it at the top of the range."""
    up = max(n, 2)
    while up <= MAX_TABLE_SIZE:
        if is_prime(up):
            return up
        up += 1
    down = min(n, MAX_TABLE_SIZE)
    while not is_prime(down):
        down -= 1
    return down


# The algorithms that reproduce a proxy, and the hashes the others take.
PROXY_MODES = {"nginx", "haproxy", "twemproxy", "envoy_ring_hash", "envoy_maglev"}
GENERAL_HASHES = {"xxh3", "md5", "sha256", "murmur3"}

# The largest ring size of envoy_ring_hash.
MAX_RING_SIZE = 1 << 23

# Most replica slots a table may have: partitions × replicas.
MAX_TABLE_CELLS = 1 << 23


def follow_config_rules(config, complete=False):
    """Applies the documented rules the schema cannot express. `complete`
    marks a `set_config`, which must name every field of its algorithm."""
    if not isinstance(config, dict):
        return
    if config.get("algorithm") == "table" and complete and "partitions" not in config:
        config["partitions"] = 256
    if config.get("algorithm") == "maglev" and complete and "table_size" not in config:
        config["table_size"] = 65537
    parts, rf = config.get("partitions"), config.get("replication_factor")
    if isinstance(parts, int) and isinstance(rf, int) and parts * rf > MAX_TABLE_CELLS:
        while parts > 256 and parts * rf > MAX_TABLE_CELLS:
            parts //= 2
        config["partitions"] = parts
    if config.get("algorithm") in PROXY_MODES:
        # A proxy's mode asks of the nodes a ring already holds what no
        # schema can say (nginx: an address of its form on every active
        # node; haproxy: weights up to 256; twemproxy: addresses and
        # distinct server names; envoy_ring_hash and envoy_maglev: IP
        # addresses); tests/api checks those refusals.
        config["algorithm"] = "ring"
    # Only haproxy rings take `avalanche`, and only twemproxy rings a
    # `hash_tag`; none is left here.
    config.pop("avalanche", None)
    config.pop("hash_tag", None)
    if config.get("algorithm") == "ketama":
        config["hash"] = "md5"
    elif "hash" in config and "algorithm" not in config:
        # A patch naming only the hash may meet a ketama ring; md5 is the
        # one hash every algorithm left here takes.
        config["hash"] = "md5"
    elif "hash" in config and config["hash"] not in GENERAL_HASHES:
        # A proxy's hash goes with its own mode only.
        config["hash"] = "xxh3"
    # The ring sizes go as a pair with the minimum at most the maximum,
    # so that neither can meet a ring's other one set lower or higher.
    low, high = config.get("minimum_ring_size"), config.get("maximum_ring_size")
    if isinstance(low, int) or isinstance(high, int):
        low = low if isinstance(low, int) and not isinstance(low, bool) else 1
        high = high if isinstance(high, int) and not isinstance(high, bool) else MAX_RING_SIZE
        config["minimum_ring_size"], config["maximum_ring_size"] = min(low, high), max(low, high)
    size = config.get("table_size")
    if isinstance(size, int) and not isinstance(size, bool) and not is_prime(size):
        config["table_size"] = nearest_prime(size)


def is_positive(case):
    meta = case.meta
    return meta is not None and meta.generation.mode == GenerationMode.POSITIVE


def one_key(query):
    """A lookup names its key once: as `key` or as `key_b64`, not both."""
    if "key" in query and "key_b64" in query:
        del query["key_b64"]
    elif "key" not in query and "key_b64" not in query:
        query["key"] = "user:1"


def pace(policy):
    """One step: the pace every change takes, whatever the ring."""
    policy.pop("max_moves_per_node_per_step", None)
    policy.pop("max_moved_fraction_per_step", None)
    policy["steps"] = 1


def follow_ack_rules(body):
    """A failure names a newer version than the ack, with readable text."""
    failure = body.get("failure")
    if not isinstance(failure, dict):
        return
    version = body.get("version")
    # A version may come as an integral float (3.0), which JSON allows.
    if isinstance(version, (int, float)) and not isinstance(version, bool):
        # The largest version has no newer one: ack the one before it.
        version = min(int(version), 2**64 - 2)
        body["version"] = version
        failure["version"] = version + 1
    error = failure.get("error")
    if isinstance(error, str) and not error.strip():
        failure["error"] = "reload failed"


@schemathesis.hook
def before_call(context, case, kwargs):
    if not is_positive(case):
        return
    if case.method.upper() == "GET" and case.path == "/v1/rings/{ring}/export/{format}":
        follow_export_rules(case)
        return
    if case.method.upper() == "GET" and case.path == "/v1/rings/{ring}/lookup":
        if case.query is None:
            case.query = {}
        one_key(case.query)
        return
    if case.method.upper() not in ("PUT", "POST", "DELETE"):
        return
    ring = (case.path_parameters or {}).get("ring")
    if not isinstance(ring, str):
        return
    if ring.startswith("export-"):
        # The export rings stay as made: writes go to a ring of their own.
        ring = case.path_parameters["ring"] = "scratch"
    headers = case.headers or {}
    query = case.query or {}
    body = case.body if isinstance(case.body, dict) else {}
    if case.path == "/v1/rings/{ring}" and case.method.upper() == "PUT":
        follow_config_rules(body)
    if case.path == "/v1/rings/{ring}/clients/{client_id}/ack":
        follow_ack_rules(body)
    if case.path == "/v1/rings/{ring}/rollouts" and isinstance(body.get("policy"), dict):
        pace(body["policy"])
    for op in body.get("ops") or []:
        if isinstance(op, dict):
            follow_config_rules(op.get("config"), op.get("op") == "set_config")
    carries = (
        any(k.lower() == "if-match" for k in headers)
        or "expected_version" in query
        or "expected_version" in body
    )
    if not carries:
        return
    version = current_version(ring)
    if version is None:
        if case.path == "/v1/rings/{ring}" and case.method.upper() == "PUT":
            # No version can hold for a ring that does not exist yet, so a
            # client creating one sends no precondition.
            for k in [k for k in headers if k.lower() == "if-match"]:
                del headers[k]
            query.pop("expected_version", None)
        return
    for k in list(headers):
        if k.lower() == "if-match":
            headers[k] = f'"{version}"'
    if "expected_version" in query:
        query["expected_version"] = version
    if "expected_version" in body:
        body["expected_version"] = version

