//! `ringd node add|update|drain|remove|list`, and `join` (in [`super::join`]).
//! Every mutation that depends
//! on what the ring holds (add, update, drain) reads first and writes with
//! `If-Match` on the version it read, so a concurrent change makes it fail
//! (412) instead of being overwritten.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Subcommand};
use reqwest::Method;
use serde_json::{Map, Value};

use super::context::{decode, encode, ring_path, to_body};
use super::flags::parse_label;
use super::output::{emit, emit_json, escape, percent, time, Align, Table};
use super::{CliError, Context};
use crate::placement::NodeState;
use crate::wire::{ChangeResult, NodeInput, NodeStateName, NodeView};

/// `ringd node …`.
#[derive(Debug, Subcommand)]
pub enum NodeCommand {
    /// Register a new node (refused if the ring already has it).
    Add(AddArgs),
    /// Change some of a node's fields; the others keep their values.
    Update(UpdateArgs),
    /// Mark a node draining: it keeps its record but owns no keys.
    Drain(TargetArgs),
    /// Remove a node from the ring.
    Remove(TargetArgs),
    /// Keep a node in a ring while this runs: register it with a lease,
    /// renew it, release it on SIGINT or SIGTERM.
    Join(super::join::JoinArgs),
    /// List a ring's nodes at its latest version, with their health.
    List {
        /// The ring.
        ring: String,
    },
    /// Apply a node's due automatic transition (drain, removal or
    /// activation) now, despite the partition guard.
    Transition {
        /// The ring.
        ring: String,
        /// The node.
        id: String,
    },
}

/// A node's fields as flags; only the given ones are sent or changed.
#[derive(Debug, Args)]
pub struct NodeFields {
    /// Relative capacity, 1–1000000 [default for a new node: 1].
    #[arg(long, value_name = "W")]
    pub weight: Option<u64>,
    /// Failure domain.
    #[arg(long, value_name = "Z")]
    pub zone: Option<String>,
    /// Where clients reach the node (not interpreted).
    #[arg(long, value_name = "A")]
    pub address: Option<String>,
    /// A label; repeat for several. `update` adds or replaces the keys given.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
    /// Hash this instead of the id, so a replacement takes over a node's
    /// positions.
    #[arg(long, value_name = "K")]
    pub hash_key: Option<String>,
    /// Free-text reason recorded in the new version.
    #[arg(long)]
    pub reason: Option<String>,
}

/// `ringd node add RING ID [flags]`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The ring.
    pub ring: String,
    /// The node's id.
    pub id: String,
    // clap would read a doc comment here as help text of the flattened
    // group, which would change `--help`.
    #[allow(missing_docs)]
    #[command(flatten)]
    pub fields: NodeFields,
}

/// `ringd node update RING ID [flags]`.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The ring.
    pub ring: String,
    /// The node's id.
    pub id: String,
    // clap would read a doc comment here as help text of the flattened
    // group, which would change `--help`.
    #[allow(missing_docs)]
    #[command(flatten)]
    pub fields: NodeFields,
    /// Remove a label; repeat for several.
    #[arg(long = "remove-label", value_name = "KEY")]
    pub remove_labels: Vec<String>,
    /// `active`, `draining` or `joining`.
    #[arg(long, value_parser = state_parser())]
    pub state: Option<NodeState>,
}

/// `--state`: `active`, `draining` or `joining`, parsed as the API names
/// them.
fn state_parser() -> impl TypedValueParser<Value = NodeState> {
    let help = |s: NodeState| match s {
        NodeState::Active => "Owns keys",
        NodeState::Draining => "Keeps its record but owns no keys",
        NodeState::Joining => "Registered but owns no keys until activated",
    };
    let states = [NodeState::Active, NodeState::Draining, NodeState::Joining];
    PossibleValuesParser::new(
        states.map(|s| PossibleValue::new(NodeStateName::from(s).as_str()).help(help(s))),
    )
    .try_map(|name| serde_json::from_value::<NodeState>(Value::String(name)))
}

/// A ring and one of its nodes.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// The ring.
    pub ring: String,
    /// The node's id.
    pub id: String,
    /// Free-text reason recorded in the new version.
    #[arg(long)]
    pub reason: Option<String>,
}

