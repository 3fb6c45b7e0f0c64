"""Schemathesis hooks for ./.ci/schemathesis.

Every write to a ring may carry an optimistic-concurrency precondition,
`If-Match: "<version>"` or `expected_version=<version>` (both must then
name the same version), and it holds only when it names the version the
ring is at now. No schema can say which version that is: it depends on
what the run has done so far. So almost every precondition generated
from the schema is stale, and the write is refused with 412 (or 400 when
the header and the field disagree). Those refusals are what a correct
server must answer, and tests/api_versions.rs and tests/api_preconditions.rs
check them exactly.

Here, just before each call, a case that schemathesis generated as valid
gets the precondition a correct client would send: each precondition it
carries is set to the ring's current version, read from the server. Cases
generated as invalid are sent as they are. Nothing else is changed, and a
ring that does not exist is left alone (the write must answer 404).
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


def is_positive(case):
    meta = case.meta
    return meta is not None and meta.generation.mode == GenerationMode.POSITIVE


@schemathesis.hook
def before_call(context, case, kwargs):
    if case.method.upper() not in ("PUT", "POST", "DELETE") or not is_positive(case):
        return
    ring = (case.path_parameters or {}).get("ring")
    if not isinstance(ring, str):
        return
    headers = case.headers or {}
    query = case.query or {}
    body = case.body if isinstance(case.body, dict) else {}
    carries = (
        any(k.lower() == "if-match" for k in headers)
        or "expected_version" in query
        or "expected_version" in body
    )
    if not carries:
        return
    version = current_version(ring)
    if version is None:
        return
    for k in list(headers):
        if k.lower() == "if-match":
            headers[k] = f'"{version}"'
    if "expected_version" in query:
        query["expected_version"] = version
    if "expected_version" in body:
        body["expected_version"] = version
