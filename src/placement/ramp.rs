//! A node's ramp: the integer share of its weight it takes while a
//! rollout brings it in or out.

use serde::{Deserialize, Serialize};

use super::error::PlacementError;
use super::json_integer::JsonU64;

/// A full [`Ramp`]: the parts per 65,536 of a node that is all in.
pub const RAMP_FULL: u32 = 65_536;

/// How much of its weight a node takes while a rollout brings it in or
/// out: an integer number of parts per 65,536, from 1 to [`RAMP_FULL`]
/// (the default, a node that is all in). An integer, never a float, so
/// that every language computes the same placement from it: `ring` places
/// only the first `⌈ramp × points / 65,536⌉` of the node's points, and
/// `rendezvous` and `maglev` weigh it `weight × ramp` against the others'
/// `weight × 65,536` (spec 2.2). `ketama`, `jump` and `table` refuse a
/// ramp below full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "JsonU64", into = "u32")]
pub struct Ramp(u32);

impl Ramp {
    /// All in: the node takes its whole weight.
    pub const FULL: Ramp = Ramp(RAMP_FULL);

    /// Validates `parts` (of 65,536).
    pub fn new(parts: u64) -> Result<Self, PlacementError> {
        if parts == 0 || parts > u64::from(RAMP_FULL) {
            return Err(PlacementError::RampOutOfRange { ramp: parts });
        }
        Ok(Self(parts as u32))
    }

    /// The parts of 65,536.
    pub fn get(self) -> u32 {
        self.0
    }

    /// Whether the node is all in.
    pub fn is_full(&self) -> bool {
        *self == Self::FULL
    }

    /// `weight × ramp`: the node's weight in parts of 65,536, the unit in
    /// which a ramped placement compares nodes.
    pub fn scale(self, weight: u32) -> u64 {
        u64::from(weight) * u64::from(self.0)
    }
}

impl Default for Ramp {
    fn default() -> Self {
        Self::FULL
    }
}

impl TryFrom<JsonU64> for Ramp {
    type Error = PlacementError;
    fn try_from(r: JsonU64) -> Result<Self, Self::Error> {
        Self::new(r.0)
    }
}

impl From<Ramp> for u32 {
    fn from(r: Ramp) -> Self {
        r.0
    }
}