/// Runs a `node` subcommand.
pub async fn run(ctx: &Context, command: NodeCommand) -> Result<(), CliError> {
    match command {
        NodeCommand::Add(a) => add(ctx, a).await,
        NodeCommand::Update(a) => {
            let state = a.state;
            update(
                ctx,
                &a.ring,
                &a.id,
                &a.fields,
                &a.remove_labels,
                state,
                "updated",
            )
            .await
        }
        NodeCommand::Drain(t) => {
            let fields = NodeFields {
                weight: None,
                zone: None,
                address: None,
                labels: Vec::new(),
                hash_key: None,
                reason: t.reason,
            };
            let draining = Some(NodeState::Draining);
            update(ctx, &t.ring, &t.id, &fields, &[], draining, "drained").await
        }
        NodeCommand::Remove(t) => remove(ctx, t).await,
        NodeCommand::Join(a) => super::join::run(ctx, a).await,
        NodeCommand::List { ring } => list(ctx, &ring).await,
        NodeCommand::Transition { ring, id } => {
            let path = ring_path(&ring, &format!("/nodes/{}/transition", encode(&id)));
            let answer = ctx.request(Method::POST, &path, None, &[]).await?;
            report(ctx, &answer.body, &id, "transitioned (guard overridden)")
        }
    }
}

fn node_path(ring: &str, id: &str, reason: &Option<String>) -> String {
    let query = reason
        .as_ref()
        .map(|r| format!("?reason={}", encode(r)))
        .unwrap_or_default();
    ring_path(ring, &format!("/nodes/{}{query}", encode(id)))
}

fn if_match(version: u64) -> String {
    format!("\"{version}\"")
}

async fn add(ctx: &Context, a: AddArgs) -> Result<(), CliError> {
    let listed = ctx
        .request(Method::GET, &ring_path(&a.ring, "/nodes"), None, &[])
        .await?;
    let nodes: Vec<NodeView> = decode("node list", &listed.body["nodes"])?;
    let version = listed.body["version"].as_u64().or(listed.version);
    if nodes.iter().any(|n| n.id == a.id) {
        return Err(CliError::Refused(format!(
            "node {} is already in ring {}: change it with `ringd node update`",
            escape(&a.id),
            escape(&a.ring)
        )));
    }
    let body = to_body(&node_input(&a.fields));
    let tag = version.map(if_match);
    let headers: Vec<(&str, &str)> = tag.iter().map(|t| ("if-match", t.as_str())).collect();
    let answer = ctx
        .request(
            Method::PUT,
            &node_path(&a.ring, &a.id, &a.fields.reason),
            Some(&body),
            &headers,
        )
        .await?;
    report(ctx, &answer.body, &a.id, "added")
}

