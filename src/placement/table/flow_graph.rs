//! The implicit flow network the completion searches (`flow.rs`): its
//! vertices and their numbering, which rows each node holds, and the
//! memory of one search.

use std::collections::VecDeque;

use super::assign::OPEN;

/// Not reached, or reached from the source.
pub(super) const NONE: u32 = u32::MAX;

/// A vertex of the network (the source and sink are implicit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Vertex {
    /// `up(p)`.
    Up(usize),
    /// `down(p)`.
    Down(usize),
    /// `(p, z)` for every zone `z` absent from row `p`.
    Absent(usize),
    /// `(p, z)` for the zone of the node in slot `s` of row `p` (its first
    /// slot of that zone).
    Present(usize, usize),
    /// A node.
    Node(u32),
}

/// Numbers the vertices for `partitions` rows of `replicas`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Numbering {
    pub partitions: usize,
    pub replicas: usize,
}

impl Numbering {
    pub(super) fn len(&self, nodes: usize) -> usize {
        self.partitions * (3 + self.replicas) + nodes
    }

    pub(super) fn id(&self, v: Vertex) -> usize {
        let p = self.partitions;
        match v {
            Vertex::Up(q) => q,
            Vertex::Down(q) => p + q,
            Vertex::Absent(q) => 2 * p + q,
            Vertex::Present(q, s) => 3 * p + q * self.replicas + s,
            Vertex::Node(x) => p * (3 + self.replicas) + x as usize,
        }
    }

    pub(super) fn vertex(&self, id: usize) -> Vertex {
        let p = self.partitions;
        match id {
            _ if id < p => Vertex::Up(id),
            _ if id < 2 * p => Vertex::Down(id - p),
            _ if id < 3 * p => Vertex::Absent(id - 2 * p),
            _ if id < p * (3 + self.replicas) => {
                let at = id - 3 * p;
                Vertex::Present(at / self.replicas, at % self.replicas)
            }
            _ => Vertex::Node((id - p * (3 + self.replicas)) as u32),
        }
    }
}

/// Which rows each node holds, ascending, and among them those where its
/// zone holds two replicas or more: from those alone can it leave for a
/// node of another zone to take its place.
pub(super) struct RowIndex {
    pub holds: Vec<Vec<u32>>,
    pub doubled: Vec<Vec<u32>>,
}

impl RowIndex {
    pub(super) fn new(cells: &[u32], replicas: usize, zone_of: &[u32]) -> Self {
        let n = zone_of.len();
        let mut index = Self {
            holds: vec![Vec::new(); n],
            doubled: vec![Vec::new(); n],
        };
        for (p, row) in cells.chunks(replicas).enumerate() {
            for &x in row.iter().filter(|&&x| x != OPEN) {
                index.holds[x as usize].push(p as u32);
            }
            index.note(p, row, zone_of);
        }
        index
    }

    /// Adds row `p` to the doubled rows of its nodes whose zone it holds
    /// twice or more.
    pub(super) fn note(&mut self, p: usize, row: &[u32], zone_of: &[u32]) {
        for x in doubled_in(row, zone_of) {
            let list = &mut self.doubled[x as usize];
            if let Err(at) = list.binary_search(&(p as u32)) {
                list.insert(at, p as u32);
            }
        }
    }

    /// Takes row `p` out of the doubled rows of its nodes.
    pub(super) fn forget(&mut self, p: usize, row: &[u32], zone_of: &[u32]) {
        for x in doubled_in(row, zone_of) {
            let list = &mut self.doubled[x as usize];
            if let Ok(at) = list.binary_search(&(p as u32)) {
                list.remove(at);
            }
        }
    }

    pub(super) fn hold(&mut self, x: u32, p: usize) {
        let list = &mut self.holds[x as usize];
        if let Err(at) = list.binary_search(&(p as u32)) {
            list.insert(at, p as u32);
        }
    }

    pub(super) fn release(&mut self, x: u32, p: usize) {
        let list = &mut self.holds[x as usize];
        if let Ok(at) = list.binary_search(&(p as u32)) {
            list.remove(at);
        }
    }
}

