//! A `haproxy` ring's server ids: the numeric id HAProxy places each node
//! by (`id N` in its configuration), kept by the node for life.
//!
//! HAProxy numbers a server without an explicit id by its position in the
//! list, so adding or removing one server moves the keys of every server
//! after it. ringd gives each node an id once and stores the ids with
//! every version, as it stores a `jump` ring's bucket order (spec 5.8.3).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{NodeRecord, RingError};
use crate::placement::haproxy::MAX_SERVER_ID;
use crate::placement::{NodeId, PlacementError};

/// Every node's server id (draining and joining nodes keep theirs), and
/// the lowest id never given, so that no id is ever given twice except
/// to a node's replacement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerIds {
    /// Node id → server id, for every node of the version.
    pub ids: BTreeMap<NodeId, u32>,
    /// The next id to give: above every id given so far.
    pub next: u32,
}

impl ServerIds {
    /// The ids of a ring that becomes `haproxy` (created so, or converted):
    /// its nodes in id order, whatever their state, numbered from 1.
    pub fn initial(nodes: &[NodeRecord]) -> Self {
        // Records are kept sorted by id; sort anyway, it is cheap.
        let mut ids: Vec<&NodeId> = nodes.iter().map(|n| &n.id).collect();
        ids.sort();
        let ids: BTreeMap<NodeId, u32> = ids.into_iter().cloned().zip(1..).collect();
        let next = ids.len() as u32 + 1;
        Self { ids, next }
    }

    /// The ids after a change from `before` to `after` (spec 5.8.3): a node
    /// in both keeps its id. A new node whose label (its `hash_key`, else
    /// its id) is the label of a node removed by this change *replaces* it
    /// and takes its id; several removed nodes with one label are paired
    /// with the new ones in id order. Every other new node takes `next`.
    /// The ids of removed nodes that nobody replaces are retired.
    pub fn evolve(&self, before: &[NodeRecord], after: &[NodeRecord]) -> Result<Self, RingError> {
        let remaining: BTreeMap<&NodeId, &NodeRecord> = after.iter().map(|n| (&n.id, n)).collect();
        // Removed nodes' ids by label, lowest node id first.
        let mut vacated: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        let mut removed: Vec<&NodeRecord> = before
            .iter()
            .filter(|n| !remaining.contains_key(&n.id))
            .collect();
        removed.sort_by(|a, b| b.id.cmp(&a.id));
        for node in removed {
            if let Some(&id) = self.ids.get(&node.id) {
                vacated.entry(label(node)).or_default().push(id);
            }
        }
        let mut ids = BTreeMap::new();
        let mut next = self.next;
        // `after` is in id order, so replacements pair in id order too.
        for node in after {
            let id = match self.ids.get(&node.id) {
                Some(&id) if before.iter().any(|b| b.id == node.id) => id,
                _ => match vacated.get_mut(&label(node)).and_then(Vec::pop) {
                    Some(id) => id,
                    None => {
                        if next > MAX_SERVER_ID {
                            return Err(RingError::ServerIdsExhausted);
                        }
                        next += 1;
                        next - 1
                    }
                },
            };
            ids.insert(node.id.clone(), id);
        }
        Ok(Self { ids, next })
    }

    /// `target`'s ids, for a change that restores `target`'s nodes (a
    /// rollout going back): its nodes take back the ids they had, so the
    /// placement is `target`'s again; `next` stays above every id given.
    pub fn restored(&self, target: &ServerIds) -> Self {
        Self {
            ids: target.ids.clone(),
            next: self.next.max(target.next),
        }
    }

    /// Checks stored ids against a version's nodes: every node has one,
    /// no two share one, and all are below `next`.
    pub fn check(&self, nodes: &[NodeRecord]) -> Result<(), PlacementError> {
        let bad = |what: String| Err(PlacementError::InvalidServerIds(what));
        if self.ids.len() != nodes.len() || nodes.iter().any(|n| !self.ids.contains_key(&n.id)) {
            return bad("the ids do not name exactly the ring's nodes".into());
        }
        let mut seen: Vec<u32> = self.ids.values().copied().collect();
        seen.sort_unstable();
        if seen.windows(2).any(|w| w[0] == w[1]) {
            return bad("two nodes share a server id".into());
        }
        if seen.first() == Some(&0) || seen.last().is_some_and(|&m| m >= self.next) {
            return bad(format!(
                "server ids must run from 1 to below next ({})",
                self.next
            ));
        }
        Ok(())
    }
}

fn label(node: &NodeRecord) -> String {
    node.to_node().label().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::HashKey;

    fn rec(id: &str) -> NodeRecord {
        NodeRecord::new(NodeId::new(id).unwrap())
    }

    fn ids(s: &ServerIds) -> Vec<(&str, u32)> {
        s.ids.iter().map(|(n, &i)| (n.as_str(), i)).collect()
    }

    #[test]
    fn ids_are_kept_for_life_and_never_reused() {
        let v1 = [rec("b"), rec("a"), rec("c")];
        let s1 = ServerIds::initial(&v1);
        assert_eq!(ids(&s1), [("a", 1), ("b", 2), ("c", 3)]);
        assert_eq!(s1.next, 4);
        // Remove `a` and `c` (the highest), add `d`: `d` gets 4, not 3.
        let v2 = [rec("b"), rec("d")];
        let s2 = s1.evolve(&v1, &v2).unwrap();
        assert_eq!(ids(&s2), [("b", 2), ("d", 4)]);
        assert_eq!(s2.next, 5);
        // `a` comes back later: a new node, a new id.
        let v3 = [rec("a"), rec("b"), rec("d")];
        let s3 = s2.evolve(&v2, &v3).unwrap();
        assert_eq!(ids(&s3), [("a", 5), ("b", 2), ("d", 4)]);
        s3.check(&v3).unwrap();
    }

    #[test]
    fn a_replacement_through_hash_key_takes_the_id() {
        let v1 = [rec("cache-1"), rec("cache-2")];
        let s1 = ServerIds::initial(&v1);
        // One change removes cache-1 and adds cache-9 with its label.
        let mut new = rec("cache-9");
        new.hash_key = Some(HashKey::new("cache-1").unwrap());
        let v2 = [rec("cache-2"), new.clone()];
        let s2 = s1.evolve(&v1, &v2).unwrap();
        assert_eq!(ids(&s2), [("cache-2", 2), ("cache-9", 1)]);
        assert_eq!(s2.next, 3);
        // And cache-9 is replaced in turn by another with the same key.
        let mut newer = rec("cache-10");
        newer.hash_key = new.hash_key.clone();
        let v3 = [newer, rec("cache-2")];
        let s3 = s2.evolve(&v2, &v3).unwrap();
        assert_eq!(ids(&s3), [("cache-10", 1), ("cache-2", 2)]);
        // A label that matches no removed node gets a new id.
        let mut other = rec("cache-11");
        other.hash_key = Some(HashKey::new("cache-1").unwrap());
        let v4 = [rec("cache-10"), other, rec("cache-2")];
        let s4 = s3.evolve(&v3, &v4).unwrap();
        assert_eq!(ids(&s4)[1], ("cache-11", 3));
    }

    #[test]
    fn stored_ids_are_checked() {
        let v = [rec("a"), rec("b")];
        let mut s = ServerIds::initial(&v);
        s.check(&v).unwrap();
        assert!(s.check(&v[..1]).is_err());
        s.next = 2;
        assert!(s.check(&v).is_err());
    }
}
