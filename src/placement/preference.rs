//! Turning an algorithm's successor order into a preference list.

/// Picks up to `r` distinct nodes from `order` (node indices in the
/// algorithm's successor order, possibly repeating).
///
/// Without zones, the list is the first `r` distinct nodes. With zones
/// (`zones[i]` is node `i`'s zone number, `zone_count` the number of
/// distinct zones), the first `min(r, zone_count)` entries are the first
/// nodes in successor order that each bring a zone not yet used; the rest
/// are the earliest remaining nodes in successor order.
pub(crate) fn select(
    order: impl Iterator<Item = u32>,
    r: usize,
    node_count: usize,
    zones: Option<(&[u32], usize)>,
) -> Vec<u32> {
    let r = r.min(node_count);
    let mut picked: Vec<u32> = Vec::with_capacity(r);
    if r == 0 {
        return picked;
    }
    let Some((zone_of, zone_count)) = zones else {
        for n in order {
            if !picked.contains(&n) {
                picked.push(n);
                if picked.len() == r {
                    break;
                }
            }
        }
        return picked;
    };
    let spread = r.min(zone_count);
    let mut used_zones: Vec<u32> = Vec::with_capacity(spread);
    let mut rest: Vec<u32> = Vec::with_capacity(r);
    for n in order {
        if picked.contains(&n) || rest.contains(&n) {
            continue;
        }
        let zone = zone_of[n as usize];
        if picked.len() < spread && !used_zones.contains(&zone) {
            used_zones.push(zone);
            picked.push(n);
        } else if rest.len() < r - spread {
            rest.push(n);
        }
        if picked.len() == spread && rest.len() == r - spread {
            break;
        }
    }
    picked.extend(rest);
    picked.truncate(r);
    picked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_nodes_in_successor_order() {
        let order = [3, 3, 1, 3, 0, 1, 2].into_iter();
        assert_eq!(select(order.clone(), 3, 4, None), vec![3, 1, 0]);
        assert_eq!(select(order, 9, 4, None), vec![3, 1, 0, 2]);
    }

    #[test]
    fn zones_first_then_successors() {
        // Nodes 0,1 in zone 0; 2 in zone 1; 3 in zone 2.
        let zones = [0, 0, 1, 2];
        let order = [0, 1, 1, 2, 0, 3].into_iter();
        assert_eq!(
            select(order.clone(), 3, 4, Some((&zones, 3))),
            vec![0, 2, 3]
        );
        assert_eq!(
            select(order.clone(), 4, 4, Some((&zones, 3))),
            vec![0, 2, 3, 1]
        );
        // Two zones but three replicas: two distinct zones, then the next node.
        let zones2 = [0, 0, 1, 1];
        assert_eq!(select(order, 3, 4, Some((&zones2, 2))), vec![0, 2, 1]);
    }
}
