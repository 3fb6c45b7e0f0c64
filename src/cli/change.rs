//! `ringd change apply RING FILE`: previews a multi-op change, then
//! commits exactly what was previewed.

use std::io::Read;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use reqwest::Method;
use serde_json::{json, Value};

use super::context::{decode, idempotency_key, ring_path};
use super::output::movement;
use super::output::{emit, emit_json, escape, fields, percent, yes_no};
use super::{CliError, Context};
use crate::client::ClientError;
use crate::placement::config::DEFAULT_TABLE_SIZE;
use crate::wire::{ChangeResult, RingConfigView};

/// `ringd change …`.
#[derive(Debug, Subcommand)]
pub enum ChangeCommand {
    /// Preview a change (moved fraction, per-node gain and loss), then
    /// commit it unless --dry-run.
    Apply(ApplyArgs),
}

/// `ringd change apply RING FILE [--dry-run]`.
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// The ring.
    pub ring: String,
    /// The body of `POST /v1/rings/{ring}/changes` as JSON
    /// (`{"ops":[…],"reason":…}`); `-` reads stdin.
    pub file: PathBuf,
    /// Show the preview only; commit nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Name the commit, so running the same command again after a lost
    /// answer returns the first commit instead of applying it twice
    /// [default: a new key per invocation].
    #[arg(long, value_name = "KEY")]
    pub idempotency_key: Option<String>,
}

/// Runs a `change` subcommand.
pub async fn run(ctx: &Context, command: ChangeCommand) -> Result<(), CliError> {
    match command {
        ChangeCommand::Apply(a) => apply(ctx, a).await,
    }
}

pub(super) fn read_body(path: &PathBuf) -> Result<serde_json::Map<String, Value>, CliError> {
    let stdin = path.as_os_str() == "-";
    // Messages name stdin as such rather than as a file called `-`.
    let shown = if stdin {
        PathBuf::from("<stdin>")
    } else {
        path.clone()
    };
    let mut text = String::new();
    let read = if stdin {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read_to_string(path).map(|t| text = t)
    };
    read.map_err(|source| CliError::Read {
        path: shown.clone(),
        source,
    })?;
    let value: Value = serde_json::from_str(&text).map_err(|source| CliError::Json {
        path: shown.clone(),
        source,
    })?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(CliError::Refused(format!(
            "{} must hold a JSON object such as {{\"ops\": [...]}}",
            shown.display()
        ))),
    }
}

async fn apply(ctx: &Context, a: ApplyArgs) -> Result<(), CliError> {
    let mut body = read_body(&a.file)?;
    // A file that asks for a dry run gets one, whatever the flag says.
    let dry_run = a.dry_run || body.remove("dry_run") == Some(Value::Bool(true));
    let path = ring_path(&a.ring, "/changes");
    if let Some(key) = &a.idempotency_key {
        if !dry_run && replay(ctx, &path, &body, key).await? {
            return Ok(());
        }
    }

    let mut preview_body = body.clone();
    preview_body.insert("dry_run".into(), true.into());
    let preview = ctx
        .request(Method::POST, &path, Some(&Value::Object(preview_body)), &[])
        .await?
        .body;
    let p: ChangeResult = decode("preview", &preview)?;
    if !ctx.json() {
        emit(&describe_preview(&p))?;
    }
    if dry_run || !p.changed {
        if ctx.json() {
            return emit_json(&json!({ "preview": preview }));
        }
        if p.changed {
            emit("\ndry run: nothing committed\n")?;
        }
        return Ok(());
    }

    // The preview's base version is the precondition: if anything is
    // committed in between, the server refuses (412) instead of applying
    // a change whose movement nobody saw.
    body.insert("expected_version".into(), p.base_version.into());
    let key = a.idempotency_key.unwrap_or_else(idempotency_key);
    commit(ctx, &path, body, &key, Some(preview)).await
}

/// Commits `body` with `key` and prints the result (after the preview,
/// when there was one).
async fn commit(
    ctx: &Context,
    path: &str,
    body: serde_json::Map<String, Value>,
    key: &str,
    preview: Option<Value>,
) -> Result<(), CliError> {
    let committed = ctx
        .request(
            Method::POST,
            path,
            Some(&Value::Object(body)),
            &[("idempotency-key", key)],
        )
        .await?
        .body;
    print_commit(ctx, preview, committed, key)
}

