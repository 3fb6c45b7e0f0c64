//! Electing the decision-maker through etcd's election API.
//!
//! Each instance holds a session: an etcd lease of the election TTL, kept
//! alive every third of it. On that lease it registers itself
//! (`{p}/instances/{id}`) and campaigns on `{p}/election/membership`; etcd
//! makes the candidate whose key is oldest the leader, and its term is that
//! key's creation revision. The fence of a term is a compare on exactly
//! that: a write in term `t` commits only if the key still exists with
//! creation revision `t`, which stops being true once the session's lease
//! ends, the instance resigns, or anyone deletes the key.
//!
//! An instance counts itself in office only until `sent + 0.9 × ttl`,
//! where `sent` is when it sent the last keep-alive etcd answered: etcd
//! renewed the lease after that moment, so it cannot expire earlier. When etcd
//! cannot be reached, office therefore ends at the latest when the lease
//! could have expired, before anyone else can win.
//!
//! That reckoning is in real time (tokio's `Instant`), never the
//! injected clock: etcd keeps the lease's TTL by its own clock, and
//! office must end before etcd could let the lease go, whatever a test
//! sets the clock to. The clock only dates when office was taken.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use etcd_client::{
    Client, Compare, CompareOp, GetOptions, LeaderKey, LeaseKeepAliveStream, LeaseKeeper,
    ProclaimOptions, PutOptions, ResignOptions, SortOrder, SortTarget,
};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::{timed, unavailable, Ops};
use crate::ring::Clock;
use crate::store::leadership::{
    ClusterState, Fence, Instance, InstanceId, Leader, Leadership, Office, Term,
};
use crate::store::StoreError;

/// How long one election request (other than the campaign itself, which
/// waits for office) may take, and how long resigning may hold up a
/// shutdown.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// The pause before a new session after one ended, so an instance that
/// cannot reach etcd does not spin.
const RESTART_PAUSE: Duration = Duration::from_millis(500);

/// The value of a candidate's election key: who it is and, once it won,
/// since when it leads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Candidate {
    pub(super) instance: InstanceId,
    pub(super) url: String,
    #[serde(with = "time::serde::rfc3339::option")]
    pub(super) since: Option<OffsetDateTime>,
}

/// What the session task and the readers share.
struct Shared {
    client: Client,
    /// The election's name; candidates' keys are under `{election}/`.
    election: String,
    /// Prefix of the instance records.
    instances: String,
    me: Instance,
    ttl: Duration,
    /// The term held now and until when it is surely valid.
    held: Mutex<Option<Held>>,
    office: watch::Sender<Office>,
    /// The current session's lease, for revoking it on resignation.
    lease: Mutex<Option<i64>>,
    /// Dates when office was taken.
    clock: Arc<dyn Clock>,
}

#[derive(Clone)]
struct Held {
    key: LeaderKey,
    since: OffsetDateTime,
    valid_until: Instant,
}

/// This instance's part in the etcd election; see the module comment.
pub(super) struct EtcdElection {
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl Ops {
    /// The name of the decision-maker's election.
    fn election_name(&self) -> String {
        self.keys.below("election/membership")
    }

    /// Starts campaigning as `me` with sessions of `ttl` (whole seconds,
    /// as etcd leases have).
    pub(super) fn elect(&self, me: Instance, ttl: Duration) -> EtcdElection {
        let shared = Arc::new(Shared {
            client: self.client.clone(),
            election: self.election_name(),
            instances: self.keys.below("instances/"),
            me,
            ttl: ttl.max(Duration::from_secs(1)),
            held: Mutex::new(None),
            office: watch::Sender::new(None),
            lease: Mutex::new(None),
            clock: self.clock.clone(),
        });
        let task = tokio::spawn(campaign_forever(shared.clone()));
        EtcdElection { shared, task }
    }

    /// Whether `fence`'s term is still the current one: its election key
    /// exists with the term as its creation revision.
    pub(super) async fn fence_holds(&self, fence: &Fence) -> Result<bool, StoreError> {
        fence_holds(&self.client, fence).await
    }
}

/// [`Ops::fence_holds`], bounded by [`REQUEST_TIMEOUT`].
async fn fence_holds(client: &Client, fence: &Fence) -> Result<bool, StoreError> {
    let resp = bounded(client.clone().get(fence.key.clone(), None)).await?;
    Ok(resp
        .kvs()
        .first()
        .is_some_and(|kv| term_of(kv.create_revision()) == fence.term))
}

/// The compare that fences a write in `fence`'s term.
pub(super) fn fence_compare(fence: &Fence) -> Compare {
    let revision = i64::try_from(fence.term.0).unwrap_or(i64::MAX);
    Compare::create_revision(fence.key.clone(), CompareOp::Equal, revision)
}

fn term_of(revision: i64) -> Term {
    Term(u64::try_from(revision).unwrap_or(0))
}

impl Shared {
    fn publish(&self, held: Option<Held>) {
        let office = held.as_ref().map(|h| (term_of(h.key.rev()), h.since));
        *self.held.lock().expect("election lock") = held;
        self.office.send_if_modified(|o| {
            let changed = *o != office;
            *o = office;
            changed
        });
    }

