//! Recorded ops in a few words, for the tables of `history` and `watch`.
//! The JSON output prints the whole answer instead.

use crate::wire::{NodeStateName, OpView};

/// One op of a recorded change, in a few words: `upsert a (weight 2,
/// draining)`, `remove b`, `set_config ring/xxh3`.
pub(super) fn describe_op(op: &OpView) -> String {
    match op {
        OpView::Upsert { node } => {
            let mut details = vec![format!("weight {}", node.weight)];
            if let Some(zone) = &node.zone {
                details.push(format!("zone {zone}"));
            }
            if !matches!(node.state, NodeStateName::Active) {
                details.push(node.state.as_str().into());
            }
            format!("upsert {} ({})", node.id, details.join(", "))
        }
        OpView::Remove { id } => format!("remove {id}"),
        OpView::SetConfig { config } => format!(
            "set_config {}/{}",
            config.algorithm.as_str(),
            config.hash.as_str()
        ),
    }
}

/// Every op of a change, joined; long changes are cut after three ops.
pub(super) fn describe_ops(ops: &[OpView]) -> String {
    if ops.is_empty() {
        return "(no ops)".to_owned();
    }
    let mut parts: Vec<String> = ops.iter().take(3).map(describe_op).collect();
    if ops.len() > 3 {
        parts.push(format!("… {} more", ops.len() - 3));
    }
    parts.join("; ")
}
