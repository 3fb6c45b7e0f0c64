"""The calls the check makes to ringd's HTTP API, for one ring."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from common import Failure, Json, Owners

LOOKUP_BATCH = 10_000  # keys per POST .../lookup, its limit


class RingApi:
    """ringd's HTTP API at url, for the ring named ring."""

    def __init__(self, url: str, ring: str) -> None:
        self.url = url
        self.ring = ring

    def call(self, method: str, path: str, body: Any = None, ok: int = 200) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                status, text = resp.status, resp.read()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read()
        if status != ok:
            raise Failure(f"{method} {path} answered {status}: {text.decode(errors='replace')}")
        return json.loads(text) if text else None

    def create(self, config: Json) -> int:
        answer = self.call("PUT", f"/v1/rings/{self.ring}", config, ok=201)
        return int(answer.get("version", 1))

    def change(self, ops: list[Json]) -> int:
        answer = self.call("POST", f"/v1/rings/{self.ring}/changes", {"ops": ops})
        return int(answer["version"])

    def lookup(self, version: int, keys: list[str]) -> list[Json]:
        """Each key's result at version (`owner`, absent when it has none,
        and `hash`, the key's hash as a decimal string)."""
        out: list[Json] = []
        for i in range(0, len(keys), LOOKUP_BATCH):
            batch = keys[i : i + LOOKUP_BATCH]
            body = {"keys": batch, "replicas": 1, "version": version}
            answer = self.call("POST", f"/v1/rings/{self.ring}/lookup", body)
            if answer["version"] != version:
                got = answer["version"]
                raise Failure(f"{self.ring}: lookup at version {version} answered version {got}")
            results = answer["results"]
            if [r["key"] for r in results] != batch:
                raise Failure(
                    f"{self.ring}: lookup at version {version} answered other keys "
                    "than it was asked"
                )
            out.extend(results)
        return out

    def owners(self, version: int, keys: list[str]) -> Owners:
        """The owner of each key at version (None when it has none)."""
        return [r.get("owner") for r in self.lookup(version, keys)]

    def client(self, client_id: str) -> Json | None:
        """The ring's client client_id as GET .../clients shows it."""
        for c in self.call("GET", f"/v1/rings/{self.ring}/clients")["clients"]:
            if c.get("client_id") == client_id:
                return dict(c)
        return None

    def snapshot(self, version: int) -> Json:
        return dict(self.call("GET", f"/v1/rings/{self.ring}/snapshots/{version}"))
