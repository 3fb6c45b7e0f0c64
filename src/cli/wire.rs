//! The parts of the API's answers that the tables show, decoded. The
//! JSON output prints the whole answer instead, so a field missing here is
//! never missing for scripts.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// A ring's configuration (`RingConfigView`).
#[derive(Debug, Clone, Deserialize)]
pub struct Config {
    pub algorithm: String,
    pub hash: String,
    pub vnodes_per_weight: u64,
    pub table_size: u64,
    pub replication_factor: u64,
    pub zone_aware: bool,
}

/// A ring at one version, without nodes (`RingSummary`).
#[derive(Debug, Clone, Deserialize)]
pub struct RingSummary {
    pub ring: String,
    pub version: u64,
    pub created_at: String,
    pub config: Config,
    pub nodes: u64,
    pub active_nodes: u64,
    pub fingerprint: String,
}

/// A registered node (`NodeView`).
#[derive(Debug, Clone, Deserialize)]
pub struct Node {
    pub id: String,
    #[serde(default)]
    pub address: Option<String>,
    pub weight: u64,
    #[serde(default)]
    pub zone: Option<String>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    pub state: String,
    #[serde(default)]
    pub hash_key: Option<String>,
}

/// What produced a version (`ChangeView`).
#[derive(Debug, Clone, Deserialize)]
pub struct Change {
    pub ops: Vec<Value>,
    #[serde(default)]
    pub reason: Option<String>,
    pub moved_fraction: f64,
}

/// A complete version (`SnapshotView`).
#[derive(Debug, Clone, Deserialize)]
pub struct Snapshot {
    pub ring: String,
    pub version: u64,
    pub created_at: String,
    pub config: Config,
    pub nodes: Vec<Node>,
    pub fingerprint: String,
    pub change: Change,
}

/// One node's change in share (`NodeMovementView`).
#[derive(Debug, Clone, Deserialize)]
pub struct NodeMovement {
    pub id: String,
    pub before: f64,
    pub after: f64,
    pub gained: f64,
    pub lost: f64,
}

/// Keyspace moving between two nodes (`TransferView`).
#[derive(Debug, Clone, Deserialize)]
pub struct Transfer {
    pub from: Option<String>,
    pub to: Option<String>,
    pub fraction: f64,
}

/// The movement between two versions (`DiffView`).
#[derive(Debug, Clone, Deserialize)]
pub struct Diff {
    pub basis: String,
    pub moved_fraction: f64,
    pub nodes: Vec<NodeMovement>,
    pub transfers: Vec<Transfer>,
    pub moved_ranges_total: u64,
}

/// What a change did or would do (`ChangeResult`).
#[derive(Debug, Clone, Deserialize)]
pub struct ChangeResult {
    pub ring: String,
    pub changed: bool,
    pub base_version: u64,
    pub version: u64,
    #[serde(default)]
    pub diff: Option<Diff>,
    #[serde(default)]
    pub config_change: Option<ConfigChange>,
    #[serde(default)]
    pub replayed: bool,
}

/// A configuration before and after a change (`ConfigChange`).
#[derive(Debug, Clone, Deserialize)]
pub struct ConfigChange {
    pub from: Config,
    pub to: Config,
}

/// One op of a recorded change, in a few words: `upsert a (weight 2,
/// draining)`, `remove b`, `set_config ring/xxh3`.
pub fn describe_op(op: &Value) -> String {
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("?").to_owned();
    match op.get("op").and_then(Value::as_str) {
        Some("upsert") => {
            let node = op.get("node").unwrap_or(&Value::Null);
            let mut details = vec![format!(
                "weight {}",
                node.get("weight").and_then(Value::as_u64).unwrap_or(1)
            )];
            if let Some(zone) = node.get("zone").and_then(Value::as_str) {
                details.push(format!("zone {zone}"));
            }
            if node.get("state").and_then(Value::as_str) == Some("draining") {
                details.push("draining".into());
            }
            format!("upsert {} ({})", text(node, "id"), details.join(", "))
        }
        Some("remove") => format!("remove {}", text(op, "id")),
        Some("set_config") => {
            let config = op.get("config").unwrap_or(&Value::Null);
            format!(
                "set_config {}/{}",
                text(config, "algorithm"),
                text(config, "hash")
            )
        }
        Some(other) => other.to_owned(),
        None => "?".to_owned(),
    }
}

/// Every op of a change, joined; long changes are cut after three ops.
pub fn describe_ops(ops: &[Value]) -> String {
    if ops.is_empty() {
        return "(no ops)".to_owned();
    }
    let mut parts: Vec<String> = ops.iter().take(3).map(describe_op).collect();
    if ops.len() > 3 {
        parts.push(format!("… {} more", ops.len() - 3));
    }
    parts.join("; ")
}
