//! Where the watchers connect from and to. One source address has about
//! 28,000 ephemeral ports towards one server port (Linux's default
//! `ip_local_port_range`), so a load of 100,000 watchers spreads its
//! connections over several loopback source addresses (127.0.0.1,
//! 127.0.0.2, …: all of 127.0.0.0/8 is loopback on Linux).

use std::net::{Ipv4Addr, SocketAddr};

use tokio::io::AsyncReadExt;
use tokio::net::{TcpSocket, TcpStream};

use super::arrivals::Arrivals;

/// Connections per source address, well inside its ephemeral ports.
const PER_SOURCE: usize = 20_000;

/// The server and the rings the watchers watch.
pub(crate) struct Target {
    /// `127.0.0.1:<port>`.
    pub addr: String,
    server: SocketAddr,
    sources: Vec<Ipv4Addr>,
    rings: Vec<String>,
}

impl Target {
    pub(crate) fn new(addr: &str, watchers: usize, rings: Vec<String>) -> Self {
        let sources = (0..watchers.div_ceil(PER_SOURCE).max(1))
            .map(|i| Ipv4Addr::new(127, 0, 0, 1 + i as u8))
            .collect();
        Self {
            addr: addr.to_owned(),
            server: addr.parse().expect("server address"),
            sources,
            rings,
        }
    }

    /// The name of ring `i`.
    pub(crate) fn ring(&self, i: usize) -> &str {
        &self.rings[i]
    }

    /// A connection for watcher `who`, from its source address.
    pub(crate) async fn connect(&self, who: usize) -> std::io::Result<TcpStream> {
        let stream = if self.sources.len() == 1 {
            // The kernel picks the port as it connects; binding first
            // would make it search the whole range for each socket (tens
            // of seconds of kernel time at 18,000 connections).
            TcpStream::connect(self.server).await?
        } else {
            let socket = TcpSocket::new_v4()?;
            socket.bind(SocketAddr::from((
                self.sources[who % self.sources.len()],
                0,
            )))?;
            socket.connect(self.server).await?
        };
        stream.set_nodelay(true)?;
        Ok(stream)
    }
}

/// Reads a response head; returns it lowercased, the bytes read past it,
/// and when the head was complete.
pub(crate) async fn read_head(
    stream: &mut TcpStream,
    buf: &mut [u8],
    arrivals: &Arrivals,
) -> std::io::Result<(String, Vec<u8>, u64)> {
    let mut head = Vec::new();
    loop {
        let n = stream.read(buf).await?;
        let at = arrivals.now();
        if n == 0 {
            return Err(std::io::Error::other("the server closed the connection"));
        }
        head.extend_from_slice(&buf[..n]);
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            let text = String::from_utf8_lossy(&head[..end]).to_ascii_lowercase();
            return Ok((text, head.split_off(end + 4), at));
        }
    }
}

/// The value of header `name` (lowercase) in a lowercased head.
pub(crate) fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        (n.trim() == name).then(|| v.trim())
    })
}
