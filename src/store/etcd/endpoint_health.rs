//! Keeps requests away from etcd members that are down.
//!
//! The client spreads requests over its endpoints with tonic's balancer,
//! which counts a member whose connections are refused as ready and, since
//! it picks the less loaded of two by requests in flight, even prefers it:
//! with one member of three killed, two requests in three failed for as
//! long as it stayed down. So each member is probed on its own; one that
//! does not answer, or answers without knowing a leader, is taken out of
//! the client's endpoints and put back once it is healthy again. When no
//! member is healthy nothing changes, so requests still reach etcd and
//! fail (or succeed) as they would without this.
//!
//! A partition leaves connections that look open: TCP retransmits into
//! the cut with a growing backoff, so after the heal a request on such a
//! connection may wait seconds more. So a member that failed a probe gets
//! new connections once it answers again, the probe's and the client's
//! both, whether or not it had been taken out of rotation.

use std::sync::Arc;
use std::time::Duration;

use etcd_client::{Client, ConnectOptions};
use futures_util::future::join_all;
use tokio::sync::Notify;
use tokio::time::MissedTickBehavior;

/// How often every member is probed: well inside etcd's default election
/// timeout, so a killed leader is out of the set before a new one serves.
const PROBE_INTERVAL: Duration = Duration::from_millis(250);

/// A member that does not answer a probe within this is down.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// One member as the prober sees it.
struct Member {
    /// As configured: `host:port` or a URL.
    endpoint: String,
    /// As the client's balancer keys it: always with a scheme.
    uri: String,
    /// A client for this member alone, once one could be made.
    probe: Option<Client>,
    /// Whether the shared client currently sends requests to it.
    in_use: bool,
    /// Whether it failed a probe since the client last connected to it.
    failed: bool,
}

/// Probes `endpoints` forever, adding and removing them from `client`;
/// spawn it once per store and abort it when the store goes away.
pub(super) async fn follow(
    client: Client,
    endpoints: Vec<String>,
    options: ConnectOptions,
    tls: bool,
    renewed: Arc<Notify>,
) {
    // A probe must get an answer from a member without a leader too, to
    // tell "down" from "up, electing".
    let options = options.with_require_leader(false);
    let mut members: Vec<Member> = endpoints
        .into_iter()
        .map(|endpoint| {
            let uri = if endpoint.contains("://") {
                endpoint.clone()
            } else if tls {
                format!("https://{endpoint}")
            } else {
                format!("http://{endpoint}")
            };
            Member {
                endpoint,
                uri,
                probe: None,
                in_use: true,
                failed: false,
            }
        })
        .collect();
    let mut tick = tokio::time::interval(PROBE_INTERVAL);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        // All at once: one member that does not answer must not delay
        // noticing that another is back.
        let healthy = join_all(members.iter_mut().map(|m| is_healthy(m, &options))).await;
        for (m, &ok) in members.iter_mut().zip(&healthy) {
            if !ok {
                // The next probe connects afresh.
                m.probe = None;
                m.failed = true;
            }
        }
        if !healthy.contains(&true) {
            continue;
        }
        for (m, healthy) in members.iter_mut().zip(healthy) {
            if m.in_use && !healthy {
                match client.remove_endpoint(&m.uri).await {
                    Ok(()) => {
                        tracing::warn!(endpoint = %m.endpoint, "etcd member unhealthy; not sending it requests");
                        m.in_use = false;
                    }
                    Err(e) => {
                        tracing::warn!(endpoint = %m.endpoint, error = %e, "could not remove an etcd endpoint")
                    }
                }
            } else if m.in_use && healthy && m.failed {
                // Back after a failure while still in rotation: replace
                // the connections the cut may have left hanging.
                let reconnected = match client.remove_endpoint(&m.uri).await {
                    Ok(()) => client.add_endpoint(&m.endpoint).await,
                    Err(e) => Err(e),
                };
                match reconnected {
                    Ok(()) => {
                        tracing::info!(endpoint = %m.endpoint, "etcd member answers again; reconnected");
                        m.failed = false;
                        renewed.notify_waiters();
                    }
                    Err(e) => {
                        // Out of rotation now, or not: the next probe
                        // puts it back either way.
                        m.in_use = false;
                        tracing::warn!(endpoint = %m.endpoint, error = %e, "could not renew an etcd endpoint")
                    }
                }
            } else if !m.in_use && healthy {
                match client.add_endpoint(&m.endpoint).await {
                    Ok(()) => {
                        tracing::info!(endpoint = %m.endpoint, "etcd member healthy again");
                        m.in_use = true;
                        m.failed = false;
                        renewed.notify_waiters();
                    }
                    Err(e) => {
                        tracing::warn!(endpoint = %m.endpoint, error = %e, "could not add an etcd endpoint")
                    }
                }
            }
        }
    }
}

/// Whether `m` answers a status request and knows a leader.
async fn is_healthy(m: &mut Member, options: &ConnectOptions) -> bool {
    let attempt = async {
        if m.probe.is_none() {
            m.probe = Some(Client::connect([&m.endpoint], Some(options.clone())).await?);
        }
        let probe = m.probe.as_mut().expect("probe client just made");
        probe.status().await.map(|s| s.leader() != 0)
    };
    matches!(
        tokio::time::timeout(PROBE_TIMEOUT, attempt).await,
        Ok(Ok(true))
    )
}
