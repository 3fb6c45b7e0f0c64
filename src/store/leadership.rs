//! Who decides: the decision-maker's election as the stores provide it.
//!
//! Exactly one instance decides at a time. A store shared by many
//! instances elects one through the store itself (etcd: `etcd/election.rs`);
//! an embedded store has one instance, which always decides
//! ([`SoleLeader`]). The winner holds a [`Term`], and a write made in that
//! term carries a [`Fence`], which the store checks in the same atomic step
//! as the version compare-and-swap, so a deposed decision-maker's late
//! write is refused ([`super::StoreError::Deposed`]) instead of landing.

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use tokio::sync::watch;

use super::StoreError;

/// One decision-maker's tenure. With etcd it is the revision at which the
/// instance's election key was created, so every term is new and later
/// terms are larger; with an embedded store it is always 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Term(pub u64);

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// This instance's office as it changes: `Some((term, since))` while it
/// decides, `since` being when it took office (in this instance's clock),
/// and `None` while it does not.
pub type Office = Option<(Term, OffsetDateTime)>;

/// The proof of office a decision-maker's write carries: opaque outside
/// the stores, which alone know what to compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    pub(super) term: Term,
    /// The etcd election key whose creation revision is the term; empty
    /// for an embedded store.
    pub(super) key: Vec<u8>,
}

impl Fence {
    /// The term this fence proves.
    pub fn term(&self) -> Term {
        self.term
    }
}

/// An instance's name in the cluster: 1–64 characters of ASCII letters,
/// digits, `.`, `_` and `-`, starting with a letter or digit, so that it
/// is a single etcd key segment and prints without quoting.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct InstanceId(String);

/// Why an instance id was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("instance id `{0}` is not valid: use 1–64 characters of A-Z, a-z, 0-9, `.`, `_` and `-`, starting with a letter or digit")]
pub struct InvalidInstanceId(pub String);

impl InstanceId {
    /// Checks `text` against the rules above.
    pub fn new(text: &str) -> Result<Self, InvalidInstanceId> {
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        let valid = (1..=64).contains(&text.len())
            && text.starts_with(|c: char| c.is_ascii_alphanumeric())
            && text.chars().all(allowed);
        if valid {
            Ok(Self(text.to_owned()))
        } else {
            Err(InvalidInstanceId(text.to_owned()))
        }
    }

    /// A fresh id of 16 random hex digits, for an instance not given one.
    /// The randomness is the hasher's: its keys are drawn from the system's
    /// generator once per thread and stepped on every call, so the time of
    /// day adds nothing and is not read.
    pub fn random() -> Self {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        Self(format!("{:016x}", h.finish()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for InstanceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for InstanceId {
    type Error = InvalidInstanceId;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::new(&s)
    }
}

impl From<InstanceId> for String {
    fn from(id: InstanceId) -> Self {
        id.0
    }
}

/// One running ringd instance, as it registers itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instance {
    /// Its id (`--instance-id`, or random).
    pub id: InstanceId,
    /// Where it serves (`--advertise-url`, or its listen address).
    pub url: String,
    /// Its ringd version.
    pub version: String,
    /// When it started.
    #[serde(with = "time::serde::rfc3339")]
    pub started_at: OffsetDateTime,
}

/// The decision-maker as every instance sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leader {
    /// The leading instance.
    pub instance: InstanceId,
    /// Its advertised URL.
    pub url: String,
    /// Its term.
    pub term: Term,
    /// When it took office; `None` in the moment between winning the
    /// election and announcing it.
    pub since: Option<OffsetDateTime>,
}

/// The instances sharing a store and which of them decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterState {
    /// `sqlite` or `etcd`.
    pub store: &'static str,
    /// The decision-maker; `None` while the election has no winner.
    pub leader: Option<Leader>,
    /// Every registered instance, sorted by id.
    pub instances: Vec<Instance>,
}

