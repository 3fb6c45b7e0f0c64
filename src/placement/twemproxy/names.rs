//! The names nutcracker places servers by, and what a `twemproxy` ring
//! refuses because nutcracker could not be given it.

use std::borrow::Cow;

use crate::placement::error::{excerpt, PlacementError};
use crate::placement::Node;

/// The port at which nutcracker names an unnamed server by its host alone.
pub const DEFAULT_PORT: u16 = 11211;

/// The name nutcracker gives a node written as `host:port:weight [name]`:
/// its `hash_key` if set (written as the name), else the host alone when
/// the port is 11211, else `host:port`. Checks the address and the name;
/// `None` for a node without an address and without a `hash_key`.
pub fn server_name(node: &Node) -> Result<Option<Cow<'_, str>>, PlacementError> {
    let address =
        match &node.address {
            Some(a) => Some(split_address(a.as_str()).map_err(|reason| {
                PlacementError::AddressNotServer {
                    node: node.id.to_string(),
                    address: excerpt(a.as_str()),
                    reason,
                    algorithm: "twemproxy",
                }
            })?),
            None => None,
        };
    if let Some(key) = &node.hash_key {
        check_name(node, key.as_str())?;
        return Ok(Some(Cow::Borrowed(key.as_str())));
    }
    Ok(address.map(|(host, port)| {
        if port == DEFAULT_PORT {
            Cow::Borrowed(host)
        } else {
            Cow::Owned(format!("{host}:{port}"))
        }
    }))
}

/// `host:port` as nutcracker reads it: a host name or IPv4 address, and a
/// port from 1 to 65535 written without leading zeros; else why not.
pub fn split_address(address: &str) -> Result<(&str, u16), &'static str> {
    let (host, port) = address
        .rsplit_once(':')
        .ok_or("twemproxy rings need `host:port`")?;
    // Only the characters of host names and IPv4 addresses: nutcracker
    // splits `host:port:weight` at colons, and nothing that YAML reads
    // otherwise can pass.
    let host_ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
    if !host_ok {
        return Err(
            "the host must be a host name or an IPv4 address (letters, digits, '.', '-', '_')",
        );
    }
    let canonical =
        !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) && !port.starts_with('0');
    match port.parse::<u16>() {
        Ok(p) if canonical && p > 0 => Ok((host, p)),
        _ => Err("the port must be from 1 to 65535, without leading zeros"),
    }
}

/// A name nutcracker reads back as written: no space (nutcracker takes the
/// text after the last space as the name), printable ASCII only, and no
/// `#`, quote or backslash, which YAML would read otherwise.
fn check_name(node: &Node, name: &str) -> Result<(), PlacementError> {
    let ok = name
        .bytes()
        .all(|b| b.is_ascii_graphic() && !matches!(b, b'#' | b'"' | b'\'' | b'\\'));
    if ok {
        return Ok(());
    }
    Err(PlacementError::InvalidServerName {
        node: node.id.to_string(),
        name: excerpt(name),
    })
}

/// The order nutcracker sorts its servers in before building its ring:
/// shorter names first, then byte by byte.
pub fn name_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}
