//! Death to drain: one node stops renewing, and the time until each
//! instance serves a version in which it is drained (or removed).

use std::fmt::Write as _;
use std::time::{Duration, Instant, SystemTime};

use reqwest::{Method, StatusCode};
use ringd::ring::durations::parse_duration;
use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::renewer::{Fleet, VICTIM};
use crate::setup::{node_id, Api};
use crate::Options;

/// How often each instance is asked for the victim's record: the
/// resolution of the times seen; the version's own `created_at` is exact.
const POLL_EVERY: Duration = Duration::from_millis(50);

/// What one instance showed first.
#[derive(Clone)]
struct Seen {
    at: Instant,
    wall: SystemTime,
    version: Option<u64>,
    state: String,
}

fn secs(d: time::Duration) -> String {
    format!("{:.2} s", d.as_seconds_f64())
}

/// Stops the victim's renewals and waits for its drain; returns the
/// report's text.
pub(crate) async fn measure(o: &Options, api: &Api, fleet: &Fleet, drain_after: &str) -> String {
    let drain = parse_duration(drain_after).unwrap_or_default();
    let victim = node_id(VICTIM);
    let rx = fleet.victim.lock().expect("victim lock").take();
    fleet
        .shared
        .kill_victim
        .store(true, std::sync::atomic::Ordering::Release);
    let Some(Ok(last)) = (match rx {
        Some(rx) => Some(rx.await),
        None => None,
    }) else {
        return format!("death-to-drain: {victim} never renewed successfully; nothing to time");
    };
    let deadline = OffsetDateTime::parse(&last.deadline, &Rfc3339).ok();
    let give_up = last.at + o.ttl + drain + o.drain_timeout;
    let path = format!("{}/nodes/{victim}", api.ring_path);
    let mut seen: Vec<Option<Seen>> = vec![None; api.instances()];
    while seen.iter().any(Option::is_none) && Instant::now() < give_up {
        for (i, slot) in seen.iter_mut().enumerate().filter(|(_, s)| s.is_none()) {
            let Ok(r) = api.request(Method::GET, i, &path).send().await else {
                continue;
            };
            let version = r
                .headers()
                .get("etag")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim_matches('"').parse().ok());
            let state = if r.status() == StatusCode::NOT_FOUND {
                "removed".to_string()
            } else {
                let body: Value = r.json().await.unwrap_or_default();
                body["state"].as_str().unwrap_or("").to_string()
            };
            if state == "draining" || state == "removed" {
                *slot = Some(Seen {
                    at: Instant::now(),
                    wall: SystemTime::now(),
                    version,
                    state,
                });
            }
        }
        tokio::time::sleep(POLL_EVERY).await;
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        "death-to-drain: {victim} stopped renewing (ttl {:?}, drain_after {drain_after}); \
         its last renewal answered deadline {}",
        o.ttl, last.deadline
    );
    let _ = writeln!(
        out,
        "| instance | state | version | after last renewal | after lease deadline |"
    );
    let _ = writeln!(out, "|---:|---|---:|---:|---:|");
    for (i, s) in seen.iter().enumerate() {
        match s {
            Some(s) => {
                let after_deadline = deadline
                    .map(|d| secs(OffsetDateTime::from(s.wall) - d))
                    .unwrap_or_else(|| "?".into());
                let _ = writeln!(
                    out,
                    "| {i} | {} | {} | {:.2} s | {after_deadline} |",
                    s.state,
                    s.version.map_or("?".into(), |v| v.to_string()),
                    s.at.duration_since(last.at).as_secs_f64(),
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "| {i} | not drained within {:?} after deadline + drain_after | | | |",
                    o.drain_timeout
                );
            }
        }
    }
    // The version's own timestamp and reason, from the history.
    let version = seen.iter().flatten().find_map(|s| s.version);
    if let (Some(v), Some(d)) = (version, deadline) {
        let history = api
            .request(Method::GET, 0, &format!("{}/history", api.ring_path))
            .send()
            .await;
        let body: Value = match history {
            Ok(r) => r.json().await.unwrap_or_default(),
            Err(_) => Value::Null,
        };
        let entry = body["entries"]
            .as_array()
            .and_then(|e| e.iter().find(|e| e["version"].as_u64() == Some(v)));
        if let Some(e) = entry {
            let created = e["created_at"]
                .as_str()
                .and_then(|c| OffsetDateTime::parse(c, &Rfc3339).ok());
            let _ = writeln!(
                out,
                "version {v}: created {} after the lease deadline; reason: {}",
                created.map_or("?".into(), |c| secs(c - d)),
                e["reason"]
            );
        }
    }
    out
}
