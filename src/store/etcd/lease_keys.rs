//! Where the etcd store keeps leases, and how their values are encoded
//! (documented in `docs/etcd-layout.md`).
//!
//! Two keys per leased node. The record key holds the lease (its id,
//! TTL, the etcd lease behind it, and whether it was released) and is on
//! no etcd lease, so it outlives an expiry: an expired lease is still
//! known, as `unhealthy`. The alive key is attached to the etcd lease, so
//! etcd deletes it when the lease expires, and every instance's watch
//! hears of the expiry. Forgetting a lease deletes both.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::layout::Keys;
use crate::placement::NodeId;
use crate::ring::RingName;
use crate::store::StoreError;

/// What a lease key under `{p}/leases/` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LeaseKey {
    /// `{p}/leases/records/{ring}/{node}`.
    Record,
    /// `{p}/leases/alive/{ring}/{node}`.
    Alive,
}

impl LeaseKey {
    fn dir(self) -> &'static str {
        match self {
            Self::Record => "leases/records",
            Self::Alive => "leases/alive",
        }
    }
}

impl Keys {
    /// Prefix of every lease key; watched for lease events.
    pub(super) fn leases(&self) -> String {
        self.below("leases/")
    }

    /// Prefix of one kind of lease key of `ring`.
    pub(super) fn lease_prefix(&self, kind: LeaseKey, ring: &RingName) -> String {
        self.below(&format!("{}/{ring}/", kind.dir()))
    }

    /// One kind of lease key of `node` of `ring`.
    pub(super) fn lease_key(&self, kind: LeaseKey, ring: &RingName, node: &NodeId) -> String {
        format!("{}{}", self.lease_prefix(kind, ring), node.as_str())
    }

    /// What lease key `key` is, and of which ring and node; `None` for a
    /// key under `{p}/leases/` of no known form.
    pub(super) fn parse_lease_key(&self, key: &[u8]) -> Option<(LeaseKey, RingName, NodeId)> {
        let key = std::str::from_utf8(key).ok()?;
        let rest = key.strip_prefix(&self.leases())?;
        let (dir, rest) = rest.split_once('/')?;
        let kind = match dir {
            "records" => LeaseKey::Record,
            "alive" => LeaseKey::Alive,
            _ => return None,
        };
        let (ring, node) = rest.split_once('/')?;
        Some((kind, RingName::new(ring).ok()?, NodeId::new(node).ok()?))
    }
}

/// The value of a record key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct LeaseRecord {
    /// The ringd lease id, as clients see it (32 hex digits).
    pub id: String,
    /// The TTL the node asked for, in milliseconds.
    pub ttl_ms: u64,
    /// The etcd lease the alive key is attached to.
    pub etcd_lease: i64,
    /// When the node released it; absent while it is not released.
    #[serde(
        default,
        with = "time::serde::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub released_at: Option<OffsetDateTime>,
}

/// The value of an alive key: the ringd lease id it proves alive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Alive {
    /// The ringd lease id.
    pub id: String,
}

/// A decoding failure of a lease value, naming its key.
pub(super) fn bad_value(key: &[u8], e: impl std::fmt::Display) -> StoreError {
    StoreError::corrupt(format!(
        "lease value of `{}`: {e}",
        String::from_utf8_lossy(key)
    ))
}

/// `ttl` in whole etcd seconds, rounded up.
pub(super) fn etcd_ttl(ttl: Duration) -> i64 {
    let secs = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
    i64::try_from(secs.max(1)).unwrap_or(i64::MAX)
}

/// `ttl` in milliseconds, as a record stores it (a TTL is at most an hour).
pub(super) fn ttl_ms(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_keys_read_back_as_written() {
        let keys = Keys::new("/p");
        let (ring, node) = (RingName::new("r").unwrap(), NodeId::new("n-1").unwrap());
        let record = keys.lease_key(LeaseKey::Record, &ring, &node);
        assert_eq!(record, "/p/leases/records/r/n-1");
        assert_eq!(
            keys.lease_key(LeaseKey::Alive, &ring, &node),
            "/p/leases/alive/r/n-1"
        );
        assert_eq!(
            keys.parse_lease_key(record.as_bytes()),
            Some((LeaseKey::Record, ring.clone(), node.clone()))
        );
        assert_eq!(keys.parse_lease_key(b"/p/leases/other/r/n"), None);
        assert_eq!(keys.parse_lease_key(b"/p/rings/r"), None);
        assert_eq!(keys.leases(), "/p/leases/");
    }

    #[test]
    fn etcd_ttls_are_whole_seconds_rounded_up() {
        assert_eq!(etcd_ttl(Duration::from_secs(10)), 10);
        assert_eq!(etcd_ttl(Duration::from_millis(1_500)), 2);
        assert_eq!(etcd_ttl(Duration::from_millis(1)), 1);
        assert_eq!(etcd_ttl(Duration::from_secs(3600)), 3600);
    }
}
