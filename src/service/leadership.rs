//! Who makes the automatic membership changes: the decision-maker.
//!
//! Exactly one instance decides at a time. With the embedded store the one
//! instance is always the decision-maker, in term 1, which never ends
//! (until shutdown). With etcd the instances elect one
//! (`store/etcd/election.rs`); its term is the proof of office that fences
//! its writes, so a deposed decision-maker's late write is refused instead
//! of landing.
//!
//! # The contract for the lease timers
//!
//! - Subscribe with [`RingService::leadership`]. Its value is
//!   `Some((term, since))` while this instance decides and `None` while it
//!   does not. Every change to `Some` is a term of its own (a new term
//!   number, or the same instance elected again with a new one).
//! - On a change to `Some((term, since))`: rebuild every pending deadline
//!   from the leases as they are now, and count no miss before
//!   `since + ttl` for each lease: a node whose renewals went to a failed
//!   decision-maker, or came in while nobody decided, gets one full TTL of
//!   grace. On a change to `None`: stop making changes at once.
//! - Make every automatic change with
//!   [`Rings::apply_as_leader`](super::Rings::apply_as_leader) and
//!   the term of the office it was decided in. It answers
//!   `ServiceError::Store(StoreError::Deposed(term))` once that term is
//!   over, with nothing written: drop the change (the next decision-maker
//!   recomputes it); do not retry it in another term.
//! - [`RingService::leader_term`] is the cheap check before deciding
//!   anything. It turns `None` as soon as office may have been lost (the
//!   session lease could not be renewed in time), possibly a moment before
//!   the watch does.

use tokio::sync::watch;

use super::{RingService, ServiceError};
use crate::store::leadership::{ClusterState, Office};

pub use crate::store::leadership::Term;

impl RingService {
    /// This instance's term while it is the decision-maker, `None` while
    /// another instance is (or none is).
    pub fn leader_term(&self) -> Option<Term> {
        self.leadership.fence().map(|f| f.term())
    }

    /// This instance's office as it changes: `Some((term, when it took
    /// office))` while it decides. See the module's contract.
    pub fn leadership(&self) -> watch::Receiver<Office> {
        self.leadership.office()
    }

    /// The instances sharing the store and which of them decides.
    pub async fn cluster(&self) -> Result<ClusterState, ServiceError> {
        Ok(self.leadership.cluster().await?)
    }

    /// Gives up office and leaves the election, so that another instance
    /// takes over at once; for a graceful shutdown.
    pub async fn resign(&self) {
        self.leadership.resign().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::test_support::{create, latest, service, upsert};
    use crate::service::{ChangeOutcome, ChangeRequest};
    use crate::store::StoreError;

    fn request(id: &str) -> ChangeRequest {
        ChangeRequest {
            reason: Some("automatic".into()),
            ..ChangeRequest::of(vec![upsert(id)])
        }
    }

    #[tokio::test]
    async fn the_embedded_store_decides_in_term_1_and_refuses_any_other() {
        let (service, _clock, _dir) = service(10);
        let ring = create(&service, "r").await;
        assert_eq!(service.leader_term(), Some(Term(1)));
        let office = *service.leadership().borrow();
        assert_eq!(office.map(|(t, _)| t), Some(Term(1)));

        let stale = service
            .rings()
            .apply_as_leader(&ring, request("a"), Term(2))
            .await
            .unwrap_err();
        assert!(
            matches!(stale, ServiceError::Store(StoreError::Deposed(Term(2)))),
            "{stale:?}"
        );
        assert_eq!(latest(&service, &ring).await.version, 1);

        let done = service
            .rings()
            .apply_as_leader(&ring, request("a"), Term(1))
            .await
            .unwrap();
        assert!(matches!(done, ChangeOutcome::Committed { .. }), "{done:?}");
        assert_eq!(latest(&service, &ring).await.version, 2);
    }

    #[tokio::test]
    async fn after_resigning_nothing_is_decided() {
        let (service, _clock, _dir) = service(10);
        let ring = create(&service, "r").await;
        service.resign().await;
        assert_eq!(service.leader_term(), None);
        assert_eq!(*service.leadership().borrow(), None);
        let refused = service
            .rings()
            .apply_as_leader(&ring, request("a"), Term(1))
            .await
            .unwrap_err();
        assert!(
            matches!(refused, ServiceError::Store(StoreError::Deposed(Term(1)))),
            "{refused:?}"
        );
        assert_eq!(latest(&service, &ring).await.version, 1);
    }
}
