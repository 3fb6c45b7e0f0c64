//! What the agreement tests share: loopback ports from the OS, processes
//! killed when a test ends however it ends, and keys of every kind.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Holds the loopback ports for one test at a time: a port [`free_port`]
/// found free is written into a proxy's configuration before the proxy
/// binds it, and another test's listener could take it in between.
pub(crate) fn one_test_at_a_time() -> MutexGuard<'static, ()> {
    static PORTS: Mutex<()> = Mutex::new(());
    PORTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// A port on `host` that the OS had free a moment ago, and that this
/// function has not given before: the OS may offer a port again before
/// the process it was meant for listens on it.
pub(crate) fn free_port(host: Ipv4Addr) -> u16 {
    static GIVEN: Mutex<BTreeSet<(Ipv4Addr, u16)>> = Mutex::new(BTreeSet::new());
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let port = TcpListener::bind(SocketAddrV4::new(host, 0))
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        if given.insert((host, port)) {
            return port;
        }
    }
}

/// Whether `host:port` can be bound now.
pub(crate) fn is_free(host: Ipv4Addr, port: u16) -> bool {
    TcpListener::bind(SocketAddrV4::new(host, port)).is_ok()
}

/// A process started by a test, killed (and reaped) when dropped, so none
/// outlives a failing test.
pub(crate) struct Running {
    name: String,
    child: Child,
}

impl Running {
    /// Starts `command` with its output in `log`.
    pub(crate) fn start(name: &str, mut command: Command, log: &Path) -> Self {
        let out = std::fs::File::create(log).expect("a log file");
        let err = out.try_clone().expect("a log file");
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err))
            .spawn()
            .unwrap_or_else(|e| panic!("{name} did not start: {e}"));
        Self {
            name: name.to_owned(),
            child,
        }
    }

    /// Waits until every one of `listens` accepts a connection; panics
    /// with `log`'s text if the process exits or 10 s pass first.
    pub(crate) fn wait_listening(&mut self, listens: &[SocketAddrV4], log: &Path) {
        let deadline = Instant::now() + Duration::from_secs(10);
        for addr in listens {
            loop {
                if TcpStream::connect_timeout(&(*addr).into(), Duration::from_millis(200)).is_ok() {
                    break;
                }
                let exited = self.child.try_wait().expect("try_wait");
                if exited.is_some() || Instant::now() > deadline {
                    let text = std::fs::read_to_string(log).unwrap_or_default();
                    panic!(
                        "{} is not listening on {addr} ({exited:?}):\n{text}",
                        self.name
                    );
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A small deterministic generator (splitmix64), so a failure replays.
pub(crate) struct Rng(u64);

impl Rng {
    /// Seeded.
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n`.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// One keep-alive HTTP connection to a proxy that asks it for keys, each
/// sent raw in one request header; reconnects when the proxy closes it.
pub(crate) struct KeyClient {
    to: SocketAddrV4,
    header: &'static str,
    conn: Option<(TcpStream, BufReader<TcpStream>)>,
}

impl KeyClient {
    /// A client of `to` that sends each key in the header `header`.
    pub(crate) fn new(to: SocketAddrV4, header: &'static str) -> Self {
        Self {
            to,
            header,
            conn: None,
        }
    }

    /// The body of the answer to `GET /` with `key` in the header.
    pub(crate) fn ask(&mut self, key: &[u8]) -> String {
        for _ in 0..3 {
            if let Some(body) = self.try_ask(key) {
                return body;
            }
            self.conn = None;
        }
        panic!("no answer from {} for key {key:?}", self.to);
    }

    /// The answer for `key`, or `None` when the proxy closed or refused
    /// the connection (a restarting proxy); the next call reconnects.
    pub(crate) fn try_ask(&mut self, key: &[u8]) -> Option<String> {
        if self.conn.is_none() {
            let s = TcpStream::connect(self.to).ok()?;
            s.set_nodelay(true).ok()?;
            let r = BufReader::new(s.try_clone().ok()?);
            self.conn = Some((s, r));
        }
        let (w, r) = self.conn.as_mut()?;
        let mut req = format!("GET / HTTP/1.1\r\nHost: proxy\r\n{}: ", self.header).into_bytes();
        req.extend_from_slice(key);
        req.extend_from_slice(b"\r\n\r\n");
        w.write_all(&req).ok()?;
        let mut status = String::new();
        r.read_line(&mut status).ok()?;
        let mut length = None;
        let mut close = false;
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).ok()? == 0 {
                return None;
            }
            let line = line.trim_end().to_ascii_lowercase();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("content-length:") {
                length = v.trim().parse::<usize>().ok();
            }
            close |= line == "connection: close";
        }
        let mut body = vec![0; length?];
        r.read_exact(&mut body).ok()?;
        if close {
            self.conn = None;
        }
        assert!(
            status.starts_with("HTTP/1.1 200"),
            "{status}: {}",
            String::from_utf8_lossy(&body)
        );
        String::from_utf8(body).ok()
    }
}

/// The answer to each of `keys`, sent raw in the header `header` to the
/// proxy at `front` over four threads, each on new keep-alive connections.
pub(crate) fn answers_of(
    front: SocketAddrV4,
    header: &'static str,
    keys: &[Vec<u8>],
) -> Vec<String> {
    std::thread::scope(|s| {
        let handles: Vec<_> = keys
            .chunks(keys.len().div_ceil(4))
            .map(|chunk| {
                s.spawn(move || {
                    let mut client = KeyClient::new(front, header);
                    chunk.iter().map(|k| client.ask(k)).collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a client thread"))
            .collect()
    })
}
