//! `ringd ring create|list|show|delete`.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Subcommand};
use reqwest::{Method, StatusCode};
use serde_json::json;

use super::context::{decode, ring_path, to_body};
use super::output::{emit, emit_json, escape, fields, time, yes_no, Align, Table};
use super::policy::{guard_fields, policy_fields, PolicyArgs};
use super::{node, CliError, Context};
use crate::placement::{Algorithm, HashFunction};
use crate::wire::{
    AlgorithmName, ChangeResult, HashName, MembershipStatusView, NodeStateName, RingConfigInput,
    RingConfigView, RingSummary, SnapshotView,
};
use time::OffsetDateTime;

/// `ringd ring …`.
#[derive(Debug, Subcommand)]
pub enum RingCommand {
    /// Create a ring at version 1 with no nodes (repeating it with the same
    /// configuration changes nothing).
    Create(CreateArgs),
    /// List every ring at its latest version.
    List,
    /// Show a ring: configuration, version, fingerprint and nodes.
    Show {
        /// The ring.
        name: String,
    },
    /// Change a ring's membership policy (one version); the fields not
    /// given keep their values.
    Update(UpdateArgs),
    /// Delete a ring and every version of it.
    Delete {
        /// The ring.
        name: String,
    },
}

/// `--algorithm`: the names of [`Algorithm::ALL`], each with a line of help.
fn algorithm_parser() -> impl TypedValueParser<Value = Algorithm> {
    let help = |a: Algorithm| match a {
        Algorithm::Ring => "Virtual-node ring with 64-bit positions",
        Algorithm::Ketama => "libketama-compatible ring",
        Algorithm::Maglev => "Maglev lookup table",
        Algorithm::Jump => "Jump consistent hash",
        Algorithm::Rendezvous => "Weighted rendezvous hashing",
        Algorithm::Table => "Stored partition table with exact quotas",
        Algorithm::Nginx => "nginx's hash $key consistent (nodes placed by address)",
        Algorithm::Haproxy => "HAProxy 2.6 hash-type consistent, by stable server ids",
        Algorithm::Twemproxy => "twemproxy's distribution: ketama (nodes placed by server name)",
        Algorithm::EnvoyRingHash => {
            "Envoy's and gRPC's ring_hash through xDS (nodes need an ip:port)"
        }
        Algorithm::EnvoyMaglev => "Envoy's MAGLEV through xDS (nodes need an ip:port)",
    };
    PossibleValuesParser::new(Algorithm::ALL.map(|a| PossibleValue::new(a.name()).help(help(a))))
        .try_map(|name| name.parse::<Algorithm>())
}

/// `--hash`: the names of [`HashFunction::ALL`], each with a line of help.
fn hash_parser() -> impl TypedValueParser<Value = HashFunction> {
    let help = |h: HashFunction| match h {
        HashFunction::Xxh3 => "XXH3-64",
        HashFunction::Md5 => "MD5 (ketama's only hash)",
        HashFunction::Sha256 => "SHA-256",
        HashFunction::Murmur3 => "MurmurHash3 x64-128",
        HashFunction::Fnv1a64 => "Twemproxy's fnv1a_64 (its default)",
        HashFunction::Fnv164 => "Twemproxy's fnv1_64",
        HashFunction::Fnv1a32 => "Twemproxy's fnv1a_32",
        HashFunction::Fnv132 => "Twemproxy's fnv1_32",
        HashFunction::Crc32a => "Twemproxy's crc32a (CRC-32)",
        HashFunction::OneAtATime => "Twemproxy's one_at_a_time",
        HashFunction::Murmur => "Twemproxy's murmur (MurmurHash2)",
        HashFunction::Jenkins => "Twemproxy's jenkins (lookup3)",
        HashFunction::Hsieh => "Twemproxy's hsieh (SuperFastHash)",
        HashFunction::Crc32 => "CRC-32 (nginx's only hash; also haproxy's)",
        HashFunction::Xxh64 => "XXH64 (envoy_ring_hash's only hash)",
        HashFunction::Sdbm => "sdbm (haproxy's default)",
        HashFunction::Djb2 => "djb2 (haproxy)",
        HashFunction::Wt6 => "wt6 (haproxy)",
    };
    PossibleValuesParser::new(HashFunction::ALL.map(|h| PossibleValue::new(h.name()).help(help(h))))
        .try_map(|name| name.parse::<HashFunction>())
}

