//! nginx: an `upstream` block with `hash $key consistent` (spec 5.7).

use std::fmt::Write as _;

use crate::placement::Placement;

use super::{address_of, invalid, some_active, ExportRefusal, ProxyFormat};

/// The key variable: `$http_x_ringd_key` unless given, and then one nginx
/// variable name, which nginx reads literally.
pub(super) fn key_variable(key: Option<String>) -> Result<String, ExportRefusal> {
    let Some(key) = key else {
        return Ok("$http_x_ringd_key".to_owned());
    };
    let name = key.strip_prefix('$').unwrap_or("");
    let ok = (1..=64).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok {
        Ok(key)
    } else {
        Err(invalid(
            "key",
            "`key` must be one nginx variable, `$` and 1 to 64 of A-Z a-z 0-9 _, as `$arg_key`",
        ))
    }
}

/// The block: every active node as `server ADDRESS weight=W;`, in id
/// order, the order that decides equal points. Addresses were checked
/// when the nodes were placed (nginx's `server` form, spec 5.7).
pub(super) fn render(
    placement: &Placement,
    upstream: &str,
    key: &str,
    keepalive: Option<u32>,
) -> Result<String, ExportRefusal> {
    some_active(placement, ProxyFormat::Nginx)?;
    let mut out = format!("upstream {upstream} {{\n    hash {key} consistent;\n");
    for n in placement.nodes() {
        let address = address_of(n, ProxyFormat::Nginx)?;
        writeln!(out, "    server {address} weight={};", n.weight.get()).expect("a String");
    }
    if let Some(k) = keepalive {
        writeln!(out, "    keepalive {k};").expect("a String");
    }
    out.push_str("}\n");
    Ok(out)
}
