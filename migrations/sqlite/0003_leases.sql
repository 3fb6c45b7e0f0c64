-- Schema 3: the leases of self-registered nodes.
--
-- One row per (ring, node) that registered with a lease: its id (32
-- lowercase hex digits), its TTL in milliseconds, and when it was released
-- (Unix nanoseconds, UTC; NULL while it is not). Deadlines are not stored:
-- they live in memory, so a renewal never writes here. A row is written
-- only when a registration creates or changes a lease, and on release; at
-- start-up every live lease gets a fresh deadline of one TTL. Rows go with
-- their ring through ON DELETE CASCADE.
CREATE TABLE leases (
    ring         TEXT    NOT NULL REFERENCES rings (name) ON DELETE CASCADE,
    node         TEXT    NOT NULL,
    lease_id     TEXT    NOT NULL CHECK (length(lease_id) = 32),
    ttl_ms       INTEGER NOT NULL CHECK (ttl_ms > 0),
    released_ns  INTEGER,
    PRIMARY KEY (ring, node)
) STRICT;
