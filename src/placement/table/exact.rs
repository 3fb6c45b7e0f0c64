//! The exact least-movement assignment, by minimum-cost flow, for tables
//! small enough that the flow network (one edge per node and partition)
//! is cheap: a few thousand edges.
//!
//! The network: source → node (capacity: its quota) → the partition's
//! place for the node's zone (capacity 1; cost 0 if the node held the
//! partition before, else 1) → partition (capacity: the most replicas one
//! zone may hold; where every zone must be present, its first unit costs
//! −BIG so that every flow of least cost has one replica per zone) →
//! sink (capacity: replicas). A flow of `partitions × replicas` units of
//! least cost is an assignment that meets every quota and the zone rule
//! and gains the fewest replicas. Shortest paths are found with the queue
//! form of Bellman–Ford, which takes the negative costs; edges are
//! scanned in the order they were added, so the result is deterministic.

use std::collections::VecDeque;

use super::assign::{ZoneRule, OPEN};

/// The largest `partitions × nodes` solved exactly.
pub(crate) const EXACT_LIMIT: usize = 4096;

struct Edge {
    to: usize,
    cap: i64,
    cost: i64,
}

#[derive(Default)]
struct Network {
    edges: Vec<Edge>,
    out: Vec<Vec<usize>>,
}

impl Network {
    fn with_vertices(n: usize) -> Self {
        Self {
            edges: Vec::new(),
            out: (0..n).map(|_| Vec::new()).collect(),
        }
    }

    /// Adds `from → to` and its residual twin; returns the edge's index.
    fn add(&mut self, from: usize, to: usize, cap: i64, cost: i64) -> usize {
        let e = self.edges.len();
        self.edges.push(Edge { to, cap, cost });
        self.edges.push(Edge {
            to: from,
            cap: 0,
            cost: -cost,
        });
        self.out[from].push(e);
        self.out[to].push(e + 1);
        e
    }

    /// Sends up to `want` units from `s` to `t` along shortest paths;
    /// returns the units sent.
    fn min_cost_flow(&mut self, s: usize, t: usize, want: i64) -> i64 {
        let v = self.out.len();
        let mut sent = 0;
        while sent < want {
            let mut dist = vec![i64::MAX; v];
            let mut via = vec![usize::MAX; v];
            let mut queued = vec![false; v];
            let mut queue = VecDeque::from([s]);
            dist[s] = 0;
            while let Some(u) = queue.pop_front() {
                queued[u] = false;
                for &e in &self.out[u] {
                    let edge = &self.edges[e];
                    if edge.cap > 0 && dist[u] + edge.cost < dist[edge.to] {
                        dist[edge.to] = dist[u] + edge.cost;
                        via[edge.to] = e;
                        if !queued[edge.to] {
                            queued[edge.to] = true;
                            queue.push_back(edge.to);
                        }
                    }
                }
            }
            if dist[t] == i64::MAX {
                break;
            }
            let mut push = want - sent;
            let mut x = t;
            while x != s {
                let e = via[x];
                push = push.min(self.edges[e].cap);
                x = self.edges[e ^ 1].to;
            }
            let mut x = t;
            while x != s {
                let e = via[x];
                self.edges[e].cap -= push;
                self.edges[e ^ 1].cap += push;
                x = self.edges[e ^ 1].to;
            }
            sent += push;
        }
        sent
    }
}

/// The assignment of least movement (see the module note), rows in the
/// order: previous nodes kept, in their previous order, then the others by
/// index. `None` if no assignment meets the quotas and the rule.
pub(crate) fn exact(
    partitions: usize,
    replicas: usize,
    quotas: &[u64],
    rule: &ZoneRule,
    previous: &[u32],
    previous_replicas: usize,
) -> Option<Vec<u32>> {
    let n = quotas.len();
    let z = rule.zones;
    let big = (partitions * replicas + 1) as i64;
    // Vertices: source, nodes, (partition, zone) places, partitions, sink.
    let source = 0;
    let node = |i: usize| 1 + i;
    let place = |p: usize, zone: usize| 1 + n + p * z + zone;
    let part = |p: usize| 1 + n + partitions * z + p;
    let sink = 1 + n + partitions * z + partitions;
    let mut net = Network::with_vertices(sink + 1);
    let held_before = |p: usize, i: usize| {
        previous_replicas > 0
            && previous[p * previous_replicas..(p + 1) * previous_replicas].contains(&(i as u32))
    };
    for (i, &q) in quotas.iter().enumerate() {
        net.add(source, node(i), q as i64, 0);
    }
    let mut assignment_edges = Vec::with_capacity(n * partitions);
    for i in 0..n {
        let zone = rule.zone_of[i] as usize;
        for p in 0..partitions {
            let cost = if held_before(p, i) { 0 } else { 1 };
            let e = net.add(node(i), place(p, zone), 1, cost);
            assignment_edges.push((i, p, e));
        }
    }
    for p in 0..partitions {
        for zone in 0..z {
            let max = rule.max_per_zone as i64;
            if rule.every_zone {
                net.add(place(p, zone), part(p), 1, -big);
                if max > 1 {
                    net.add(place(p, zone), part(p), max - 1, 0);
                }
            } else {
                net.add(place(p, zone), part(p), max, 0);
            }
        }
        net.add(part(p), sink, replicas as i64, 0);
    }
    let want = (partitions * replicas) as i64;
    if net.min_cost_flow(source, sink, want) < want {
        return None;
    }
    let mut rows: Vec<Vec<u32>> = vec![Vec::with_capacity(replicas); partitions];
    for (i, p, e) in assignment_edges {
        if net.edges[e].cap == 0 {
            rows[p].push(i as u32);
        }
    }
    let mut cells = Vec::with_capacity(partitions * replicas);
    for (p, row) in rows.into_iter().enumerate() {
        let before: &[u32] = if previous_replicas > 0 {
            &previous[p * previous_replicas..(p + 1) * previous_replicas]
        } else {
            &[]
        };
        let kept = before
            .iter()
            .copied()
            .filter(|x| *x != OPEN && row.contains(x));
        let mut ordered: Vec<u32> = Vec::with_capacity(replicas);
        for x in kept {
            if !ordered.contains(&x) {
                ordered.push(x);
            }
        }
        for x in row {
            if !ordered.contains(&x) {
                ordered.push(x);
            }
        }
        cells.extend(ordered);
    }
    Some(cells)
}
