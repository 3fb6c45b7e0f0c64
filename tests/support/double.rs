//! A test double of ringd's read routes for the client-library tests:
//! it serves `snapshot`, `snapshots/{version}` and `watch` (SSE and long
//! poll) from a list of snapshots the test publishes, so a test can hand
//! the client what no honest server would (a tampered snapshot), and
//! count what the client fetched.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::response::Response;
use axum::routing::get;
use ringd::ring::Snapshot;
use ringd::wire::SnapshotView;

/// What the double serves: the published snapshots (index = version − 1),
/// a signal for each publication, and how often the tampered version was
/// served.
#[derive(Clone)]
pub(crate) struct Double {
    published: Arc<Mutex<Vec<Arc<String>>>>,
    signal: tokio::sync::watch::Sender<usize>,
    /// How often the tampered version was served.
    pub tampered_served: Arc<AtomicUsize>,
    tampered_version: u64,
}

impl Double {
    /// Publishes `s`, the next version, in the body ringd sends for it.
    pub(crate) fn publish(&self, s: &Snapshot) {
        let mut p = self.published.lock().unwrap();
        assert_eq!(p.len() as u64 + 1, s.version);
        p.push(Arc::new(
            serde_json::to_string(&SnapshotView::from(s)).unwrap(),
        ));
        self.signal.send_replace(p.len());
    }

    fn get(&self, v: u64) -> Option<Arc<String>> {
        let p = self.published.lock().unwrap();
        let s = p.get(usize::try_from(v).ok()?.checked_sub(1)?).cloned();
        if s.is_some() && v == self.tampered_version {
            self.tampered_served.fetch_add(1, Ordering::SeqCst);
        }
        s
    }

    /// The newest published version.
    pub(crate) fn newest(&self) -> u64 {
        self.published.lock().unwrap().len() as u64
    }
}

fn json(body: &str) -> Response {
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap()
}

fn status(code: u16) -> Response {
    Response::builder()
        .status(code)
        .body(Body::empty())
        .unwrap()
}

/// `GET …/snapshot[?after=N&wait=Dms]`, as ringd answers it.
async fn snapshot(State(d): State<Double>, Query(q): Query<HashMap<String, String>>) -> Response {
    let Some(after) = q.get("after").map(|a| a.parse::<u64>().unwrap()) else {
        return match d.get(d.newest()) {
            Some(s) => json(&s),
            None => status(404),
        };
    };
    let wait: u64 = q["wait"].strip_suffix("ms").unwrap().parse().unwrap();
    let mut signal = d.signal.subscribe();
    let deadline = tokio::time::Instant::now() + Duration::from_millis(wait);
    loop {
        let newest = d.newest();
        if newest > after {
            return json(&d.get(newest).unwrap());
        }
        if tokio::time::timeout_at(deadline, signal.changed())
            .await
            .is_err()
        {
            return status(304);
        }
    }
}

/// `GET …/snapshots/{v}`.
async fn snapshot_at(State(d): State<Double>, Path((_, v)): Path<(String, u64)>) -> Response {
    d.get(v).map_or_else(|| status(404), |s| json(&s))
}

/// `GET …/watch[?after=N]`: every published version after N (or the
/// newest first), then each new one.
async fn watch(State(d): State<Double>, Query(q): Query<HashMap<String, String>>) -> Response {
    let next = match q.get("after") {
        Some(a) => a.parse::<u64>().unwrap() + 1,
        None => d.newest().max(1),
    };
    let signal = d.signal.subscribe();
    let stream = futures::stream::unfold((d, signal, next), |(d, mut signal, next)| async move {
        loop {
            if let Some(s) = d.get(next) {
                let frame = format!("event: snapshot\nid: {next}\ndata: {s}\n\n");
                return Some((
                    Ok::<_, std::convert::Infallible>(Bytes::from(frame)),
                    (d, signal, next + 1),
                ));
            }
            signal.changed().await.ok()?;
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .unwrap()
}

/// Starts a double on a free loopback port; returns its URL. Serving
/// `tampered_version` is counted in [`Double::tampered_served`].
pub(crate) async fn start_double(tampered_version: u64) -> (String, Double) {
    let d = Double {
        published: Arc::default(),
        signal: tokio::sync::watch::channel(0).0,
        tampered_served: Arc::default(),
        tampered_version,
    };
    let app = axum::Router::new()
        .route("/v1/rings/{ring}/snapshot", get(snapshot))
        .route("/v1/rings/{ring}/snapshots/{version}", get(snapshot_at))
        .route("/v1/rings/{ring}/watch", get(watch))
        .with_state(d.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, d)
}
