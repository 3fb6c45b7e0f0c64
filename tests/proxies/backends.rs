//! The servers behind the proxies: loopback HTTP servers (one nginx) that
//! answer with their own address, and memcached processes with a client
//! that asks each which keys it holds.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::loopback::{free_port, is_free, Running};
use super::sync_driver::{node, Proxy, Synced};

/// One nginx listening on `count` addresses spread over 127.0.0.1 to
/// 127.0.0.8, each answering every request with its own `host:port`;
/// the process (killed when dropped) and the addresses.
pub(super) fn http_backends(dir: &Path, count: usize) -> (Running, Vec<String>) {
    let mut http = String::new();
    let mut listens = Vec::new();
    for i in 0..count {
        let host = Ipv4Addr::new(127, 0, 0, 1 + (i % 8) as u8);
        let addr = SocketAddrV4::new(host, free_port(host));
        writeln!(
            http,
            "    server {{ listen {addr}; location / {{ return 200 \"{addr}\"; }} }}"
        )
        .expect("a String");
        listens.push(addr);
    }
    let (cmd, log) = nginx(dir, "backends", &http);
    let mut process = Running::start("backend nginx (see .ci/setup)", cmd, &log);
    process.wait_listening(&listens, &dir.join("backends/error.log"));
    (process, listens.iter().map(ToString::to_string).collect())
}

/// The backend nginx and the directory it shares with the proxy.
pub(crate) type HttpBackends = (Running, tempfile::TempDir);

/// A proxy `make` builds in the test's directory, synced to a ring whose
/// first version holds the first of 42 HTTP backends (`n00`, weight 3);
/// the backends and their addresses, which outlive it.
pub(crate) fn synced_over_http<P: Proxy>(
    make: impl FnOnce(&Path) -> P,
    reload_prefix: &str,
) -> (Synced<P>, HttpBackends, Vec<String>) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (process, addresses) = http_backends(dir.path(), 42);
    let s = Synced::start(
        make(dir.path()),
        serde_json::json!({}),
        vec![node("n00", &addresses[0], 3)],
        reload_prefix,
    );
    (s, (process, dir), addresses)
}

/// nginx in the foreground without a master process, on `http` (the
/// inside of its `http` block), with every path under `dir/name`: the
/// command, and where its output goes.
pub(super) fn nginx(dir: &Path, name: &str, http: &str) -> (Command, std::path::PathBuf) {
    let prefix = dir.join(name);
    std::fs::create_dir_all(&prefix).expect("a prefix");
    let p = prefix.display();
    let conf = format!(
        "daemon off;\nmaster_process off;\npid {p}/nginx.pid;\nerror_log {p}/error.log warn;\n\
         worker_rlimit_nofile 8192;\nevents {{ worker_connections 4096; }}\n\
         http {{\n    access_log off;\n    keepalive_requests 1000000;\n\
         client_body_temp_path {p}/body;\n    proxy_temp_path {p}/proxy;\n\
         fastcgi_temp_path {p}/fastcgi;\n    uwsgi_temp_path {p}/uwsgi;\n\
         scgi_temp_path {p}/scgi;\n{http}}}\n"
    );
    let file = prefix.join("nginx.conf");
    std::fs::write(&file, conf).expect("a config");
    let mut cmd = Command::new("nginx");
    cmd.arg("-p")
        .arg(&prefix)
        .arg("-c")
        .arg(&file)
        .arg("-e")
        .arg(prefix.join("error.log"));
    (cmd, prefix.join("output.log"))
}

/// A memcached on `addr` (killed when dropped), its output in `log`.
pub(super) fn memcached(addr: SocketAddr, log: &Path) -> Running {
    let mut cmd = Command::new("memcached");
    cmd.args(["-l", &addr.ip().to_string(), "-p", &addr.port().to_string()])
        .args(["-U", "0", "-m", "64", "-t", "1"]);
    if running_as_root() {
        cmd.args(["-u", "root"]);
    }
    let mut process = Running::start("memcached (see .ci/setup)", cmd, log);
    process.wait_listening(&[v4(addr)], log);
    process
}