/// Flags of `ringd ring create`; the server applies its defaults to the
/// ones not given.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The ring's name: 1–63 characters of a-z 0-9 . _ -.
    pub name: String,
    /// Placement algorithm [server default: ring].
    #[arg(long, value_parser = algorithm_parser())]
    pub algorithm: Option<Algorithm>,
    /// Hash function [server default: md5 for ketama, xxh3 otherwise].
    #[arg(long, value_parser = hash_parser())]
    pub hash: Option<HashFunction>,
    /// `ring`: points per unit of weight, 1–10000 [server default: 160].
    #[arg(long, value_name = "N")]
    pub vnodes_per_weight: Option<u64>,
    /// `maglev`: lookup table size, a prime [server default: 65537].
    #[arg(long, value_name = "N")]
    pub table_size: Option<u64>,
    /// Default preference-list length, 1–64 [server default: 3].
    #[arg(long, value_name = "N")]
    pub replication_factor: Option<u64>,
    /// Spread preference lists over zones first (every active node then
    /// needs a zone).
    #[arg(long)]
    pub zone_aware: bool,
    /// `table`: partitions, a power of two from 256 to 1048576 [server
    /// default: 65536].
    #[arg(long, value_name = "N")]
    pub partitions: Option<u64>,
    /// `haproxy`: pass key hashes through HAProxy's avalanche modifier,
    /// true or false [server default: true for haproxy].
    #[arg(long, value_name = "BOOL")]
    pub avalanche: Option<bool>,
    /// `twemproxy`: two characters around the part of a key that is
    /// hashed, as nutcracker's `hash_tag` (e.g. `{}`) [server default:
    /// none].
    #[arg(long, value_name = "XY")]
    pub hash_tag: Option<String>,
    /// `envoy_ring_hash`: the least number of ring entries, as Envoy's and
    /// gRPC's `minimum_ring_size` [server default: 1024].
    #[arg(long, value_name = "N")]
    pub minimum_ring_size: Option<u64>,
    /// `envoy_ring_hash`: the most ring entries, as Envoy's and gRPC's
    /// `maximum_ring_size` [server default: 4096, gRPC's cap].
    #[arg(long, value_name = "N")]
    pub maximum_ring_size: Option<u64>,
    /// The membership policy.
    #[command(flatten)]
    pub policy: PolicyArgs,
}

/// Flags of `ringd ring update`.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The ring.
    pub name: String,
    /// The membership policy fields to change.
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Free-text reason recorded in the new version.
    #[arg(long)]
    pub reason: Option<String>,
}

/// Runs a `ring` subcommand.
pub async fn run(ctx: &Context, command: RingCommand) -> Result<(), CliError> {
    match command {
        RingCommand::Create(args) => create(ctx, args).await,
        RingCommand::List => list(ctx).await,
        RingCommand::Show { name } => show(ctx, &name).await,
        RingCommand::Update(args) => update(ctx, args).await,
        RingCommand::Delete { name } => delete(ctx, &name).await,
    }
}

async fn update(ctx: &Context, a: UpdateArgs) -> Result<(), CliError> {
    let Some(policy) = a.policy.input() else {
        return Err(CliError::Refused(
            "nothing to update: give at least one policy flag, e.g. --drain-after 30s".into(),
        ));
    };
    let mut body = json!({"ops": [{"op": "update_config", "config": {"membership": policy}}]});
    if let Some(reason) = &a.reason {
        body["reason"] = json!(reason);
    }
    let answer = ctx
        .request(
            Method::POST,
            &ring_path(&a.name, "/changes"),
            Some(&body),
            &[],
        )
        .await?;
    if ctx.json() {
        return emit_json(&answer.body);
    }
    let r: ChangeResult = decode("change result", &answer.body)?;
    let ring = escape(&r.ring);
    if !r.changed {
        return emit(&format!(
            "ring {ring} unchanged: it stays at version {}\n",
            r.version
        ));
    }
    let mut out = format!(
        "ring {ring} updated: version {} (was {})\n",
        r.version, r.base_version
    );
    if let Some(p) = &r.summary.config.membership {
        out.push_str(&fields(&policy_fields(p)));
    }
    emit(&out)
}

async fn create(ctx: &Context, a: CreateArgs) -> Result<(), CliError> {
    let input = RingConfigInput {
        algorithm: a.algorithm.map(AlgorithmName::from),
        hash: a.hash.map(HashName::from),
        vnodes_per_weight: a.vnodes_per_weight,
        table_size: a.table_size,
        replication_factor: a.replication_factor,
        // The flag only turns it on; the server's default is off.
        zone_aware: a.zone_aware.then_some(true),
        partitions: a.partitions,
        avalanche: a.avalanche,
        hash_tag: a.hash_tag,
        minimum_ring_size: a.minimum_ring_size,
        maximum_ring_size: a.maximum_ring_size,
        membership: a.policy.input(),
    };
    let body = to_body(&input);
    let answer = ctx
        .request(Method::PUT, &ring_path(&a.name, ""), Some(&body), &[])
        .await?;
    if ctx.json() {
        return emit_json(&answer.body);
    }
    let s: RingSummary = decode("ring", &answer.body)?;
    let ring = escape(&s.ring);
    let head = if answer.status == StatusCode::CREATED {
        format!("created ring {ring} at version {}\n", s.version)
    } else {
        format!(
            "ring {ring} already exists with this configuration; nothing changed (version {})\n",
            s.version
        )
    };
    emit(&format!("{head}{}", summary_fields(&s)))
}

