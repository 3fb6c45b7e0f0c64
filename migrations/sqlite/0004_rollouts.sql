-- Schema 4: rollouts, a change applied in paced steps.
--
-- One row per rollout: its number within the ring (1, 2, 3 …), whether it
-- is still active, the revision its last write made (each write names the
-- one it read), and the record as JSON. At most one active rollout per
-- ring, which the partial unique index enforces. Rows go with their ring
-- through ON DELETE CASCADE.
CREATE TABLE rollouts (
    ring      TEXT    NOT NULL REFERENCES rings (name) ON DELETE CASCADE,
    id        INTEGER NOT NULL CHECK (id > 0),
    active    INTEGER NOT NULL CHECK (active IN (0, 1)),
    revision  INTEGER NOT NULL CHECK (revision > 0),
    record    TEXT    NOT NULL,
    PRIMARY KEY (ring, id)
) STRICT;

CREATE UNIQUE INDEX rollouts_one_active ON rollouts (ring) WHERE active = 1;
