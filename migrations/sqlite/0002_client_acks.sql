-- Schema 2: client acks.
--
-- One row per (ring, client): the latest version the client reported
-- applying and the fingerprint it computed. Times are Unix nanoseconds
-- (UTC) so that expiry is an integer comparison; `expires_ns` is indexed
-- so expired rows can be purged without a scan. Rows go with their ring
-- through ON DELETE CASCADE.
CREATE TABLE client_acks (
    ring          TEXT    NOT NULL REFERENCES rings (name) ON DELETE CASCADE,
    client_id     TEXT    NOT NULL,
    version       INTEGER NOT NULL CHECK (version >= 1),
    fingerprint   TEXT    NOT NULL,
    last_seen_ns  INTEGER NOT NULL,
    expires_ns    INTEGER NOT NULL,
    PRIMARY KEY (ring, client_id)
) STRICT;

CREATE INDEX client_acks_expiry ON client_acks (expires_ns);
