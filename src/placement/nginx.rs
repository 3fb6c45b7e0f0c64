//! `nginx`: the placement of nginx's `hash $key consistent` (the upstream
//! hash module), bit for bit.
//!
//! nginx knows a server only by the `server` text of its upstream block,
//! so a node is placed by its address, `host:port`. Each server gets
//! `160 × weight` points: CRC-32 over the host, a zero byte, the port and
//! the previous point's value (little-endian, 0 for the first), chained.
//! nginx sorts the points and keeps only the first of equal ones, which
//! with the servers listed in node order (as ringd renders them) is the
//! point of the lowest node index. A key belongs to the first point at or
//! after its CRC-32, wrapping.

use super::continuum::Continuum;
use super::error::PlacementError;
use super::node::{Address, Node};

/// Points per unit of weight, fixed in nginx's source.
pub const POINTS_PER_WEIGHT: u32 = 160;

/// The key hash: CRC-32 (IEEE) of the key's bytes.
#[inline]
pub fn key_hash(key: &[u8]) -> u32 {
    crc32fast::hash(key)
}

/// The host and the port of an address as nginx splits a `server` text to
/// hash it: at the last `:` that only digits follow.
fn host_and_port(address: &str) -> Option<(&str, &str)> {
    let (host, port) = address.rsplit_once(':')?;
    (!port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())).then_some((host, port))
}

/// Why `address` cannot be an nginx `server`, if it cannot: nginx must
/// read it as `host:port` and it must not change the configuration it is
/// written into.
pub fn check_address(address: &str) -> Result<(), &'static str> {
    let Some((host, port)) = host_and_port(address) else {
        return Err("nginx rings need `host:port`, with a decimal port");
    };
    match port.parse::<u32>() {
        Ok(1..=65_535) if port.len() <= 5 => {}
        _ => return Err("the port must be from 1 to 65535"),
    }
    // Only the characters of host names, IPv4 and bracketed IPv6 literals:
    // nothing that ends or opens a directive or a block (`;`, `{`, `}`),
    // starts a comment (`#`), quotes, escapes or names a variable.
    let name = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_');
    let ipv6 = |s: &str| {
        s.len() > 2
            && s.starts_with('[')
            && s.ends_with(']')
            && s[1..s.len() - 1]
                .chars()
                .all(|c| c.is_ascii_hexdigit() || matches!(c, ':' | '.'))
    };
    if host.is_empty() || !(host.chars().all(name) || ipv6(host)) {
        return Err("the host must be a host name, an IPv4 address or a bracketed IPv6 address");
    }
    // nginx reads `unix:` as a socket path and hashes it differently.
    if host.eq_ignore_ascii_case("unix") {
        return Err("unix sockets are not supported");
    }
    Ok(())
}

/// The points of one server, in the order nginx generates them.
pub fn server_points(address: &str, weight: u32) -> impl Iterator<Item = u32> + '_ {
    let (host, port) = host_and_port(address).unwrap_or((address, ""));
    let mut base = crc32fast::Hasher::new();
    base.update(host.as_bytes());
    base.update(&[0]);
    base.update(port.as_bytes());
    let mut prev = 0u32;
    (0..u64::from(weight) * u64::from(POINTS_PER_WEIGHT)).map(move |_| {
        let mut h = base.clone();
        h.update(&prev.to_le_bytes());
        prev = h.finalize();
        prev
    })
}

/// Checks the addresses of `nodes` (active, sorted by id, each with an
/// address): each an nginx `server`, and no two the same, since nginx
/// would take two equal `server`s for one server name and pick between
/// them in turn.
pub(crate) fn check_nodes(nodes: &[Node]) -> Result<(), PlacementError> {
    let mut seen: Vec<(&str, &Node)> = Vec::with_capacity(nodes.len());
    for n in nodes {
        let address = n.address.as_ref().map_or("", Address::as_str);
        check_address(address).map_err(|reason| PlacementError::AddressNotServer {
            node: n.id.to_string(),
            address: super::error::excerpt(address),
            reason,
            algorithm: "nginx",
        })?;
        seen.push((address, n));
    }
    if let Some((address, first, second)) = super::node::first_shared(seen) {
        return Err(PlacementError::DuplicateAddress {
            algorithm: "nginx",
            address: super::error::excerpt(address),
            first: first.id.to_string(),
            second: second.id.to_string(),
        });
    }
    Ok(())
}

/// Builds the circle for `nodes` (active, sorted by id, addresses checked).
pub(crate) fn build(nodes: &[Node]) -> Continuum {
    let mut points = Vec::with_capacity(point_count(nodes) as usize);
    for (i, node) in nodes.iter().enumerate() {
        let address = node.address.as_ref().map_or("", Address::as_str);
        points.extend(server_points(address, node.weight.get()).map(|p| (u64::from(p), i as u32)));
    }
    Continuum::from_unsorted_first_of_equal(points, 32)
}

/// Points `nodes` generate before equal ones are merged.
pub(crate) fn point_count(nodes: &[Node]) -> u64 {
    nodes
        .iter()
        .map(|n| u64::from(n.weight.get()) * u64::from(POINTS_PER_WEIGHT))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_text_splits_at_the_last_colon_before_digits() {
        assert_eq!(host_and_port("10.0.0.1:80"), Some(("10.0.0.1", "80")));
        assert_eq!(host_and_port("[::1]:8080"), Some(("[::1]", "8080")));
        assert_eq!(host_and_port("cache"), None);
        assert_eq!(host_and_port("[::1]"), None);
    }

    #[test]
    fn points_chain_crc32_over_host_zero_port_and_the_previous_point() {
        let mut points = server_points("127.0.0.1:8080", 1);
        let first = crc32fast::hash(b"127.0.0.1\x008080\x00\x00\x00\x00");
        assert_eq!(points.next(), Some(first));
        let mut second = b"127.0.0.1\x008080".to_vec();
        second.extend_from_slice(&first.to_le_bytes());
        assert_eq!(points.next(), Some(crc32fast::hash(&second)));
        assert_eq!(server_points("a:1", 3).count(), 480);
    }

    #[test]
    fn addresses_nginx_cannot_read_or_that_would_inject_are_refused() {
        for ok in ["10.0.0.1:11211", "cache-1.internal:80", "[2001:db8::1]:443"] {
            assert_eq!(check_address(ok), Ok(()), "{ok}");
        }
        for bad in [
            "10.0.0.1",
            "10.0.0.1:",
            "10.0.0.1:0",
            "10.0.0.1:65536",
            ":80",
            "a;b:80",
            "a}:80",
            "a{:80",
            "a#b:80",
            "\"a\":80",
            "'a':80",
            "$host:80",
            "unix:80",
            "[zz]:80",
        ] {
            assert!(check_address(bad).is_err(), "{bad}");
        }
    }
}