    fn extend(&self, valid_until: Instant) {
        if let Some(h) = self.held.lock().expect("election lock").as_mut() {
            h.valid_until = valid_until;
        }
    }

    fn candidate(&self, since: Option<OffsetDateTime>) -> Vec<u8> {
        serde_json::to_vec(&Candidate {
            instance: self.me.id.clone(),
            url: self.me.url.clone(),
            since,
        })
        .expect("a candidate serializes")
    }

    /// Revokes the session's lease, if any, which deletes this instance's
    /// record and election key at once. Best effort: an unreachable etcd
    /// lets the lease expire by itself.
    async fn revoke(&self) {
        let lease = self.lease.lock().expect("election lock").take();
        if let Some(id) = lease {
            let mut client = self.client.clone();
            let _ = tokio::time::timeout(REQUEST_TIMEOUT, client.lease_revoke(id)).await;
        }
    }
}

/// Runs sessions one after another: a session ends when its lease is lost
/// or could not be renewed in time, and office with it.
async fn campaign_forever(shared: Arc<Shared>) {
    loop {
        let outcome = session(&shared).await;
        let was_leader = shared.held.lock().expect("election lock").is_some();
        shared.publish(None);
        match outcome {
            Err(e) if was_leader => {
                tracing::warn!(error = %e, "lost office as the membership decision-maker")
            }
            Err(e) => tracing::debug!(error = %e, "election session ended"),
            Ok(()) => {}
        }
        shared.revoke().await;
        tokio::time::sleep(RESTART_PAUSE).await;
    }
}

/// One session: grant a lease, register, campaign, and keep the lease
/// alive until it is lost. Returns why it ended.
async fn session(shared: &Shared) -> Result<(), StoreError> {
    let mut client = shared.client.clone();
    let ttl_secs = i64::try_from(shared.ttl.as_secs()).unwrap_or(i64::MAX);
    let granted = Instant::now();
    let grant = bounded(client.lease_grant(ttl_secs, None)).await?;
    let lease = grant.id();
    *shared.lease.lock().expect("election lock") = Some(lease);
    let mut valid_until = granted + safe(secs(grant.ttl()));
    let record = serde_json::to_vec(&shared.me).expect("an instance serializes");
    let key = format!("{}{}", shared.instances, shared.me.id);
    bounded(client.put(key, record, Some(PutOptions::new().with_lease(lease)))).await?;
    let (mut keeper, mut stream) = bounded(client.lease_keep_alive(lease)).await?;

    let mut election = client.election_client();
    let campaign = election.campaign(shared.election.clone(), shared.candidate(None), lease);
    let mut campaign = std::pin::pin!(campaign);
    let mut leader: Option<LeaderKey> = None;
    let mut tick = tokio::time::interval(shared.ttl / 3);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            won = &mut campaign, if leader.is_none() => {
                let key = won
                    .map_err(unavailable)?
                    .take_leader()
                    .ok_or_else(|| StoreError::unavailable("etcd's campaign answer named no leader key"))?;
                let since = shared.clock.now();
                let announce = ProclaimOptions::new().with_leader(key.clone());
                bounded(client.election_client().proclaim(shared.candidate(Some(since)), Some(announce))).await?;
                if Instant::now() >= valid_until {
                    return Err(StoreError::unavailable("the session lease ran out while taking office"));
                }
                tracing::info!(term = key.rev(), instance = %shared.me.id, "took office as the membership decision-maker");
                shared.publish(Some(Held { key: key.clone(), since, valid_until }));
                leader = Some(key);
            }
            _ = tick.tick() => {
                let sent = Instant::now();
                match tokio::time::timeout(shared.ttl / 3, renew(&mut keeper, &mut stream)).await {
                    Ok(Ok(0)) => return Err(StoreError::unavailable("the session lease expired")),
                    Ok(Ok(ttl)) => {
                        valid_until = sent + safe(secs(ttl));
                        shared.extend(valid_until);
                    }
                    // The keep-alive stream broke or stalled (its member
                    // died or froze, or etcd is electing): open another and
                    // try again soon, not a third of a TTL later, so that
                    // the lease is renewed as soon as etcd has a leader
                    // again. The deadline below still applies.
                    _ => {
                        if let Ok(Ok(pair)) = tokio::time::timeout(shared.ttl / 3, client.lease_keep_alive(lease)).await {
                            (keeper, stream) = pair;
                        }
                        tick.reset_after(RENEW_RETRY);
                    }
                }
                if let Some(key) = &leader {
                    let fence = Fence { term: term_of(key.rev()), key: key.key().to_vec() };
                    // Unknown (etcd slow) is not lost: the deadline decides that.
                    if !fence_holds(&client, &fence).await.unwrap_or(true) {
                        return Err(StoreError::unavailable("the election key was deleted"));
                    }
                }
            }
            _ = tokio::time::sleep_until(valid_until) => {
                return Err(StoreError::unavailable(format!(
                    "the session lease could not be renewed within its {} s TTL",
                    shared.ttl.as_secs()
                )));
            }
        }
    }
}

