//! The loop behind a [`Member`](super::Member): register, renew, register
//! again after a loss, release on stop.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use serde_json::Value;
use tokio::sync::watch;
use tokio::time::Instant;

use super::{MemberState, MemberStatus};
use crate::client::backoff::Backoff;
use crate::client::error::ClientError;
use crate::client::http::{decode, Endpoints};
use crate::jitter::random_below;
use crate::ring::LeaseId;
use crate::wire::LeaseView;

/// What the task runs with, taken from a validated builder.
pub(super) struct Task {
    pub(super) endpoints: Endpoints,
    /// `/v1/rings/{ring}/nodes/{node}/lease`.
    pub(super) lease_path: String,
    /// The registration's body: the record and the TTL.
    pub(super) body: Value,
    pub(super) ttl: Duration,
    /// Each request's time limit.
    pub(super) timeout: Duration,
    pub(super) backoff: Backoff,
    pub(super) status: watch::Sender<MemberStatus>,
    /// `true`, or the sender dropped: release and end.
    pub(super) stop: watch::Receiver<bool>,
}

/// A lease the task holds.
#[derive(Debug, Clone, Copy)]
struct Held {
    id: LeaseId,
    /// When it expires at the latest, on this machine's clock: the TTL
    /// from the moment the request that set it was sent, which is no later
    /// than the server's own deadline.
    expires: Instant,
}

/// What a failed request means for the member.
#[derive(Debug, PartialEq, Eq)]
enum Failure {
    /// The lease is gone (unknown, expired, released, another node's):
    /// register again at once.
    LeaseGone,
    /// A refusal that asking again cannot change: stop.
    Fatal,
    /// The servers could not answer now (unreachable, 5xx, 429, a body
    /// that did not decode): try again after a backoff.
    Transient,
}

fn classify(e: &ClientError) -> Failure {
    match e.status() {
        Some(404) if e.problem().is_some_and(|p| p.slug() == "lease-not-found") => {
            Failure::LeaseGone
        }
        // On a renewal, the id names another node's lease: a new
        // registration gets this node its own.
        Some(409) => Failure::LeaseGone,
        Some(408 | 425 | 429) => Failure::Transient,
        Some(400..=499) => Failure::Fatal,
        _ => Failure::Transient,
    }
}

impl Task {
    /// Runs until told to stop (then releases) or until a fatal refusal.
    /// Returns the release's outcome.
    pub(super) async fn run(mut self) -> Result<(), ClientError> {
        let mut held: Option<Held> = None;
        loop {
            if self.stopping() {
                break;
            }
            let wait = match held {
                None => match self.register().await {
                    Ok(h) => {
                        held = Some(h);
                        self.renewal_wait()
                    }
                    Err(e) if classify(&e) == Failure::Fatal => {
                        self.fail(e);
                        return Ok(());
                    }
                    Err(e) => {
                        self.note_error(e);
                        self.backoff.next_wait()
                    }
                },
                Some(h) => match self.renew(h.id).await {
                    Ok(h) => {
                        held = Some(h);
                        self.renewal_wait()
                    }
                    Err(e) => match classify(&e) {
                        Failure::Fatal => {
                            self.fail(e);
                            return Ok(());
                        }
                        Failure::LeaseGone => {
                            held = None;
                            self.lose(e);
                            Duration::ZERO
                        }
                        Failure::Transient if Instant::now() >= h.expires => {
                            held = None;
                            self.lose(e);
                            self.backoff.next_wait()
                        }
                        Failure::Transient => {
                            self.note_error(e);
                            // Retry soon enough to renew before the deadline.
                            let left = h.expires.saturating_duration_since(Instant::now());
                            self.backoff.next_wait().min(left / 2)
                        }
                    },
                },
            };
            if self.sleep_or_stop(wait).await {
                break;
            }
        }
        let released = match held {
            Some(h) => self.release(h.id).await,
            None => Ok(()),
        };
        self.status.send_modify(|s| s.state = MemberState::Left);
        released
    }

    /// Whether the handle asked the task to stop, or is gone.
    fn stopping(&self) -> bool {
        *self.stop.borrow() || self.stop.has_changed().is_err()
    }

    /// Sleeps `wait`; `true` if told to stop meanwhile.
    async fn sleep_or_stop(&mut self, wait: Duration) -> bool {
        if wait.is_zero() {
            return self.stopping();
        }
        tokio::select! {
            () = tokio::time::sleep(wait) => self.stopping(),
            // A change or a dropped sender: either way, look again.
            _ = self.stop.changed() => true,
        }
    }

    /// About a third of the TTL, drawn from [¼, 5⁄12) of it so members
    /// started together spread their renewals.
    fn renewal_wait(&self) -> Duration {
        let third = self.ttl / 3;
        third * 3 / 4 + random_below(third / 2)
    }

