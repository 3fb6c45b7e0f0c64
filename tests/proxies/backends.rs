//! The servers behind the proxies in the `ringd sync` tests: loopback
//! HTTP servers (one nginx) that answer with their own address, and
//! memcached processes.

use std::fmt::Write as _;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::Path;

use super::loopback::{free_port, Running};
use super::nginx::nginx;

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
