//! The watchers: each opens one raw HTTP/1.1 watch stream and records when
//! every version's event arrived, without an SSE library in the way.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::RING;

/// Arrivals, shared by every watcher: slot `i` is version `base + i`.
/// Per version only the count and the earliest and latest arrival are
/// kept, so recording costs three atomic operations whatever N is.
pub(crate) struct Arrivals {
    pub start: Instant,
    pub base: u64,
    pub count: Vec<AtomicUsize>,
    pub first: Vec<AtomicU64>,
    pub last: Vec<AtomicU64>,
    pub resets: AtomicUsize,
    pub gaps: AtomicUsize,
    pub errors: AtomicUsize,
}

impl Arrivals {
    pub(crate) fn new(base: u64, slots: usize) -> Self {
        Self {
            start: Instant::now(),
            base,
            count: (0..slots).map(|_| AtomicUsize::new(0)).collect(),
            first: (0..slots).map(|_| AtomicU64::new(u64::MAX)).collect(),
            last: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            resets: AtomicUsize::new(0),
            gaps: AtomicUsize::new(0),
            errors: AtomicUsize::new(0),
        }
    }

    pub(crate) fn nanos(&self, t: Instant) -> u64 {
        t.duration_since(self.start).as_nanos() as u64
    }

    pub(crate) fn record(&self, version: u64, at: u64) {
        let Some(i) = version.checked_sub(self.base).map(|i| i as usize) else {
            return;
        };
        if i < self.count.len() {
            self.first[i].fetch_min(at, Ordering::Relaxed);
            self.last[i].fetch_max(at, Ordering::Relaxed);
            // Last, so a reader that sees the count also sees the times.
            self.count[i].fetch_add(1, Ordering::Release);
        }
    }
}

/// Decodes the chunked body and scans it for `id:` lines. Input arrives
/// in arbitrary pieces, so both the chunk header and the current line
/// carry over between reads.
#[derive(Default)]
struct Scanner {
    chunked: bool,
    /// Data bytes left in the current chunk; `None` while reading a size line.
    remaining: Option<usize>,
    /// CR LF bytes still to skip after a chunk's data.
    skip: usize,
    size_line: Vec<u8>,
    line: Vec<u8>,
    reset: bool,
    last_id: Option<u64>,
}

impl Scanner {
    fn feed(&mut self, mut bytes: &[u8], at: u64, arrivals: &Arrivals) {
        if !self.chunked {
            return self.body(bytes, at, arrivals);
        }
        while !bytes.is_empty() {
            if self.skip > 0 {
                let n = self.skip.min(bytes.len());
                self.skip -= n;
                bytes = &bytes[n..];
            } else if let Some(left) = self.remaining {
                let n = left.min(bytes.len());
                self.body(&bytes[..n], at, arrivals);
                bytes = &bytes[n..];
                if n == left {
                    self.remaining = None;
                    self.skip = 2;
                } else {
                    self.remaining = Some(left - n);
                }
            } else if let Some(end) = bytes.iter().position(|&b| b == b'\n') {
                self.size_line.extend_from_slice(&bytes[..end]);
                bytes = &bytes[end + 1..];
                let text = String::from_utf8_lossy(&self.size_line);
                let hex = text.split([';', '\r']).next().unwrap_or("").trim();
                let size = usize::from_str_radix(hex, 16).expect("chunk size");
                self.size_line.clear();
                self.remaining = Some(size);
            } else {
                self.size_line.extend_from_slice(bytes);
                bytes = &[];
            }
        }
    }

    fn body(&mut self, bytes: &[u8], at: u64, arrivals: &Arrivals) {
        for &b in bytes {
            if b != b'\n' {
                self.line.push(b);
                continue;
            }
            if self.line.starts_with(b"event: reset") {
                self.reset = true;
                arrivals.resets.fetch_add(1, Ordering::Relaxed);
            } else if let Some(id) = self.line.strip_prefix(b"id: ") {
                let id: u64 = std::str::from_utf8(id).unwrap().trim().parse().unwrap();
                if self.last_id.is_some_and(|l| l + 1 != id) && !self.reset {
                    arrivals.gaps.fetch_add(1, Ordering::Relaxed);
                }
                self.last_id = Some(id);
                self.reset = false;
                arrivals.record(id, at);
            }
            self.line.clear();
        }
    }
}

/// One watcher: a raw HTTP/1.1 request, then the stream until it ends.
pub(crate) async fn watcher(addr: String, mode: &'static str, arrivals: Arc<Arrivals>) {
    if let Err(e) = watch(&addr, mode, &arrivals).await {
        if arrivals.errors.fetch_add(1, Ordering::Relaxed) == 0 {
            eprintln!("watcher failed: {e} (is the open-file limit high enough?)");
        }
    }
}

async fn watch(addr: &str, mode: &str, arrivals: &Arrivals) -> std::io::Result<()> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let request = format!(
        "GET /v1/rings/{RING}/watch?mode={mode} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await?;
    let mut buf = vec![0u8; 4096];
    let closed = || std::io::Error::other("the server closed the stream");
    // The response head, then whatever part of the body came with it.
    let mut head = Vec::new();
    let (mut scanner, rest, at) = loop {
        let n = stream.read(&mut buf).await?;
        let at = arrivals.nanos(Instant::now());
        if n == 0 {
            return Err(closed());
        }
        head.extend_from_slice(&buf[..n]);
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            let text = String::from_utf8_lossy(&head[..end]).to_ascii_lowercase();
            if !text.starts_with("http/1.1 200") {
                return Err(std::io::Error::other(format!("watch answered: {text}")));
            }
            let scanner = Scanner {
                chunked: text.contains("transfer-encoding: chunked"),
                ..Scanner::default()
            };
            break (scanner, head.split_off(end + 4), at);
        }
    };
    scanner.feed(&rest, at, arrivals);
    drop((head, rest));
    loop {
        let n = stream.read(&mut buf).await?;
        // One timestamp per read: it is when this watcher had the bytes.
        let at = arrivals.nanos(Instant::now());
        if n == 0 {
            return Err(closed());
        }
        scanner.feed(&buf[..n], at, arrivals);
    }
}
