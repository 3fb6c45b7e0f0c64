//! What the background tasks run with: plain values taken from a validated
//! [`ClientBuilder`](super::ClientBuilder), so the watch and ack tasks do
//! not depend on the builder that starts them.

use std::time::Duration;

use super::backoff::Backoff;

/// How the client hears about new versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WatchMode {
    /// Server-Sent Events; long-polls when the watch route is unusable
    /// (e.g. a proxy that buffers or refuses streams), trying the stream
    /// again every few minutes.
    #[default]
    Auto,
    /// Server-Sent Events only.
    Sse,
    /// Long-polls only.
    LongPoll,
}

/// What the watch task runs with.
#[derive(Debug, Clone)]
pub(crate) struct WatchSettings {
    /// Stream, long-poll, or stream with long-poll fallback.
    pub(crate) mode: WatchMode,
    /// How long each long-poll waits on the server.
    pub(crate) long_poll_wait: Duration,
    /// How long a silent stream is kept open.
    pub(crate) idle_timeout: Duration,
    /// In [`WatchMode::Auto`], how long to long-poll before streaming again.
    pub(crate) sse_retry: Duration,
    /// The wait after a failed attempt.
    pub(crate) backoff: Backoff,
}

/// What the ack task runs with.
#[derive(Debug, Clone)]
pub(crate) struct AckSettings {
    /// How often the current version is acked again while nothing changes.
    pub(crate) interval: Duration,
    /// The wait after a failed ack.
    pub(crate) backoff: Backoff,
    /// What kind of client acks.
    pub(crate) kind: crate::ring::ClientKind,
    /// Whether versions are acked only when the application confirms them.
    pub(crate) confirmed: bool,
}
