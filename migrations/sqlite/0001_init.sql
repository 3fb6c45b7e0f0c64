-- Schema 1: rings and their retained snapshots.
--
-- `rings` holds one row per ring with the bounds of its retained versions,
-- so the compare-and-swap in a commit and the pruned/not-found decision in
-- a lookup read one small row instead of scanning snapshots.
CREATE TABLE rings (
    name           TEXT    NOT NULL PRIMARY KEY,
    latest_version INTEGER NOT NULL CHECK (latest_version >= 1),
    oldest_version INTEGER NOT NULL CHECK (oldest_version BETWEEN 1 AND latest_version),
    -- RFC 3339; when version 1 was committed.
    created_at     TEXT    NOT NULL
) STRICT;

-- One row per retained version. `snapshot` is the whole snapshot as JSON,
-- the source of truth; `created_at`, `fingerprint` and `change` repeat
-- parts of it so that history can be listed without decoding node lists.
CREATE TABLE snapshots (
    ring        TEXT    NOT NULL REFERENCES rings (name) ON DELETE CASCADE,
    version     INTEGER NOT NULL CHECK (version >= 1),
    created_at  TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,
    change      TEXT    NOT NULL,
    snapshot    TEXT    NOT NULL,
    PRIMARY KEY (ring, version)
) STRICT;
