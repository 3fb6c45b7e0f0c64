//! twemproxy: a nutcracker pool with `distribution: ketama` (spec 5.9).

use std::fmt::Write as _;

use crate::placement::twemproxy::split_address;
use crate::placement::Placement;

use super::{address_of, invalid, some_active, ExportRefusal, ProxyFormat};

/// Where the pool listens: `127.0.0.1:22121` unless given, and then a
/// `host:port` nutcracker reads.
pub(super) fn listen_address(listen: Option<String>) -> Result<String, ExportRefusal> {
    let Some(listen) = listen else {
        return Ok("127.0.0.1:22121".to_owned());
    };
    match split_address(&listen) {
        Ok(_) => Ok(listen),
        Err(reason) => Err(invalid("listen", format!("`listen`: {reason}"))),
    }
}

/// The pool: the ring's hash and tag, hosts never ejected (nutcracker
/// would otherwise re-place the keys of a failing server on its own), and
/// every active node as `host:port:weight`, with its `hash_key` as the
/// server name when it has one. Addresses and names were checked when
/// the nodes were placed (spec 5.9.2); the tag is two characters other
/// than quotes and backslashes, so it is written quoted as it is.
pub(super) fn render(
    placement: &Placement,
    pool: &str,
    listen: &str,
    redis: bool,
) -> Result<String, ExportRefusal> {
    some_active(placement, ProxyFormat::Twemproxy)?;
    let config = placement.config();
    let mut out = format!(
        "{pool}:\n  listen: {listen}\n  hash: {}\n  distribution: ketama\n",
        config.hash
    );
    if let Some(tag) = config.hash_tag {
        writeln!(out, "  hash_tag: \"{tag}\"").expect("a String");
    }
    writeln!(
        out,
        "  auto_eject_hosts: false\n  redis: {redis}\n  servers:"
    )
    .expect("a String");
    for n in placement.nodes() {
        let address = address_of(n, ProxyFormat::Twemproxy)?;
        write!(out, "   - {address}:{}", n.weight.get()).expect("a String");
        if let Some(name) = &n.hash_key {
            write!(out, " {}", name.as_str()).expect("a String");
        }
        out.push('\n');
    }
    Ok(out)
}
