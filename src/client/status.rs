//! What a client's watch reports about itself: its [`Status`] and the
//! [`Transport`] new versions arrive on.

/// How the client currently hears about new versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Not connected (starting, or between attempts).
    Connecting,
    /// A Server-Sent Events stream.
    Sse,
    /// Repeated long-polls.
    LongPoll,
}

/// What the client's watch is doing, for health checks and tests.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// The version routed on, if any.
    pub version: Option<u64>,
    /// The newest version the server has acknowledged receiving an ack for.
    pub acked: Option<u64>,
    /// The server said the ring was deleted (and no new one has appeared).
    pub deleted: bool,
    /// How new versions arrive.
    pub transport: Transport,
    /// The server the watch is connected to, if any.
    pub server: Option<String>,
    /// The most recent failure (connection, refusal or verification).
    pub last_error: Option<String>,
    /// `table` rings: versions built by downloading the whole table.
    pub table_downloads: u64,
    /// `table` rings: versions built from the previous one and the
    /// version's moves, without a download.
    pub table_moves_applied: u64,
}
