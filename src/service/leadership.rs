//! Who makes the automatic membership changes: the decision-maker.
//!
//! Exactly one instance decides at a time. With the embedded store the one
//! instance is always the decision-maker, in a term that never ends. A
//! backend shared by many instances elects one; its term is the proof of
//! office that fences its writes, so a deposed decision-maker's late write
//! is refused instead of landing.

use super::{ChangeOutcome, ChangeRequest, RingService, ServiceError};
use crate::ring::{RingName, Role};

/// One decision-maker's tenure: it changes whenever another instance (or
/// the same one, again) takes office.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Term(pub u64);

impl RingService {
    /// This instance's term while it is the decision-maker, `None` while
    /// another instance is.
    pub fn leader_term(&self) -> Option<Term> {
        Some(Term(1))
    }

    /// Applies an automatic change as the decision-maker of `term`: like
    /// [`RingService::apply`], but refused once `term` is over.
    pub async fn apply_as_leader(
        &self,
        ring: &RingName,
        request: ChangeRequest,
        term: Term,
    ) -> Result<ChangeOutcome, ServiceError> {
        let _ = term;
        self.apply(ring, request, Role::Admin).await
    }
}
