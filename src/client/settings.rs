//! What the background tasks run with: plain values taken from a validated
//! [`ClientBuilder`](super::ClientBuilder), so the watch and ack tasks do
//! not depend on the builder that starts them.

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
