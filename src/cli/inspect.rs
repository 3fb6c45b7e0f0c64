//! Read-only inspection: `ringd lookup`, `ownership`, `diff` and `history`.

use base64::Engine;
use clap::Args;
use serde_json::Value;

use super::context::{decode, encode, ring_path};
use super::describe::describe_ops;
use super::output::{
    self, emit, emit_json, escape, fields, movement, or_none, percent, share_bar, time, Align,
    Table,
};
use super::{CliError, Context};
use crate::wire::{DiffResult, HistoryEntryView, LookupResult, OwnershipView};

/// `ringd lookup RING KEY [--b64 | --hex]`.
#[derive(Debug, Args)]
pub struct LookupArgs {
    /// The ring.
    pub ring: String,
    /// The key: its UTF-8 bytes are hashed, or with --b64 or --hex the
    /// bytes it encodes.
    pub key: String,
    /// KEY is the key's bytes in standard base64 (`+` and `/`, padded with
    /// `=`), for keys that are not UTF-8 text.
    #[arg(long, conflicts_with = "hex")]
    pub b64: bool,
    /// KEY is the key's bytes in hexadecimal (two digits per byte).
    #[arg(long)]
    pub hex: bool,
    /// How many distinct nodes to list, 1–64 [default: the ring's
    /// replication factor].
    #[arg(long, value_name = "R")]
    pub replicas: Option<u32>,
    /// Look up in this retained version [default: the latest].
    #[arg(long, value_name = "V")]
    pub version: Option<u64>,
}

/// `ringd ownership RING`.
#[derive(Debug, Args)]
pub struct OwnershipArgs {
    /// The ring.
    pub ring: String,
    /// A retained version [default: the latest].
    #[arg(long, value_name = "V")]
    pub version: Option<u64>,
}

/// `ringd diff RING FROM [TO]`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The ring.
    pub ring: String,
    /// The older version.
    pub from: u64,
    /// The newer version [default: the latest].
    pub to: Option<u64>,
}

/// `ringd history RING`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The ring.
    pub ring: String,
    /// Show only the newest N versions.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

fn query(params: &[(&str, Option<String>)]) -> String {
    let parts: Vec<String> = params
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={}", encode(v))))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("?{}", parts.join("&"))
    }
}

/// Decodes `text` as hexadecimal bytes: two digits per byte, either case.
fn hex_bytes(text: &str) -> Result<Vec<u8>, CliError> {
    let digits = text.as_bytes();
    let bad = || {
        CliError::Refused(format!(
            "`{}` is not hexadecimal bytes: use two digits 0-9a-f per byte, e.g. ff00",
            output::escape(text)
        ))
    };
    if !digits.len().is_multiple_of(2) {
        return Err(bad());
    }
    digits
        .chunks(2)
        .map(|pair| {
            let pair = std::str::from_utf8(pair).map_err(|_| bad())?;
            u8::from_str_radix(pair, 16).map_err(|_| bad())
        })
        .collect()
}

/// Prints where a key lives.
pub async fn lookup(ctx: &Context, a: LookupArgs) -> Result<(), CliError> {
    // Bytes travel as `key_b64`, so every byte string reaches the server
    // as sent; the server checks the base64 itself.
    let (param, sent) = if a.hex {
        let encoded = base64::engine::general_purpose::STANDARD.encode(hex_bytes(&a.key)?);
        ("key_b64", encoded)
    } else if a.b64 {
        ("key_b64", a.key.clone())
    } else {
        ("key", a.key.clone())
    };
    let q = query(&[
        (param, Some(sent)),
        ("replicas", a.replicas.map(|r| r.to_string())),
        ("version", a.version.map(|v| v.to_string())),
    ]);
    let body = ctx.get(&ring_path(&a.ring, &format!("/lookup{q}"))).await?;
    if ctx.json() {
        return emit_json(&body);
    }
    let l: LookupResult = decode("lookup", &body)?;
    let key = match (l.key, l.key_b64) {
        (Some(text), _) => ("key", text),
        (None, Some(_)) if a.hex => ("key (hex)", a.key.to_ascii_lowercase()),
        (None, Some(b64)) => ("key (base64)", b64),
        (None, None) => ("key", "?".to_owned()),
    };
    emit(&fields(&[
        ("ring", a.ring),
        ("version", l.version.to_string()),
        key,
        ("hash", l.hash),
        ("owner", or_none(l.owner.as_deref())),
        ("replicas", l.replicas.join(", ")),
    ]))
}

/// Prints each node's share against its weight share, with a bar.
pub async fn ownership(ctx: &Context, a: OwnershipArgs) -> Result<(), CliError> {
    let q = query(&[("version", a.version.map(|v| v.to_string()))]);
    let body = ctx
        .get(&ring_path(&a.ring, &format!("/ownership{q}")))
        .await?;
    if ctx.json() {
        return emit_json(&body);
    }
    let o: OwnershipView = decode("ownership", &body)?;
    let mut t = Table::new(&[
        ("NODE", Align::Left),
        ("SHARE", Align::Right),
        ("WEIGHT SHARE", Align::Right),
        ("RATIO", Align::Right),
        ("", Align::Left),
    ]);
    for n in &o.nodes {
        t.row(vec![
            n.id.clone(),
            percent(n.share),
            percent(n.expected_share),
            format!("{:.3}", n.ratio),
            share_bar(n.share),
        ]);
    }
    emit(&format!(
        "ring {} at version {} (basis: {})\n\n{}\nmax/mean {:.3}\n",
        escape(&o.ring),
        o.version,
        escape(o.basis.as_str()),
        t.render(),
        o.max_over_mean
    ))
}

/// Prints what moves between two versions.
pub async fn diff(ctx: &Context, a: DiffArgs) -> Result<(), CliError> {
    let q = query(&[
        ("from", Some(a.from.to_string())),
        ("to", a.to.map(|v| v.to_string())),
    ]);
    let body = ctx.get(&ring_path(&a.ring, &format!("/diff{q}"))).await?;
    if ctx.json() {
        return emit_json(&body);
    }
    let d: DiffResult = decode("diff", &body)?;
    emit(&format!(
        "ring {}: version {} -> {}\n{}",
        escape(&d.ring),
        d.from,
        d.to,
        movement(&d.diff)
    ))
}

/// Prints the retained versions, oldest first.
pub async fn history(ctx: &Context, a: HistoryArgs) -> Result<(), CliError> {
    let mut body = ctx.get(&ring_path(&a.ring, "/history")).await?;
    if let (Some(limit), Some(Value::Array(entries))) = (a.limit, body.get_mut("entries")) {
        let skip = entries.len().saturating_sub(limit);
        entries.drain(..skip);
    }
    if ctx.json() {
        return emit_json(&body);
    }
    let entries: Vec<HistoryEntryView> = decode("history", &body["entries"])?;
    // The time goes last, after the variable-width columns, so a script
    // that blanks it out (as the tests do) keeps the columns aligned.
    let mut t = Table::new(&[
        ("VERSION", Align::Right),
        ("MOVED", Align::Right),
        ("OPS", Align::Left),
        ("REASON", Align::Left),
        ("TIME", Align::Left),
    ]);
    for e in entries {
        t.row(vec![
            e.version.to_string(),
            percent(e.moved_fraction),
            describe_ops(&e.ops),
            e.reason.unwrap_or_else(|| "-".into()),
            time(e.created_at),
        ]);
    }
    emit(&t.render())
}