/// This instance's part in choosing the decision-maker.
///
/// The contract for whoever acts on it (the lease timers): act only with
/// the term of [`Leadership::fence`], and treat every change of
/// [`Leadership::office`] to `Some` as a new term that starts counting
/// from its `since`.
#[async_trait]
pub trait Leadership: Send + Sync + 'static {
    /// The fence of the current term while this instance holds office,
    /// `None` otherwise. Never waits on the store, and turns `None` as soon
    /// as office may have been lost (with etcd: when the session lease
    /// could not be renewed in time), even before [`Leadership::office`]
    /// says so.
    fn fence(&self) -> Option<Fence>;

    /// This instance's office, as it changes.
    fn office(&self) -> watch::Receiver<Office>;

    /// Reads the instances and the decision-maker from the store.
    async fn cluster(&self) -> Result<ClusterState, StoreError>;

    /// Leaves the election and gives up office at once, so another
    /// instance can take over without waiting out a TTL. Bounded in time;
    /// after it, this instance never decides again.
    async fn resign(&self);
}

/// The one instance of an embedded store: it decides in term 1 from its
/// start until it resigns.
pub struct SoleLeader {
    instance: Instance,
    office: watch::Sender<Office>,
    since: OffsetDateTime,
}

/// The term of an embedded store's one instance.
pub const SOLE_TERM: Term = Term(1);

impl SoleLeader {
    /// `instance`, in office from its start.
    pub fn new(instance: Instance) -> Arc<Self> {
        let since = instance.started_at;
        Arc::new(Self {
            office: watch::Sender::new(Some((SOLE_TERM, since))),
            instance,
            since,
        })
    }
}

#[async_trait]
impl Leadership for SoleLeader {
    fn fence(&self) -> Option<Fence> {
        self.office.borrow().map(|(term, _)| Fence {
            term,
            key: Vec::new(),
        })
    }

    fn office(&self) -> watch::Receiver<Office> {
        self.office.subscribe()
    }

    async fn cluster(&self) -> Result<ClusterState, StoreError> {
        let leader = self.office.borrow().map(|(term, _)| Leader {
            instance: self.instance.id.clone(),
            url: self.instance.url.clone(),
            term,
            since: Some(self.since),
        });
        Ok(ClusterState {
            store: "sqlite",
            leader,
            instances: vec![self.instance.clone()],
        })
    }

    async fn resign(&self) {
        self.office.send_replace(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_ids_are_checked() {
        for good in ["a", "ringd-1", "A.b_c-9", &"x".repeat(64)] {
            assert_eq!(InstanceId::new(good).unwrap().as_str(), good);
        }
        for bad in ["", "-a", ".a", "a/b", "a b", "é", &"x".repeat(65)] {
            assert_eq!(InstanceId::new(bad), Err(InvalidInstanceId(bad.to_owned())));
        }
        let r = InstanceId::random();
        assert_eq!(r.as_str().len(), 16);
        assert!(InstanceId::new(r.as_str()).is_ok());
        assert_ne!(InstanceId::random(), InstanceId::random());
    }

    /// What only the embedded store's leader does; what every store's
    /// does is in the store conformance suite (`tests/store/conformance/`).
    #[tokio::test]
    async fn the_sole_instance_leads_in_term_1_and_stays_listed_after_resigning() {
        let at = OffsetDateTime::from_unix_timestamp(1_750_000_000).unwrap();
        let me = Instance {
            id: InstanceId::new("only").unwrap(),
            url: "http://127.0.0.1:7420".into(),
            version: "1.0.0".into(),
            started_at: at,
        };
        let sole = SoleLeader::new(me.clone());
        assert_eq!(*sole.office().borrow(), Some((SOLE_TERM, at)));
        assert_eq!(SOLE_TERM, Term(1));
        sole.resign().await;
        let cluster = sole.cluster().await.unwrap();
        assert_eq!((cluster.leader, cluster.instances), (None, vec![me]));
    }
}