/// Prints a commit, after its preview when there was one.
fn print_commit(
    ctx: &Context,
    preview: Option<Value>,
    committed: Value,
    key: &str,
) -> Result<(), CliError> {
    if ctx.json() {
        return emit_json(&match preview {
            Some(preview) => json!({ "preview": preview, "committed": committed }),
            None => json!({ "committed": committed }),
        });
    }
    let c: ChangeResult = decode("change result", &committed)?;
    let moved = c
        .diff
        .as_ref()
        .map_or_else(|| "unknown".into(), |d| percent(d.moved_fraction));
    let (ring, key) = (escape(&c.ring), escape(key));
    if c.replayed {
        return emit(&format!(
            "already committed with key {key}: ring {ring} at version {}, {moved} of the keyspace moved; nothing applied now\n",
            c.version
        ));
    }
    emit(&format!(
        "\ncommitted: ring {ring} at version {}, {moved} of the keyspace moved\n",
        c.version
    ))
}

/// Whether an earlier run already committed this change under `key`; if
/// so, prints that commit. The probe is the commit itself on version 0,
/// which never exists: the server looks the key up before the
/// precondition, so a committed key is answered with its version
/// (`replayed`) and an unknown one fails the precondition (412) without
/// applying anything. A rerun after a lost answer thus never previews a
/// plan that no longer applies, and never applies twice.
async fn replay(
    ctx: &Context,
    path: &str,
    body: &serde_json::Map<String, Value>,
    key: &str,
) -> Result<bool, CliError> {
    let mut probe = body.clone();
    probe.insert("expected_version".into(), 0.into());
    let answer = ctx
        .request(
            Method::POST,
            path,
            Some(&Value::Object(probe)),
            &[("idempotency-key", key)],
        )
        .await;
    match answer {
        Ok(a) if a.body.get("replayed") == Some(&Value::Bool(true)) => {
            print_commit(ctx, None, a.body, key)?;
            Ok(true)
        }
        Ok(a) => Err(CliError::decode(
            "idempotency probe",
            format!("expected a replay or 412, got {}", a.status),
        )),
        Err(CliError::Client(ClientError::Problem(p))) if p.status == 412 => Ok(false),
        Err(e) => Err(e),
    }
}

fn describe_preview(p: &ChangeResult) -> String {
    let ring = escape(&p.ring);
    if !p.changed {
        return format!(
            "no change: ring {ring} is at version {} and the change alters nothing\n",
            p.base_version
        );
    }
    let mut out = format!(
        "preview: ring {ring} version {} -> {}\n",
        p.base_version, p.version
    );
    if let Some(c) = &p.config_change {
        out.push_str(&config_change(&c.from, &c.to));
    }
    if let Some(d) = &p.diff {
        out.push_str(&movement(d));
    }
    out
}

/// A view's table size: one not shown is the default.
fn table_size(c: &RingConfigView) -> u64 {
    c.table_size.unwrap_or(DEFAULT_TABLE_SIZE)
}

/// `haproxy`'s avalanche modifier, or "-" for a ring that has none.
fn avalanche(c: &RingConfigView) -> String {
    c.avalanche.map_or_else(|| "-".to_owned(), yes_no)
}

/// `twemproxy`'s hash tag, or "-" for none.
fn hash_tag(c: &RingConfigView) -> String {
    c.hash_tag.as_deref().map_or_else(|| "-".to_owned(), escape)
}

/// `envoy_ring_hash`'s ring sizes, or "-" for a ring that shows none.
fn ring_sizes(c: &RingConfigView) -> String {
    match (c.minimum_ring_size, c.maximum_ring_size) {
        (Some(min), Some(max)) => format!("{min} to {max}"),
        _ => "-".to_owned(),
    }
}

/// The configuration fields a change alters, old value against new, so a
/// change of algorithm or hash is never a surprise.
fn config_change(from: &RingConfigView, to: &RingConfigView) -> String {
    let pairs = [
        (
            "algorithm",
            from.algorithm.as_str().to_owned(),
            to.algorithm.as_str().to_owned(),
        ),
        (
            "hash",
            from.hash.as_str().to_owned(),
            to.hash.as_str().to_owned(),
        ),
        (
            "vnodes per weight",
            from.vnodes_per_weight.to_string(),
            to.vnodes_per_weight.to_string(),
        ),
        (
            "table size",
            table_size(from).to_string(),
            table_size(to).to_string(),
        ),
        (
            "replication factor",
            from.replication_factor.to_string(),
            to.replication_factor.to_string(),
        ),
        ("zone aware", yes_no(from.zone_aware), yes_no(to.zone_aware)),
        ("avalanche", avalanche(from), avalanche(to)),
        ("hash tag", hash_tag(from), hash_tag(to)),
        ("ring size", ring_sizes(from), ring_sizes(to)),
    ];
    let changed: Vec<(&str, String)> = pairs
        .into_iter()
        .filter(|(_, a, b)| a != b)
        .map(|(name, a, b)| (name, format!("{a} -> {b}")))
        .collect();
    let lines: String = fields(&changed)
        .lines()
        .map(|l| format!("  {l}\n"))
        .collect();
    format!("config change:\n{lines}")
}
