//! [`Handoff`]: a key's owner now and before the last change, for reading
//! through to the previous owner while a change settles.

use crate::placement::NodeId;

/// A key's owner in the current view and in the one before it (see
/// [`RingClient::handoff`]). All `None` before the first version.
///
/// [`RingClient::handoff`]: super::RingClient::handoff
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Handoff {
    /// The owner now.
    pub owner_now: Option<NodeId>,
    /// The owner in the version applied before; `None` before a second
    /// version, or when that version had no active node.
    pub owner_before: Option<NodeId>,
    /// The version routed on now.
    pub version: Option<u64>,
    /// The version applied before it.
    pub version_before: Option<u64>,
}

impl Handoff {
    /// Whether the key changed owner in the last change: then a miss on
    /// `owner_now` may be served by `owner_before`.
    pub fn moved(&self) -> bool {
        self.owner_before.is_some() && self.owner_before != self.owner_now
    }
}
