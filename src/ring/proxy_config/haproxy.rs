//! HAProxy: a `backend` section with `hash-type consistent` (spec 5.8).

use std::fmt::Write as _;

use crate::placement::{twemproxy::split_address, Placement};

use super::{address_of, invalid, ExportRefusal, ProxyFormat};

/// The header that carries the key: `X-Ringd-Key` unless given, and then
/// a header name HAProxy reads literally.
pub(super) fn key_header(header: Option<String>) -> Result<String, ExportRefusal> {
    let Some(header) = header else {
        return Ok("X-Ringd-Key".to_owned());
    };
    let ok = (1..=64).contains(&header.len())
        && header
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if ok {
        Ok(header)
    } else {
        Err(invalid(
            "header",
            "`header` must be 1 to 64 of A-Z a-z 0-9 -, as `X-Ringd-Key`",
        ))
    }
}

/// The section: the key hashed from the whole header value
/// (`req.fhdr`: `hdr()` would hash only the text before a first comma),
/// the ring's hash with or without avalanche, then every active node as
/// `server ID ADDRESS id N weight W`, with the server id it keeps for life.
pub(super) fn render(
    placement: &Placement,
    backend: &str,
    header: &str,
) -> Result<String, ExportRefusal> {
    let config = placement.config();
    let modifier = if config.avalanche { " avalanche" } else { "" };
    let mut out = format!(
        "backend {backend}\n    balance hash req.fhdr({header})\n    hash-type consistent {}{modifier}\n",
        config.hash
    );
    let ids = placement
        .server_ids()
        .expect("a haproxy placement has server ids");
    for (n, (_, id)) in placement.nodes().iter().zip(ids) {
        let address = address_of(n, ProxyFormat::Haproxy)?;
        // HAProxy's address syntax differs from nginx's; the host names
        // and IPv4 addresses nutcracker takes are the safe common form.
        split_address(address).map_err(|reason| {
            ExportRefusal::Unexportable(format!(
                "node `{}` has address `{}`, which cannot be a HAProxy server: {reason}",
                n.id,
                crate::placement::error::excerpt(address)
            ))
        })?;
        writeln!(
            out,
            "    server {} {address} id {id} weight {}",
            n.id,
            n.weight.get()
        )
        .expect("a String");
    }
    Ok(out)
}