    async fn register(&mut self) -> Result<Held, ClientError> {
        let sent = Instant::now();
        let (view, server) = self
            .call(Method::PUT, &self.lease_path, Some(self.body.clone()))
            .await?;
        let held = self.held(&view, sent)?;
        self.backoff.reset();
        self.status.send_modify(|s| {
            s.state = MemberState::Registered;
            s.version = Some(view.version);
            seen(s, &view, held.id, server);
        });
        Ok(held)
    }

    async fn renew(&mut self, id: LeaseId) -> Result<Held, ClientError> {
        let sent = Instant::now();
        let path = format!("{}/{id}/renew", self.lease_path);
        let (view, server) = self.call(Method::POST, &path, None).await?;
        let held = self.held(&view, sent)?;
        self.backoff.reset();
        self.status.send_modify(|s| {
            s.state = MemberState::Renewing;
            seen(s, &view, held.id, server);
        });
        Ok(held)
    }

    async fn release(&mut self, id: LeaseId) -> Result<(), ClientError> {
        let path = format!("{}/{id}", self.lease_path);
        match self.call(Method::DELETE, &path, None).await {
            Ok((view, server)) => {
                self.status
                    .send_modify(|s| seen_without_heartbeat(s, &view, server));
                Ok(())
            }
            // Already gone (expired, or the node was removed): nothing is
            // left to release.
            Err(e) if classify(&e) == Failure::LeaseGone => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Sends a request, and on a transport failure demotes the server
    /// tried first, so the next attempt starts with another one even when
    /// the failure was a timeout (which `Endpoints` does not fail over on
    /// for a write).
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<(LeaseView, String), ClientError> {
        let first = self.endpoints.preferred().to_owned();
        match self
            .endpoints
            .send(method, path, body.as_ref(), &[], Some(self.timeout))
            .await
        {
            Ok((resp, server)) => {
                let view = decode::<LeaseView>(resp, &format!("{server}{path}")).await?;
                Ok((view, server))
            }
            Err(e) => {
                if matches!(e, ClientError::Unreachable { .. }) {
                    self.endpoints.demote(&first);
                }
                Err(e)
            }
        }
    }

    fn held(&self, view: &LeaseView, sent: Instant) -> Result<Held, ClientError> {
        let id =
            LeaseId::parse(&view.lease_id).map_err(|e| ClientError::decode("the lease's id", e))?;
        Ok(Held {
            id,
            expires: sent + self.ttl,
        })
    }

    fn note_error(&self, e: ClientError) {
        self.status
            .send_modify(|s| s.last_error = Some(Arc::new(e)));
    }

    fn lose(&self, e: ClientError) {
        self.status.send_modify(|s| {
            s.state = MemberState::Lost;
            s.losses += 1;
            s.last_error = Some(Arc::new(e));
        });
    }

    fn fail(&self, e: ClientError) {
        self.status.send_modify(|s| {
            s.state = MemberState::Failed;
            s.last_error = Some(Arc::new(e));
        });
    }
}

/// Records a registration's or renewal's answer.
fn seen(s: &mut MemberStatus, view: &LeaseView, id: LeaseId, server: String) {
    s.lease_id = Some(id);
    s.heartbeats += 1;
    s.last_error = None;
    seen_without_heartbeat(s, view, server);
}

fn seen_without_heartbeat(s: &mut MemberStatus, view: &LeaseView, server: String) {
    s.deadline = Some(view.deadline);
    s.server = Some(server);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Problem;

    fn problem(status: u16, slug: &str) -> ClientError {
        ClientError::Problem(Box::new(Problem {
            type_uri: format!("urn:ringd:problem:{slug}"),
            title: String::new(),
            status,
            detail: String::new(),
            field: None,
            current_version: None,
            reason: None,
            retry_after: None,
        }))
    }

    #[test]
    fn refusals_are_told_apart_by_status_and_slug() {
        assert_eq!(
            classify(&problem(404, "lease-not-found")),
            Failure::LeaseGone
        );
        assert_eq!(classify(&problem(409, "conflict")), Failure::LeaseGone);
        assert_eq!(classify(&problem(404, "ring-not-found")), Failure::Fatal);
        assert_eq!(classify(&problem(400, "invalid-input")), Failure::Fatal);
        assert_eq!(classify(&problem(401, "unauthorized")), Failure::Fatal);
        assert_eq!(classify(&problem(403, "forbidden")), Failure::Fatal);
        assert_eq!(classify(&problem(429, "too-many")), Failure::Transient);
        assert_eq!(classify(&problem(503, "unavailable")), Failure::Transient);
        let status = ClientError::Status {
            status: 404,
            url: "http://a/x".into(),
        };
        assert_eq!(classify(&status), Failure::Fatal);
        let down = ClientError::Unreachable {
            urls: "http://a".into(),
            last: "refused".into(),
        };
        assert_eq!(classify(&down), Failure::Transient);
    }
}
