-- Schema 5: what kind of client acked, and a version it could not apply.
--
-- `kind` is 'library' (an application routing keys itself; every ack
-- written before this schema) or 'proxy' (a proxy that `ringd sync`
-- rewrites and reloads). `failed_version` and `failure` are both set
-- when the client reports a newer version it could not apply while it
-- stays on `version`, and both NULL otherwise.
ALTER TABLE client_acks
    ADD COLUMN kind TEXT NOT NULL DEFAULT 'library' CHECK (kind IN ('library', 'proxy'));
ALTER TABLE client_acks
    ADD COLUMN failed_version INTEGER CHECK (failed_version > version);
ALTER TABLE client_acks
    ADD COLUMN failure TEXT CHECK ((failure IS NULL) = (failed_version IS NULL));
