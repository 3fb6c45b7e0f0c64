//! `ringd watch RING`: one line per version, from the ring's SSE watch.
//!
//! The stream runs in full mode: each event carries the snapshot and so
//! the ops that produced it, which is what an operator wants to see (the
//! light mode only counts them).

use std::time::Duration;

use clap::Args;
use serde_json::{json, Value};

use super::context::{decode, ring_path};
use super::describe::describe_ops;
use super::output::{emit, emit_json_line, escape, percent, time};
use super::{CliError, Context};
use crate::client::sse::{SseDecoder, SseEvent};
use crate::client::ClientError;
use crate::wire::SnapshotView;

/// Consecutive failed reconnections after which `watch` gives up.
const RECONNECT_ATTEMPTS: u32 = 5;

/// `ringd watch RING [--count N] [--after V]`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The ring.
    pub ring: String,
    /// Exit after printing N version lines (the first is the current
    /// version, or the first after --after).
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// Start after this version, replaying the retained versions since
    /// [default: start with the current version].
    #[arg(long, value_name = "V")]
    pub after: Option<u64>,
}

/// Follows the ring until interrupted, or until `--count` lines.
pub async fn run(ctx: &Context, a: WatchArgs) -> Result<(), CliError> {
    let mut printed = 0u64;
    let mut last = a.after;
    let mut failures = 0;
    if a.count == Some(0) {
        return Ok(());
    }
    loop {
        let path = ring_path(&a.ring, "/watch");
        let resume = last.map(|v| v.to_string());
        let headers: Vec<(&str, &str)> = resume
            .iter()
            .map(|v| ("last-event-id", v.as_str()))
            .collect();
        let (mut resp, url) = match ctx.stream(&path, &headers).await {
            Ok(open) => open,
            // Once the stream has run, a server that went away may be
            // restarting: try again a few times before giving up.
            Err(CliError::Client(ClientError::Unreachable { .. }))
                if printed > 0 && failures < RECONNECT_ATTEMPTS =>
            {
                failures += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        failures = 0;
        let mut decoder = SseDecoder::new();
        let mut events = Vec::new();
        loop {
            let chunk = match resp.chunk().await {
                Ok(Some(chunk)) => chunk,
                // The stream ended (server shutdown) or broke: reconnect
                // and resume after the last version printed.
                Ok(None) | Err(_) => break,
            };
            decoder
                .feed(&chunk, &mut events)
                .map_err(|e| CliError::decode(&url, e))?;
            for event in events.drain(..) {
                if let Some(version) = print_event(ctx, &a.ring, &event)? {
                    last = Some(version);
                    printed += 1;
                    if a.count.is_some_and(|n| printed >= n) {
                        return Ok(());
                    }
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Prints one event; returns the version of a version line.
fn print_event(ctx: &Context, ring: &str, event: &SseEvent) -> Result<Option<u64>, CliError> {
    match event.event.as_str() {
        "snapshot" | "reset" => {
            let value: Value = serde_json::from_str(&event.data)
                .map_err(|e| CliError::decode("watch event", e))?;
            let s: SnapshotView = decode("watch event", &value)?;
            if ctx.json() {
                emit_json_line(&json!({
                    "event": event.event,
                    "ring": s.ring,
                    "version": s.version,
                    "fingerprint": s.fingerprint,
                    "created_at": value["created_at"],
                    "moved_fraction": s.change.moved_fraction,
                    "ops": s.change.ops,
                    "reason": s.change.reason,
                }))?;
            } else {
                let reset = if event.event == "reset" {
                    "reset to "
                } else {
                    ""
                };
                let reason = s
                    .change
                    .reason
                    .as_ref()
                    .map(|r| format!("; reason: {r}"))
                    .unwrap_or_default();
                // One line per version, whatever the stored text holds.
                let line = format!(
                    "{reset}version {} at {}: moved {}; {}{reason}",
                    s.version,
                    time(s.created_at),
                    percent(s.change.moved_fraction),
                    describe_ops(&s.change.ops),
                );
                emit(&format!("{}\n", escape(&line)))?;
            }
            Ok(Some(s.version))
        }
        "deleted" => {
            if ctx.json() {
                emit_json_line(&json!({"event": "deleted", "ring": ring}))?;
            } else {
                emit(&format!("ring {} was deleted\n", escape(ring)))?;
            }
            Ok(None)
        }
        // Keep-alives and unknown events say nothing new.
        _ => Ok(None),
    }
}
