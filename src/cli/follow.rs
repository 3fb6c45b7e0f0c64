//! `ringd follow RING --client-id ID`: a canary client. It runs the client
//! library ([`RingClient`]) exactly as an application does: it watches the
//! ring, verifies each snapshot's fingerprint, applies it and acks it
//! under the given id, so the ring's `GET …/clients` (and a rollout's
//! gate) counts it like any other client. It prints one line per version
//! it applied (or refused), and runs until SIGINT or SIGTERM (exit 0) or
//! until `--count` versions.
//!
//! Operators run it next to a fleet to see what a client sees: a version
//! the server commits but that no client can verify, a rollout step that
//! clients are slow to pick up, a server whose stream does not reach them.

use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use serde_json::{json, Value};
use tokio::sync::broadcast::error::RecvError;

use super::context::ring_path;
use super::output::{emit, emit_json_line, escape, percent};
use super::{CliError, Context};
use crate::client::{ClientError, RingClient, RingEvent, RingView, VersionChange};
use crate::ring::ClientId;

/// How often the client's status is read for a new connection error.
const STATUS_EVERY: Duration = Duration::from_millis(500);

/// `ringd follow RING --client-id ID [--count N]`.
#[derive(Debug, Args)]
pub struct FollowArgs {
    /// The ring.
    pub ring: String,
    /// The id to ack under, as `ringd clients` lists it: 1–128 characters
    /// of `A-Z a-z 0-9 . _ - :`. Keep it the same across restarts, so a
    /// restarted canary replaces its own entry.
    #[arg(long, value_name = "ID", value_parser = parse_client_id)]
    pub client_id: ClientId,
    /// Exit after applying N versions (the first is the current one), once
    /// the server has recorded the ack of the last.
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
}

pub(super) fn parse_client_id(text: &str) -> Result<ClientId, String> {
    ClientId::new(text).map_err(|e| e.to_string())
}

/// Follows the ring until interrupted, or until `--count` versions.
pub async fn run(ctx: &Context, a: FollowArgs) -> Result<(), CliError> {
    if a.count == Some(0) {
        return Ok(());
    }
    say(&format!(
        "following ring {} as client {} via {}",
        a.ring,
        a.client_id,
        ctx.endpoints.urls().join(",")
    ));
    check_ring(ctx, &a.ring).await?;
    let client = ctx
        .ring_client(&a.ring)
        .client_id(a.client_id.as_str())
        .start()
        .map_err(CliError::Usage)?;
    // Before the first event can be sent: the watch sends events only
    // while someone listens.
    let mut events = client.subscribe();
    let mut out = Printer {
        json: ctx.json(),
        ring: a.ring.clone(),
        client_id: a.client_id.to_string(),
        last: None,
        applied: 0,
    };
    let stop = crate::server::shutdown_signal();
    tokio::pin!(stop);
    let mut status = tokio::time::interval(STATUS_EVERY);
    let mut shown_error: Option<String> = None;
    loop {
        if a.count.is_some_and(|n| out.applied >= n) {
            return wait_for_ack(&client, out.last.unwrap_or(0), stop.as_mut()).await;
        }
        tokio::select! {
            // The signal first: it is registered before anything is printed.
            biased;
            () = stop.as_mut() => return Ok(()),
            _ = status.tick() => {
                // The watch may have applied the first version before the
                // subscription began, and sent no event for it then. Later
                // versions come with their event (and its movement).
                if out.last.is_none() {
                    if let Some(view) = client.current() {
                        out.applied_view(&view, None)?;
                    }
                }
                let s = client.status();
                if s.last_error.is_some() && s.last_error != shown_error {
                    say(&format!("retrying: {}", s.last_error.as_deref().unwrap_or("")));
                    shown_error = s.last_error;
                }
            }
            event = events.recv() => match event {
                Ok(RingEvent::Applied(change)) => out.applied_change(&change)?,
                Ok(RingEvent::Rejected { version, error }) => {
                    shown_error = Some(error.clone());
                    out.rejected(version, &error)?;
                }
                Ok(RingEvent::Deleted) => out.deleted()?,
                // Fell behind: the current view is authoritative.
                Err(RecvError::Lagged(_)) => {
                    if let Some(view) = client.current() {
                        out.applied_view(&view, None)?;
                    }
                }
                Err(RecvError::Closed) => return Err(ClientError::Closed.into()),
            },
        }
    }
}