/// Reads the node, applies the given fields and writes the whole record
/// back on the version read.
async fn update(
    ctx: &Context,
    ring: &str,
    id: &str,
    fields: &NodeFields,
    remove_labels: &[String],
    state: Option<NodeState>,
    verb: &str,
) -> Result<(), CliError> {
    let read = ctx
        .request(Method::GET, &node_path(ring, id, &None), None, &[])
        .await?;
    let mut body = match read.body {
        Value::Object(map) => map,
        other => return Err(CliError::decode("node", format!("not an object: {other}"))),
    };
    let mut labels = match body.remove("labels") {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    for key in remove_labels {
        labels.remove(key);
    }
    body.insert("labels".into(), Value::Object(labels));
    put_fields(&mut body, fields);
    if let Some(state) = state {
        body.insert("state".into(), NodeStateName::from(state).as_str().into());
    }
    let tag = read.version.map(if_match);
    let headers: Vec<(&str, &str)> = tag.iter().map(|t| ("if-match", t.as_str())).collect();
    let answer = ctx
        .request(
            Method::PUT,
            &node_path(ring, id, &fields.reason),
            Some(&Value::Object(body)),
            &headers,
        )
        .await?;
    report(ctx, &answer.body, id, verb)
}

/// The node body the flags give: only the fields set.
fn node_input(f: &NodeFields) -> NodeInput {
    NodeInput {
        address: f.address.clone(),
        weight: f.weight,
        zone: f.zone.clone(),
        // A label given twice keeps its last value, as on the command line.
        labels: (!f.labels.is_empty()).then(|| f.labels.iter().cloned().collect()),
        state: None,
        hash_key: f.hash_key.clone(),
        ramp: None,
    }
}

/// Sets the given flags on a node body, merging labels into those present.
fn put_fields(body: &mut Map<String, Value>, f: &NodeFields) {
    let Value::Object(given) = to_body(&node_input(f)) else {
        return;
    };
    for (k, v) in given {
        if let (Some(Value::Object(labels)), Value::Object(more)) = (body.get_mut(&k), &v) {
            labels.extend(more.clone());
            continue;
        }
        body.insert(k, v);
    }
}

async fn remove(ctx: &Context, t: TargetArgs) -> Result<(), CliError> {
    let answer = ctx
        .request(
            Method::DELETE,
            &node_path(&t.ring, &t.id, &t.reason),
            None,
            &[],
        )
        .await?;
    report(ctx, &answer.body, &t.id, "removed")
}

/// Prints what a one-node change did: the new version and the moved share.
fn report(ctx: &Context, body: &Value, id: &str, verb: &str) -> Result<(), CliError> {
    if ctx.json() {
        return emit_json(body);
    }
    let r: ChangeResult = decode("change result", body)?;
    let (id, ring) = (escape(id), escape(&r.ring));
    if !r.changed {
        return emit(&format!(
            "node {id} unchanged: ring {ring} stays at version {}\n",
            r.version
        ));
    }
    let moved = r
        .diff
        .as_ref()
        .map_or_else(|| "unknown".to_owned(), |d| percent(d.moved_fraction));
    emit(&format!(
        "node {id} {verb}: ring {ring} at version {} (was {}), {moved} of the keyspace moved\n",
        r.version, r.base_version
    ))
}

async fn list(ctx: &Context, ring: &str) -> Result<(), CliError> {
    let body = ctx.get(&ring_path(ring, "/nodes")).await?;
    if ctx.json() {
        return emit_json(&body);
    }
    let nodes: Vec<NodeView> = decode("node list", &body["nodes"])?;
    let version = body["version"].as_u64().unwrap_or_default();
    emit(&format!(
        "ring {} at version {version}\n\n{}",
        escape(ring),
        health_table(&nodes)
    ))
}

/// The node table of `ring show`: the records of a version.
pub(crate) fn table(nodes: &[NodeView]) -> String {
    render(nodes, false)
}

/// The node table of `node list`: the records, and each node's health,
/// last heartbeat and lease deadline (`-` for a node without a lease).
pub(crate) fn health_table(nodes: &[NodeView]) -> String {
    render(nodes, true)
}

fn render(nodes: &[NodeView], health: bool) -> String {
    let mut columns = vec![("NODE", Align::Left), ("STATE", Align::Left)];
    if health {
        columns.push(("HEALTH", Align::Left));
    }
    columns.extend([
        ("WEIGHT", Align::Right),
        ("ZONE", Align::Left),
        ("ADDRESS", Align::Left),
        ("HASH KEY", Align::Left),
    ]);
    if health {
        columns.extend([
            ("LAST HEARTBEAT", Align::Left),
            ("LEASE DEADLINE", Align::Left),
        ]);
    }
    columns.push(("LABELS", Align::Left));
    let mut t = Table::new(&columns);
    let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let at = |v: Option<::time::OffsetDateTime>| v.map_or_else(|| "-".into(), time);
    for n in nodes {
        let labels: Vec<String> = n.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut row = vec![n.id.clone(), n.state.as_str().to_owned()];
        if health {
            row.push(
                n.health
                    .map_or_else(|| "-".into(), |h| h.as_str().to_owned()),
            );
        }
        row.extend([
            n.weight.to_string(),
            dash(&n.zone),
            dash(&n.address),
            dash(&n.hash_key),
        ]);
        if health {
            row.extend([at(n.last_heartbeat), at(n.lease_deadline)]);
        }
        row.push(if labels.is_empty() {
            "-".into()
        } else {
            labels.join(",")
        });
        t.row(row);
    }
    t.render()
}