fn config_fields(c: &RingConfigView) -> Vec<(&'static str, String)> {
    let mut fields = vec![
        ("algorithm", c.algorithm.as_str().to_owned()),
        ("hash", c.hash.as_str().to_owned()),
        ("vnodes per weight", c.vnodes_per_weight.to_string()),
    ];
    if let Some(t) = c.table_size {
        fields.push(("table size", t.to_string()));
    }
    fields.extend([
        ("replication factor", c.replication_factor.to_string()),
        ("zone aware", yes_no(c.zone_aware)),
    ]);
    if let Some(p) = c.partitions {
        fields.push(("partitions", p.to_string()));
    }
    if let Some(a) = c.avalanche {
        fields.push(("avalanche", yes_no(a)));
    }
    if let Some(t) = &c.hash_tag {
        fields.push(("hash tag", escape(t)));
    }
    if let (Some(min), Some(max)) = (c.minimum_ring_size, c.maximum_ring_size) {
        fields.push(("ring size", format!("{min} to {max} entries")));
    }
    fields
}

fn summary_fields(s: &RingSummary) -> String {
    let counts = format!("{} ({} active)", s.nodes, s.active_nodes);
    ring_fields(
        &s.ring,
        s.version,
        s.created_at,
        &s.fingerprint,
        &s.config,
        counts,
        s.membership.as_ref(),
    )
}

/// The field list `ring create` and `ring show` print above the nodes.
fn ring_fields(
    ring: &str,
    version: u64,
    created_at: OffsetDateTime,
    fingerprint: &str,
    config: &RingConfigView,
    nodes: String,
    status: Option<&MembershipStatusView>,
) -> String {
    let mut pairs = vec![
        ("ring", ring.to_owned()),
        ("version", version.to_string()),
        ("created at", time(created_at)),
        ("fingerprint", fingerprint.to_owned()),
    ];
    pairs.extend(config_fields(config));
    if let Some(policy) = &config.membership {
        pairs.extend(policy_fields(policy));
    }
    pairs.push(("nodes", nodes));
    if let Some(status) = status {
        pairs.extend(guard_fields(status));
    }
    fields(&pairs)
}

async fn list(ctx: &Context) -> Result<(), CliError> {
    let body = ctx.get("/v1/rings").await?;
    if ctx.json() {
        return emit_json(&body);
    }
    let rings: Vec<RingSummary> = decode("ring list", &body["rings"])?;
    let mut t = Table::new(&[
        ("RING", Align::Left),
        ("VERSION", Align::Right),
        ("ALGORITHM", Align::Left),
        ("HASH", Align::Left),
        ("NODES", Align::Right),
        ("ACTIVE", Align::Right),
        ("FINGERPRINT", Align::Left),
    ]);
    for r in rings {
        t.row(vec![
            r.ring,
            r.version.to_string(),
            r.config.algorithm.as_str().to_owned(),
            r.config.hash.as_str().to_owned(),
            r.nodes.to_string(),
            r.active_nodes.to_string(),
            // A prefix tells versions apart at a glance; `ring show` has it all.
            r.fingerprint.chars().take(16).collect(),
        ]);
    }
    emit(&t.render())
}

async fn show(ctx: &Context, name: &str) -> Result<(), CliError> {
    let body = ctx.get(&ring_path(name, "/snapshot")).await?;
    if ctx.json() {
        return emit_json(&body);
    }
    let s: SnapshotView = decode("snapshot", &body)?;
    let active = s
        .nodes
        .iter()
        .filter(|n| matches!(n.state, NodeStateName::Active))
        .count();
    let counts = format!("{} ({active} active)", s.nodes.len());
    let summary: RingSummary = decode("ring", &ctx.get(&ring_path(name, "")).await?)?;
    let mut out = ring_fields(
        &s.ring,
        s.version,
        s.created_at,
        &s.fingerprint,
        &s.config,
        counts,
        summary.membership.as_ref(),
    );
    if !s.nodes.is_empty() {
        out.push('\n');
        out.push_str(&node::table(&s.nodes));
    }
    emit(&out)
}

async fn delete(ctx: &Context, name: &str) -> Result<(), CliError> {
    ctx.request(Method::DELETE, &ring_path(name, ""), None, &[])
        .await?;
    if ctx.json() {
        return emit_json(&json!({"ring": name, "deleted": true}));
    }
    emit(&format!("deleted ring {}\n", escape(name)))
}