/// How soon a renewal that failed is tried again.
const RENEW_RETRY: Duration = Duration::from_millis(250);

/// Sends one keep-alive and returns the TTL etcd answers (0: the lease is gone).
async fn renew(
    keeper: &mut LeaseKeeper,
    stream: &mut LeaseKeepAliveStream,
) -> Result<i64, etcd_client::Error> {
    keeper.keep_alive().await?;
    match stream.message().await? {
        Some(resp) => Ok(resp.ttl().max(0)),
        None => Err(etcd_client::Error::LeaseKeepAliveError(
            "the keep-alive stream ended".into(),
        )),
    }
}

/// The part of a lease's TTL an instance counts on: nine tenths, so that
/// a late wake-up or a slightly fast etcd clock cannot stretch office past
/// the lease's expiry in etcd.
fn safe(ttl: Duration) -> Duration {
    ttl * 9 / 10
}

fn secs(ttl: i64) -> Duration {
    Duration::from_secs(u64::try_from(ttl).unwrap_or(0))
}

/// Runs an etcd request with [`REQUEST_TIMEOUT`].
async fn bounded<T>(
    op: impl std::future::Future<Output = Result<T, etcd_client::Error>>,
) -> Result<T, StoreError> {
    timed(REQUEST_TIMEOUT, async { op.await.map_err(unavailable) }).await
}

#[async_trait]
impl Leadership for EtcdElection {
    fn fence(&self) -> Option<Fence> {
        let held = self.shared.held.lock().expect("election lock");
        held.as_ref()
            .filter(|h| Instant::now() < h.valid_until)
            .map(|h| Fence {
                term: term_of(h.key.rev()),
                key: h.key.key().to_vec(),
            })
    }

    fn office(&self) -> watch::Receiver<Office> {
        self.shared.office.subscribe()
    }

    async fn cluster(&self) -> Result<ClusterState, StoreError> {
        let mut client = self.shared.client.clone();
        let first = GetOptions::new()
            .with_prefix()
            .with_sort(SortTarget::Create, SortOrder::Ascend)
            .with_limit(1);
        let candidates = format!("{}/", self.shared.election);
        let found = bounded(client.get(candidates, Some(first))).await?;
        let revision = found.header().map_or(0, |h| h.revision());
        let leader = match found.kvs().first() {
            None => None,
            Some(kv) => {
                let c: Candidate = serde_json::from_slice(kv.value())
                    .map_err(|e| StoreError::corrupt_from("the election key's value", e))?;
                Some(Leader {
                    instance: c.instance,
                    url: c.url,
                    term: term_of(kv.create_revision()),
                    since: c.since,
                })
            }
        };
        let all = GetOptions::new().with_prefix().with_revision(revision);
        let listed = bounded(client.get(self.shared.instances.clone(), Some(all))).await?;
        let mut instances = listed
            .kvs()
            .iter()
            .map(|kv| {
                serde_json::from_slice::<Instance>(kv.value())
                    .map_err(|e| StoreError::corrupt_from("an instance record", e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        instances.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(ClusterState {
            store: "etcd",
            leader,
            instances,
        })
    }

    async fn resign(&self) {
        // Stopping the task drops a pending campaign, which etcd answers
        // by withdrawing the candidate.
        self.task.abort();
        let held = self.shared.held.lock().expect("election lock").take();
        self.shared.publish(None);
        if let Some(h) = held {
            let mut election = self.shared.client.election_client();
            let options = ResignOptions::new().with_leader(h.key);
            let _ = tokio::time::timeout(REQUEST_TIMEOUT, election.resign(Some(options))).await;
            tracing::info!("resigned as the membership decision-maker");
        }
        self.shared.revoke().await;
    }
}

impl Drop for EtcdElection {
    fn drop(&mut self) {
        self.task.abort();
    }
}
