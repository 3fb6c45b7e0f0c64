//! SSE watchers: each opens one raw HTTP/1.1 watch stream and records when
//! every version's event arrived, without an SSE library in the way.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::arrivals::Arrivals;
use super::connect::{read_head, Target};

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
    fn feed(&mut self, mut bytes: &[u8], at: u64, who: Who, arrivals: &Arrivals) {
        if !self.chunked {
            return self.body(bytes, at, who, arrivals);
        }
        while !bytes.is_empty() {
            if self.skip > 0 {
                let n = self.skip.min(bytes.len());
                self.skip -= n;
                bytes = &bytes[n..];
            } else if let Some(left) = self.remaining {
                let n = left.min(bytes.len());
                self.body(&bytes[..n], at, who, arrivals);
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

    fn body(&mut self, bytes: &[u8], at: u64, who: Who, arrivals: &Arrivals) {
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
                arrivals.record(who.0, who.1, id, at);
            }
            self.line.clear();
        }
    }
}

/// A watcher's index and its ring's.
#[derive(Clone, Copy)]
pub(crate) struct Who(pub usize, pub usize);

/// One watcher: a raw HTTP/1.1 request, then the stream until it ends.
pub(crate) async fn watcher(
    target: Arc<Target>,
    who: Who,
    mode: &'static str,
    arrivals: Arc<Arrivals>,
) {
    if let Err(e) = watch(&target, who, mode, &arrivals).await {
        if arrivals.errors.fetch_add(1, Ordering::Relaxed) == 0 {
            eprintln!("watcher failed: {e} (is the open-file limit high enough?)");
        }
    }
}

async fn watch(target: &Target, who: Who, mode: &str, arrivals: &Arrivals) -> std::io::Result<()> {
    let mut stream = target.connect(who.0).await?;
    let ring = target.ring(who.1);
    let request = format!(
        "GET /v1/rings/{ring}/watch?mode={mode} HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\r\n",
        target.addr
    );
    stream.write_all(request.as_bytes()).await?;
    let mut buf = vec![0u8; 4096];
    // The response head, then whatever part of the body came with it.
    let (head, rest, at) = read_head(&mut stream, &mut buf, arrivals).await?;
    if !head.starts_with("http/1.1 200") {
        arrivals.refusals.fetch_add(1, Ordering::Relaxed);
        return Err(std::io::Error::other(format!("watch answered: {head}")));
    }
    let mut scanner = Scanner {
        chunked: head.contains("transfer-encoding: chunked"),
        ..Scanner::default()
    };
    scanner.feed(&rest, at, who, arrivals);
    drop((head, rest));
    loop {
        let n = stream.read(&mut buf).await?;
        // One timestamp per read: it is when this watcher had the bytes.
        let at = arrivals.nanos(Instant::now());
        if n == 0 {
            return Err(std::io::Error::other("the server closed the stream"));
        }
        scanner.feed(&buf[..n], at, who, arrivals);
    }
}
