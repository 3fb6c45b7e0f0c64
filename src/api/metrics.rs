//! Request metrics in the Prometheus text format, without a metrics crate:
//! a counter and a latency histogram per (method, route template, status).
//!
//! Routes are labelled by template (`/v1/rings/{ring}`), never by the
//! concrete path, so the number of series stays bounded whatever clients
//! send.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Duration;

use crate::hub::HubStats;
use crate::ring::{NodeHealth, RingName, Snapshot};
use crate::service::GuardRule;
use crate::service::{Convergence, ConvergenceSummary, Term};

/// Upper bounds of the latency histogram buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

#[derive(Debug, Default, Clone)]
struct Series {
    count: u64,
    sum: f64,
    /// Per bucket, observations at or below its bound (not cumulative).
    buckets: [u64; BUCKETS.len()],
}

/// Series by route template, then by (method, status). Nested so that
/// recording a request allocates nothing once its series exists.
type Table = BTreeMap<String, BTreeMap<(&'static str, u16), Series>>;

/// Request counts and latencies.
#[derive(Debug, Default)]
pub struct Metrics {
    series: Mutex<Table>,
}

impl Metrics {
    /// Empty metrics.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one request.
    pub fn observe(&self, method: &'static str, route: &str, status: u16, latency: Duration) {
        let secs = latency.as_secs_f64();
        let mut table = self.series.lock().expect("metrics lock");
        let by_route = match table.get_mut(route) {
            Some(m) => m,
            None => table.entry(route.to_owned()).or_default(),
        };
        let s = by_route.entry((method, status)).or_default();
        s.count += 1;
        s.sum += secs;
        if let Some(i) = BUCKETS.iter().position(|&b| secs <= b) {
            s.buckets[i] += 1;
        }
    }

    /// The Prometheus text exposition: request series, then each ring's
    /// latest version and node counts from `rings`.
    pub fn render(&self, rings: &[Snapshot]) -> String {
        let table = self.series.lock().expect("metrics lock").clone();
        let series: Vec<(String, &Series)> = table
            .iter()
            .flat_map(|(route, m)| {
                m.iter()
                    .map(move |((method, status), s)| (labels(route, method, *status), s))
            })
            .collect();
        let mut out = String::new();
        out.push_str("# HELP ringd_http_requests_total HTTP requests by route template, method and status.\n");
        out.push_str("# TYPE ringd_http_requests_total counter\n");
        for (l, s) in &series {
            let _ = writeln!(out, "ringd_http_requests_total{{{l}}} {}", s.count);
        }
        out.push_str(
            "# HELP ringd_http_request_duration_seconds Time to produce the response head.\n",
        );
        out.push_str("# TYPE ringd_http_request_duration_seconds histogram\n");
        for (l, s) in &series {
            let mut cumulative = 0;
            for (bound, n) in BUCKETS.iter().zip(s.buckets) {
                cumulative += n;
                let _ = writeln!(
                    out,
                    "ringd_http_request_duration_seconds_bucket{{{l},le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "ringd_http_request_duration_seconds_bucket{{{l},le=\"+Inf\"}} {}",
                s.count
            );
            let _ = writeln!(
                out,
                "ringd_http_request_duration_seconds_sum{{{l}}} {}",
                s.sum
            );
            let _ = writeln!(
                out,
                "ringd_http_request_duration_seconds_count{{{l}}} {}",
                s.count
            );
        }
        out.push_str("# HELP ringd_ring_version Latest version of each ring.\n");
        out.push_str("# TYPE ringd_ring_version gauge\n");
        for r in rings {
            let _ = writeln!(
                out,
                "ringd_ring_version{{ring=\"{}\"}} {}",
                r.ring, r.version
            );
        }
        out.push_str("# HELP ringd_ring_nodes Nodes of each ring's latest version, by state.\n");
        out.push_str("# TYPE ringd_ring_nodes gauge\n");
        for r in rings {
            let active = r.nodes.iter().filter(|n| n.to_node().is_active()).count();
            let draining = r.nodes.len() - active;
            let _ = writeln!(
                out,
                "ringd_ring_nodes{{ring=\"{}\",state=\"active\"}} {active}",
                r.ring
            );
            let _ = writeln!(
                out,
                "ringd_ring_nodes{{ring=\"{}\",state=\"draining\"}} {draining}",
                r.ring
            );
        }
        out
    }
}

/// The notification hub's gauges and counters.
pub fn render_hub(stats: &HubStats) -> String {
    let read = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let mut out = String::new();
    for (name, kind, help, value) in [
        (
            "ringd_watch_streams",
            "gauge",
            "Watch (SSE) streams open now.",
            read(&stats.open_streams),
        ),
        (
            "ringd_watch_events_sent_total",
            "counter",
            "Events written to watch streams, keep-alives included.",
            read(&stats.events_sent),
        ),
        (
            "ringd_watch_resets_total",
            "counter",
            "Reset events sent to watch streams.",
            read(&stats.resets),
        ),
        (
            "ringd_long_polls_waiting",
            "gauge",
            "Long-poll requests waiting for a new version now.",
            read(&stats.long_polls_waiting),
        ),
    ] {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
        );
    }
    out.push_str(
        "# HELP ringd_health_transitions_total Node health transitions seen, by ring and by the health reached (removed: the node left the ring).\n# TYPE ringd_health_transitions_total counter\n",
    );
    let transitions = stats.health_transitions.lock().expect("hub lock").clone();
    for ((ring, to), n) in transitions {
        let _ = writeln!(
            out,
            "ringd_health_transitions_total{{ring=\"{ring}\",to=\"{to}\"}} {n}"
        );
    }
    out
}

/// The client convergence gauges of `rings`. Ring names need no label
/// escaping: they are `[a-z0-9._-]` only.
pub fn render_clients(rings: &[Convergence]) -> String {
    let mut out = String::new();
    let mut family =
        |name: &str, help: &str, value: &dyn Fn(&ConvergenceSummary) -> Option<String>| {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} gauge");
            for c in rings {
                if let Some(v) = value(&c.summary) {
                    let _ = writeln!(out, "{name}{{ring=\"{}\"}} {v}", c.current.ring);
                }
            }
        };
    family(
        "ringd_clients",
        "Clients with a live ack, per ring.",
        &|s| Some(s.clients.to_string()),
    );
    family(
        "ringd_clients_on_latest_ratio",
        "Share of a ring's live clients that applied its latest version (absent without clients).",
        &|s| s.on_latest_share.map(|r| r.to_string()),
    );
    family(
        "ringd_clients_divergent",
        "Live clients whose placement fingerprint differs from the server's, per ring.",
        &|s| Some(s.divergent.to_string()),
    );
    family(
        "ringd_clients_failing",
        "Live clients (proxies kept by ringd sync) that report a newer version they could not apply, per ring.",
        &|s| Some(s.failing.to_string()),
    );
    out
}

/// The nodes of each ring by health (`ringd_nodes{ring,health}`), every
/// health listed so a count that drops to zero shows as zero.
pub fn render_health(rings: &[(RingName, BTreeMap<NodeHealth, u64>)]) -> String {
    let mut out = String::from(
        "# HELP ringd_nodes Nodes per ring by health (healthy, unhealthy, left, unmanaged).\n# TYPE ringd_nodes gauge\n",
    );
    for (ring, counts) in rings {
        for (health, n) in counts {
            let _ = writeln!(
                out,
                "ringd_nodes{{ring=\"{ring}\",health=\"{}\"}} {n}",
                health.as_str()
            );
        }
    }
    out
}

/// Whether this instance is the decision-maker (`ringd_leader`) and in
/// which term (`ringd_leader_term`, 0 while it is not).
pub fn render_leadership(term: Option<Term>) -> String {
    format!(
        "# HELP ringd_leader 1 while this instance is the decision-maker of automatic membership changes, else 0.\n\
         # TYPE ringd_leader gauge\n\
         ringd_leader {}\n\
         # HELP ringd_leader_term The term this instance decides in; 0 while it does not.\n\
         # TYPE ringd_leader_term gauge\n\
         ringd_leader_term {}\n",
        u8::from(term.is_some()),
        term.map_or(0, |t| t.0)
    )
}

/// Whether the partition guard holds each ring's automatic transitions
/// back, by rule (`ringd_membership_guard_blocked{ring,rule}`): 1 for the
/// rule that holds, 0 for the others, so a cleared rule shows as 0.
pub fn render_guard(rings: &[(RingName, Option<GuardRule>)]) -> String {
    let mut out = String::from(
        "# HELP ringd_membership_guard_blocked Whether the partition guard holds a ring's automatic drains and removals back, by rule.\n# TYPE ringd_membership_guard_blocked gauge\n",
    );
    for (ring, blocked) in rings {
        for rule in GuardRule::ALL {
            let _ = writeln!(
                out,
                "ringd_membership_guard_blocked{{ring=\"{ring}\",rule=\"{}\"}} {}",
                rule.name(),
                u8::from(*blocked == Some(rule))
            );
        }
    }
    out
}

/// Label text; route templates and methods contain no quote or backslash
/// that would need escaping, but escape anyway so output stays parseable.
fn labels(route: &str, method: &str, status: u16) -> String {
    format!(
        "route=\"{}\",method=\"{}\",status=\"{status}\"",
        escape(route),
        escape(method)
    )
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_is_cumulative() {
        let m = Metrics::new();
        m.observe("GET", "/healthz", 200, Duration::from_micros(50));
        m.observe("GET", "/healthz", 200, Duration::from_millis(2));
        let text = m.render(&[]);
        assert!(text.contains(
            "ringd_http_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\"} 2"
        ));
        assert!(text.contains("le=\"0.0001\"} 1"));
        assert!(text.contains("le=\"0.0025\"} 2"));
        assert!(text.contains("le=\"+Inf\"} 2"));
    }

    fn convergence(ring: &str, clients: u64, on_latest: u64, divergent: u64) -> Convergence {
        use crate::placement::{Algorithm, RingConfig};
        use crate::ring::{RingName, Role};
        let at = time::OffsetDateTime::from_unix_timestamp(1_750_000_000).unwrap();
        let name = RingName::new(ring).unwrap();
        let (first, _) =
            Snapshot::first(name, RingConfig::new(Algorithm::Ring), Role::Admin, at).unwrap();
        Convergence {
            current: std::sync::Arc::new(first),
            clients: Vec::new(),
            summary: ConvergenceSummary {
                clients,
                on_latest,
                on_latest_share: (clients > 0).then(|| on_latest as f64 / clients as f64),
                divergent,
                failing: 0,
            },
        }
    }

    #[test]
    fn metrics_skip_the_ratio_without_clients() {
        let text = render_clients(&[convergence("r", 4, 3, 1), convergence("empty", 0, 0, 0)]);
        assert!(text.contains("ringd_clients{ring=\"r\"} 4\n"), "{text}");
        assert!(text.contains("ringd_clients{ring=\"empty\"} 0\n"), "{text}");
        assert!(text.contains("ringd_clients_on_latest_ratio{ring=\"r\"} 0.75\n"));
        assert!(!text.contains("ringd_clients_on_latest_ratio{ring=\"empty\"}"));
        assert!(text.contains("ringd_clients_divergent{ring=\"r\"} 1\n"));
        assert!(text.contains("# TYPE ringd_clients_divergent gauge\n"));
    }

    #[test]
    fn health_transitions_are_counted_per_ring_and_health_reached() {
        let stats = HubStats::default();
        {
            let mut t = stats.health_transitions.lock().unwrap();
            t.insert((RingName::new("r").unwrap(), "unhealthy"), 2);
            t.insert((RingName::new("r").unwrap(), "healthy"), 3);
            t.insert((RingName::new("a").unwrap(), "removed"), 1);
        }
        let text = render_hub(&stats);
        let tail = text
            .split_once("# HELP ringd_health_transitions_total")
            .unwrap()
            .1;
        assert_eq!(
            tail,
            " Node health transitions seen, by ring and by the health reached (removed: the node left the ring).\n\
             # TYPE ringd_health_transitions_total counter\n\
             ringd_health_transitions_total{ring=\"a\",to=\"removed\"} 1\n\
             ringd_health_transitions_total{ring=\"r\",to=\"healthy\"} 3\n\
             ringd_health_transitions_total{ring=\"r\",to=\"unhealthy\"} 2\n"
        );
    }

    #[test]
    fn leadership_gauges_say_whether_and_in_which_term() {
        assert_eq!(
            render_leadership(Some(Term(42))),
            "# HELP ringd_leader 1 while this instance is the decision-maker of automatic membership changes, else 0.\n\
             # TYPE ringd_leader gauge\n\
             ringd_leader 1\n\
             # HELP ringd_leader_term The term this instance decides in; 0 while it does not.\n\
             # TYPE ringd_leader_term gauge\n\
             ringd_leader_term 42\n"
        );
        let follower = render_leadership(None);
        assert!(follower.contains("\nringd_leader 0\n"), "{follower}");
        assert!(follower.ends_with("\nringd_leader_term 0\n"), "{follower}");
    }

    #[test]
    fn node_health_is_counted_per_ring_with_every_health_listed() {
        let ring = RingName::new("r").unwrap();
        let counts = NodeHealth::ALL
            .iter()
            .zip([3, 1, 0, 2])
            .map(|(h, n)| (*h, n))
            .collect();
        assert_eq!(
            render_health(&[(ring, counts)]),
            "# HELP ringd_nodes Nodes per ring by health (healthy, unhealthy, left, unmanaged).\n\
             # TYPE ringd_nodes gauge\n\
             ringd_nodes{ring=\"r\",health=\"healthy\"} 3\n\
             ringd_nodes{ring=\"r\",health=\"unhealthy\"} 1\n\
             ringd_nodes{ring=\"r\",health=\"left\"} 0\n\
             ringd_nodes{ring=\"r\",health=\"unmanaged\"} 2\n"
        );
    }
}
