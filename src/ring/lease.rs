//! Leases: how a node that registers itself proves it is alive, and the
//! health derived from that proof. Health is kept beside a ring's
//! snapshots, never in them, so a late heartbeat changes no version and
//! no fingerprint (see `docs/design/membership.md`).

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Characters of a lease id: 32 lowercase hexadecimal digits.
pub const LEASE_ID_LEN: usize = 32;

/// The name of one registration of a node: 128 random bits, written as
/// [`LEASE_ID_LEN`] lowercase hex digits. Opaque to clients; a new
/// registration (after a release or an expiry) gets a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeaseId(u128);

/// A lease id that is not [`LEASE_ID_LEN`] lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("lease id `{0}` is invalid: a lease id is {len} lowercase hexadecimal digits, as the registration answered", len = LEASE_ID_LEN)]
pub struct InvalidLeaseId(pub String);

impl LeaseId {
    /// The id of `bits`, which the caller draws at random.
    pub fn from_bits(bits: u128) -> Self {
        Self(bits)
    }

    /// Parses the text form, refusing anything but exactly
    /// [`LEASE_ID_LEN`] lowercase hex digits (so each id has one spelling).
    pub fn parse(text: &str) -> Result<Self, InvalidLeaseId> {
        let canonical = text.len() == LEASE_ID_LEN
            && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        match canonical.then(|| u128::from_str_radix(text, 16)) {
            Some(Ok(bits)) => Ok(Self(bits)),
            _ => Err(InvalidLeaseId(text.chars().take(64).collect())),
        }
    }
}

impl fmt::Display for LeaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// Whether a node is known to be alive. Not part of a ring's version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeHealth {
    /// Its lease is live: renewed before its deadline.
    Healthy,
    /// Its lease's deadline passed without a renewal.
    Unhealthy,
    /// It released its lease (a graceful leave).
    Left,
    /// Registered by an operator, without a lease: ringd cannot tell.
    Unmanaged,
}

impl NodeHealth {
    /// Every health, in the order reports list them.
    pub const ALL: [NodeHealth; 4] = [
        NodeHealth::Healthy,
        NodeHealth::Unhealthy,
        NodeHealth::Left,
        NodeHealth::Unmanaged,
    ];

    /// The name as sent on the wire and in metric labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Healthy => "healthy",
            Self::Unhealthy => "unhealthy",
            Self::Left => "left",
            Self::Unmanaged => "unmanaged",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_id_reads_back_as_written_and_has_one_spelling() {
        let id = LeaseId::from_bits(0x0123_4567_89ab_cdef_0000_0000_0000_002a);
        assert_eq!(id.to_string(), "0123456789abcdef000000000000002a");
        assert_eq!(LeaseId::parse(&id.to_string()), Ok(id));
        assert_eq!(
            LeaseId::from_bits(1).to_string(),
            "00000000000000000000000000000001"
        );
        for bad in [
            "",
            "0123456789ABCDEF000000000000002A",
            "0123456789abcdef000000000000002",
            "0123456789abcdef000000000000002a0",
            "+123456789abcdef000000000000002a",
            "0123456789abcdef00000000000000zz",
        ] {
            assert_eq!(
                LeaseId::parse(bad),
                Err(InvalidLeaseId(bad.into())),
                "{bad}"
            );
        }
        assert_eq!(
            InvalidLeaseId("x".into()).to_string(),
            "lease id `x` is invalid: a lease id is 32 lowercase hexadecimal digits, as the registration answered"
        );
    }

    #[test]
    fn health_names_are_the_names_sent() {
        for h in NodeHealth::ALL {
            assert_eq!(serde_json::to_value(h).unwrap(), h.as_str());
        }
    }
}