/// A loopback address whose port 11211 is free, from 127.0.0.`first` on.
pub(super) fn host_with_11211_free(first: u8) -> Ipv4Addr {
    (first..=250)
        .map(|x| Ipv4Addr::new(127, 0, 0, x))
        .find(|&ip| is_free(ip, 11211))
        .expect("a loopback address with port 11211 free")
}

fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(2))
            == Some("0")
    })
}

pub(super) fn v4(addr: SocketAddr) -> SocketAddrV4 {
    match addr {
        SocketAddr::V4(a) => a,
        SocketAddr::V6(_) => unreachable!("loopback IPv4 only"),
    }
}

/// A memcached text-protocol connection.
pub(super) struct Memcache {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Memcache {
    pub(super) fn connect(addr: SocketAddr) -> Self {
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        Self {
            reader: BufReader::new(s.try_clone().unwrap()),
            writer: s,
        }
    }

    fn line(&mut self) -> Vec<u8> {
        let mut l = Vec::new();
        self.reader.read_until(b'\n', &mut l).unwrap();
        assert!(l.ends_with(b"\r\n"), "truncated reply {l:?}");
        l.truncate(l.len() - 2);
        l
    }

    /// A connection, or `None` when it is refused.
    #[allow(
        dead_code,
        reason = "only the latency load script probes a restarting proxy"
    )]
    pub(super) fn try_connect(addr: SocketAddr) -> Option<Self> {
        let s = TcpStream::connect(addr).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        Some(Self {
            reader: BufReader::new(s.try_clone().ok()?),
            writer: s,
        })
    }

    /// `set`s `key`; whether it was stored (not when the proxy failed it
    /// or closed the connection).
    #[allow(
        dead_code,
        reason = "only the latency load script probes a restarting proxy"
    )]
    pub(super) fn try_set(&mut self, key: &[u8]) -> bool {
        let mut out = b"set ".to_vec();
        out.extend_from_slice(key);
        out.extend_from_slice(b" 0 0 1\r\nx\r\n");
        if self.writer.write_all(&out).is_err() {
            return false;
        }
        let mut l = Vec::new();
        self.reader.read_until(b'\n', &mut l).is_ok() && l == b"STORED\r\n"
    }

    /// Empties it.
    pub(super) fn flush_all(&mut self) {
        self.writer.write_all(b"flush_all\r\n").unwrap();
        assert_eq!(self.line(), b"OK");
    }

    /// `set`s every key (value `x`), pipelined in batches.
    pub(super) fn set_all(&mut self, keys: &[Vec<u8>]) {
        for batch in keys.chunks(500) {
            let mut out = Vec::new();
            for k in batch {
                out.extend_from_slice(b"set ");
                out.extend_from_slice(k);
                out.extend_from_slice(b" 0 0 1\r\nx\r\n");
            }
            self.writer.write_all(&out).unwrap();
            for k in batch {
                let l = self.line();
                assert_eq!(l, b"STORED", "set {:?}", String::from_utf8_lossy(k));
            }
        }
    }

    /// Which of `keys` this memcached holds, by multi-key `get`s.
    pub(super) fn held(&mut self, keys: &[Vec<u8>]) -> Vec<Vec<u8>> {
        let mut held = Vec::new();
        for batch in keys.chunks(20) {
            let mut out = b"get".to_vec();
            for k in batch {
                out.push(b' ');
                out.extend_from_slice(k);
            }
            out.extend_from_slice(b"\r\n");
            self.writer.write_all(&out).unwrap();
            loop {
                let l = self.line();
                if l == b"END" {
                    break;
                }
                let rest = l.strip_prefix(b"VALUE ").expect("VALUE or END");
                let end = rest.iter().position(|&b| b == b' ').unwrap();
                held.push(rest[..end].to_vec());
                let mut value = [0u8; 3];
                self.reader.read_exact(&mut value).unwrap();
                assert_eq!(&value, b"x\r\n");
            }
        }
        held
    }
}
