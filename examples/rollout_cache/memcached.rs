//! Real memcached servers on loopback, one process each, stopped on drop.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One running `memcached` and a client of it.
pub(crate) struct Memcached {
    /// `127.0.0.1:<port>`, as the node's address in the ring.
    pub(crate) address: String,
    /// A pooled client of this server alone: the workload routes by the
    /// ring, so no client-side hashing is involved.
    pub(crate) client: memcache::Client,
    process: Child,
}

impl Memcached {
    /// Starts `memcached` on a free loopback port with 64 MiB, which holds
    /// the whole key set many times over: every miss the workload sees is
    /// one the ring caused, never an eviction.
    pub(crate) fn start(pool: u32) -> Memcached {
        let port = free_port();
        let mut command = Command::new("memcached");
        if is_root() {
            // memcached refuses to run as root unless told which user.
            command.args(["-u", "root"]);
        }
        let mut process = command
            .args(["-l", "127.0.0.1", "-p", &port.to_string(), "-U", "0"])
            .args(["-m", "64", "-t", "1", "-c", "256"])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start memcached ({e}); install it: apt-get install memcached")
            });
        let address = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(&address).is_err() {
            if let Ok(Some(status)) = process.try_wait() {
                panic!("memcached on {address} exited: {status}");
            }
            assert!(
                Instant::now() < deadline,
                "memcached on {address} never listened"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let url = memcache::Url::parse(&format!("memcache://{address}?tcp_nodelay=true&timeout=2"))
            .expect("memcached URL");
        // The crate's own pools test every connection on checkout with a
        // `version` round trip, which would double every request.
        let pool = memcache::Pool::builder()
            .max_size(pool)
            .test_on_check_out(false)
            .build(memcache::ConnectionManager::new(url))
            .expect("memcached pool");
        let client = memcache::Client::with_pool(pool).expect("memcached client");
        Memcached {
            address,
            client,
            process,
        }
    }
}

impl Drop for Memcached {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// A port nothing listens on now (the kernel's choice for port 0).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Whether this process runs as root (`Uid:` in `/proc/self/status`).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|v| v.split_whitespace().next().map(|u| u == "0"))
        })
        .unwrap_or(false)
}