/// The nodes of `row` whose zone it holds twice or more.
fn doubled_in<'a>(row: &'a [u32], zone_of: &'a [u32]) -> impl Iterator<Item = u32> + 'a {
    let zone = move |x: u32| zone_of[x as usize];
    row.iter().copied().filter(move |&x| {
        x != OPEN
            && row
                .iter()
                .filter(|&&y| y != OPEN && zone(y) == zone(x))
                .count()
                > 1
    })
}

/// The search's memory, kept between searches so that each one clears
/// only what the last one reached.
pub(super) struct Search {
    pub number: Numbering,
    reached: Vec<bool>,
    /// The vertex each vertex was reached from ([`NONE`]: the source).
    pub via: Vec<u32>,
    touched: Vec<u32>,
    /// Vertices to expand, each with how far its expansion has got (for a
    /// node: how many of the rows it holds are reached).
    pub queue: VecDeque<(u32, u32)>,
    /// Per zone, the nodes not reached yet (a node may linger here after
    /// being reached; it is dropped when next met).
    unreached: Vec<Vec<u32>>,
    /// Zones whose list of unreached nodes may not be empty.
    pub live_zones: Vec<u32>,
    /// Nodes not reached yet, in all and per zone.
    pub left: usize,
    pub left_in: Vec<usize>,
    /// The first node reached that is short of its quota: the path's end.
    pub end: Option<u32>,
}

impl Search {
    pub(super) fn new(number: Numbering, nodes: usize, zones: usize) -> Self {
        Self {
            number,
            reached: vec![false; number.len(nodes)],
            via: vec![NONE; number.len(nodes)],
            touched: Vec::new(),
            queue: VecDeque::new(),
            unreached: vec![Vec::new(); zones],
            live_zones: Vec::new(),
            left: 0,
            left_in: vec![0; zones],
            end: None,
        }
    }

    /// Forgets the last search: nothing is reached.
    pub(super) fn clear(&mut self, zone_of: &[u32]) {
        for &v in &self.touched {
            self.reached[v as usize] = false;
        }
        self.touched.clear();
        self.queue.clear();
        self.end = None;
        for list in &mut self.unreached {
            list.clear();
        }
        self.left_in.fill(0);
        for (x, &z) in zone_of.iter().enumerate() {
            self.unreached[z as usize].push(x as u32);
            self.left_in[z as usize] += 1;
        }
        self.left = zone_of.len();
        self.live_zones = (0..self.unreached.len() as u32).collect();
    }

    /// Reaches `v` from `from` (the source if `None`), unless it is
    /// reached already; a node short of its quota ends the search.
    pub(super) fn reach(
        &mut self,
        v: Vertex,
        from: Option<Vertex>,
        short: &[u64],
        zone_of: &[u32],
    ) {
        let id = self.number.id(v);
        if self.reached[id] || self.end.is_some() {
            return;
        }
        self.reached[id] = true;
        self.touched.push(id as u32);
        self.via[id] = from.map_or(NONE, |f| self.number.id(f) as u32);
        // A path's length is the replicas it moves, the edges into nodes:
        // the rest of a row is searched before the next node is taken.
        match v {
            Vertex::Node(x) => {
                self.left -= 1;
                self.left_in[zone_of[x as usize] as usize] -= 1;
                if short[x as usize] > 0 {
                    self.end = Some(x);
                } else {
                    self.queue.push_back((id as u32, 0));
                }
            }
            _ => self.queue.push_front((id as u32, 0)),
        }
    }

    /// Reaches every node of zone `z` not reached yet and not in `row`;
    /// whether any of the zone's nodes are left.
    pub(super) fn reach_zone(
        &mut self,
        z: u32,
        row: &[u32],
        from: Vertex,
        short: &[u64],
        zone_of: &[u32],
    ) -> bool {
        let mut list = std::mem::take(&mut self.unreached[z as usize]);
        list.retain(|&x| {
            if self.reached[self.number.id(Vertex::Node(x))] {
                return false;
            }
            if row.contains(&x) {
                return true;
            }
            self.reach(Vertex::Node(x), Some(from), short, zone_of);
            false
        });
        let left = !list.is_empty();
        self.unreached[z as usize] = list;
        left
    }
}
