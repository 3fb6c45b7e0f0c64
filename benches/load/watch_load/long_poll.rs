//! Long-poll watchers: each holds one keep-alive HTTP/1.1 connection and
//! asks `GET …/snapshot?after=V&wait=…` again as soon as it is answered,
//! recording when each version's answer arrived.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::arrivals::Arrivals;
use super::connect::{header, read_head, Target};
use super::sse::Who;

/// How long each long-poll waits; longer than any scenario's idle time,
/// so an idle long-poll stays parked.
const WAIT: &str = "60s";

pub(crate) async fn watcher(target: Arc<Target>, who: Who, after: u64, arrivals: Arc<Arrivals>) {
    if let Err(e) = poll(&target, who, after, &arrivals).await {
        if arrivals.errors.fetch_add(1, Ordering::Relaxed) == 0 {
            eprintln!("long-poll failed: {e} (is the open-file limit high enough?)");
        }
    }
}

async fn poll(
    target: &Target,
    who: Who,
    mut after: u64,
    arrivals: &Arrivals,
) -> std::io::Result<()> {
    let mut stream = target.connect(who.0).await?;
    let ring = target.ring(who.1);
    let mut buf = vec![0u8; 4096];
    loop {
        let request = format!(
            "GET /v1/rings/{ring}/snapshot?after={after}&wait={WAIT} HTTP/1.1\r\nHost: {}\r\n\r\n",
            target.addr
        );
        stream.write_all(request.as_bytes()).await?;
        // A parked long-poll is only answered by a change, so whether all
        // are parked is read from the server's gauge (see main.rs).
        let (head, mut body, at) = read_head(&mut stream, &mut buf, arrivals).await?;
        let length: usize = header(&head, "content-length").map_or(0, |v| v.parse().unwrap_or(0));
        while body.len() < length {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                return Err(std::io::Error::other("the server closed the connection"));
            }
            body.extend_from_slice(&buf[..n]);
        }
        if head.starts_with("http/1.1 304") {
            continue;
        }
        if !head.starts_with("http/1.1 200") {
            arrivals.refusals.fetch_add(1, Ordering::Relaxed);
            return Err(std::io::Error::other(format!("long-poll answered: {head}")));
        }
        let version: u64 = header(&head, "etag")
            .and_then(|t| t.trim_matches('"').parse().ok())
            .ok_or_else(|| std::io::Error::other("a 200 without a version ETag"))?;
        if version != after + 1 {
            arrivals.gaps.fetch_add(1, Ordering::Relaxed);
        }
        arrivals.record(who.0, who.1, version, at);
        after = version;
    }
}