/// Reads the ring once before following it: an unknown ring or a refused
/// token would otherwise only show as retries. Refusals exit 2, as for
/// `node join`, so a service manager does not restart the canary in a
/// loop; a server that cannot be reached (or fails) is retried by the
/// client like any later outage.
pub(super) async fn check_ring(ctx: &Context, ring: &str) -> Result<(), CliError> {
    match ctx.get(&ring_path(ring, "")).await {
        Ok(_) => Ok(()),
        Err(CliError::Client(e)) if e.status().is_some_and(|s| (400..500).contains(&s)) => {
            Err(CliError::Usage(e))
        }
        Err(CliError::Client(e)) => {
            say(&format!("retrying: {e}"));
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Waits until the server has recorded an ack of `version` or a later
/// one, so that `--count` leaves the client counted where it stopped.
async fn wait_for_ack(
    client: &RingClient,
    version: u64,
    mut stop: Pin<&mut impl Future<Output = ()>>,
) -> Result<(), CliError> {
    loop {
        tokio::select! {
            biased;
            () = stop.as_mut() => return Ok(()),
            acked = client.wait_for_ack(version, Duration::from_secs(60)) => match acked {
                Ok(()) => return Ok(()),
                // Still trying (the server is away): keep waiting.
                Err(ClientError::Timeout(_)) => continue,
                Err(e) => return Err(e.into()),
            },
        }
    }
}

/// What has been printed, and how to print the next line.
struct Printer {
    json: bool,
    ring: String,
    client_id: String,
    /// The version of the last line printed.
    last: Option<u64>,
    /// Versions printed.
    applied: u64,
}

impl Printer {
    /// A version the watch announced: printed unless it was printed from
    /// the current view already (only a reset goes back).
    fn applied_change(&mut self, c: &VersionChange) -> Result<(), CliError> {
        if !c.reset && self.last.is_some_and(|v| v >= c.to) {
            return Ok(());
        }
        if c.reset && self.last == Some(c.to) {
            return Ok(());
        }
        let moved = c.diff.as_ref().map(|d| d.moved_fraction);
        self.line(&c.view, c.from.or(self.last), moved, c.reset)
    }

    /// The current view, seen without its event: printed if it is new.
    fn applied_view(&mut self, view: &Arc<RingView>, moved: Option<f64>) -> Result<(), CliError> {
        if self.last.is_some_and(|v| v >= view.version()) {
            return Ok(());
        }
        self.line(view, self.last, moved, false)
    }

    fn line(
        &mut self,
        view: &RingView,
        from: Option<u64>,
        moved: Option<f64>,
        reset: bool,
    ) -> Result<(), CliError> {
        let nodes = view.snapshot().nodes.len();
        let active = view.placement().nodes().len();
        if self.json {
            emit_json_line(&json!({
                "event": "applied",
                "ring": self.ring,
                "client_id": self.client_id,
                "version": view.version(),
                "fingerprint": view.fingerprint().to_string(),
                "nodes": nodes,
                "active_nodes": active,
                "from": from,
                "reset": reset,
                "moved_fraction": moved,
            }))?;
        } else {
            let line = applied_line(
                view.version(),
                &view.fingerprint().to_string(),
                (nodes, active),
                from,
                moved,
                reset,
            );
            emit(&format!("{line}\n"))?;
        }
        self.last = Some(view.version());
        self.applied += 1;
        Ok(())
    }

    /// A version that failed verification: the client keeps the one it had.
    fn rejected(&self, version: u64, error: &str) -> Result<(), CliError> {
        if self.json {
            return emit_json_line(&json!({
                "event": "rejected",
                "ring": self.ring,
                "client_id": self.client_id,
                "version": version,
                "error": error,
                "kept": self.last,
            }));
        }
        let kept = self
            .last
            .map_or_else(|| "no version yet".to_owned(), |v| format!("still on v{v}"));
        // The error quotes what the server sent.
        emit(&format!("v{version} rejected: {}; {kept}\n", escape(error)))
    }

    fn deleted(&self) -> Result<(), CliError> {
        if self.json {
            let value: Value = json!({"event": "deleted", "ring": self.ring, "kept": self.last});
            return emit_json_line(&value);
        }
        let kept = self
            .last
            .map_or_else(String::new, |v| format!("; still routing on v{v}"));
        emit(&format!("ring {} was deleted{kept}\n", escape(&self.ring)))
    }
}

/// The text line of an applied version: `v13 <fingerprint> 11 nodes (11
/// active); moved 4.76% since v12`. Every part is a number or hex, so
/// nothing needs escaping.
fn applied_line(
    version: u64,
    fingerprint: &str,
    (nodes, active): (usize, usize),
    from: Option<u64>,
    moved: Option<f64>,
    reset: bool,
) -> String {
    let noun = if nodes == 1 { "node" } else { "nodes" };
    let mut line = format!("v{version} {fingerprint} {nodes} {noun} ({active} active)");
    match (from, moved, reset) {
        (Some(f), Some(m), true) => {
            line.push_str(&format!("; reset from v{f}, moved {}", percent(m)));
        }
        (Some(f), _, true) => line.push_str(&format!("; reset from v{f}")),
        (Some(f), Some(m), false) => line.push_str(&format!("; moved {} since v{f}", percent(m))),
        _ => {}
    }
    line
}

/// Prints one line to stderr, escaped: it may carry what the server said.
pub(super) fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}", escape(line));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_applied_version() {
        let fp = "ab".repeat(32);
        assert_eq!(
            applied_line(12, &fp, (1, 1), None, None, false),
            format!("v12 {fp} 1 node (1 active)")
        );
        assert_eq!(
            applied_line(13, &fp, (11, 10), Some(12), Some(0.047_62), false),
            format!("v13 {fp} 11 nodes (10 active); moved 4.76% since v12")
        );
        // Seen through the current view after falling behind: no movement.
        assert_eq!(
            applied_line(20, &fp, (2, 2), Some(13), None, false),
            format!("v20 {fp} 2 nodes (2 active)")
        );
        assert_eq!(
            applied_line(3, &fp, (2, 2), Some(20), Some(0.5), true),
            format!("v3 {fp} 2 nodes (2 active); reset from v20, moved 50.00%")
        );
        assert_eq!(
            applied_line(3, &fp, (0, 0), Some(20), None, true),
            format!("v3 {fp} 0 nodes (0 active); reset from v20")
        );
    }

    #[test]
    fn client_ids_follow_the_ack_rules() {
        assert!(parse_client_id("canary-1.eu:a").is_ok());
        assert!(parse_client_id("bad id").is_err());
        assert!(parse_client_id("").is_err());
    }
}
