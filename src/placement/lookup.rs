//! Key lookups, the hot path: a key's hash, its owner and its preference
//! list.

use super::{haproxy, hash, ketama, nginx, preference, rendezvous, twemproxy};
use super::{HashFunction, Layout, NodeId, Placement};

impl Placement {
    /// The key's position in the algorithm's hash space: 32 bits for
    /// `ketama`, `nginx` and `haproxy` (after the avalanche modifier, when
    /// on), 64 bits otherwise.
    #[inline]
    pub fn key_hash(&self, key: &[u8]) -> u64 {
        match self.layout {
            Layout::Ketama(_) => u64::from(ketama::key_hash(key)),
            Layout::Nginx(_) => u64::from(nginx::key_hash(key)),
            Layout::Twemproxy(_) => u64::from(twemproxy::key_hash(
                self.config.hash,
                self.config.hash_tag,
                key,
            )),
            Layout::Haproxy(_) => u64::from(haproxy::key_hash(
                self.config.hash,
                self.config.avalanche,
                key,
            )),
            _ => hash::hash64(self.config.hash, key),
        }
    }

    /// Index (into [`Placement::nodes`]) of the node owning `key`.
    #[inline(always)]
    pub fn owner_index(&self, key: &[u8]) -> Option<usize> {
        // The default ring and hash get a path of their own that inlines
        // into the caller's loop as a hash and one or two loads (and
        // `table` one load); every other
        // combination takes one call, so that its code (md5 for ketama, the
        // rendezvous scan) stays out of that loop.
        if let (Layout::Ring(c), HashFunction::Xxh3) = (&self.layout, self.config.hash) {
            return c
                .owner(hash::hash64(HashFunction::Xxh3, key))
                .map(|i| i as usize);
        }
        // A table with the default hash too: the hash, a shift and one load.
        if let (Layout::Table(t), HashFunction::Xxh3) = (&self.layout, self.config.hash) {
            let h = hash::hash64(HashFunction::Xxh3, key);
            return t
                .cells()
                .get(t.partition_of(h) * t.replicas())
                .map(|&i| i as usize);
        }
        self.owner_index_general(key)
    }

    #[inline(never)]
    fn owner_index_general(&self, key: &[u8]) -> Option<usize> {
        self.owner_of_hash(self.key_hash(key))
    }

    /// Owner of a key already hashed with [`Placement::key_hash`].
    #[inline]
    pub fn owner_of_hash(&self, h: u64) -> Option<usize> {
        let i = match &self.layout {
            Layout::Ring(c)
            | Layout::Ketama(c)
            | Layout::Nginx(c)
            | Layout::Twemproxy(c)
            | Layout::EnvoyRingHash(c) => c.owner(h)?,
            Layout::Haproxy(c) => c.boundaries.owner(h)?,
            Layout::Maglev(t) => *t.get((h % self.config.table_size) as usize)?,
            Layout::Jump(b) if !b.is_empty() => b.owner(b.lookup(h)),
            Layout::Jump(_) => return None,
            Layout::Rendezvous {
                node_hashes,
                weights,
                uniform,
            } => rendezvous::owner(h, node_hashes, weights, *uniform)?,
            Layout::Table(t) => *t.cells().get(t.partition_of(h) * t.replicas())?,
        };
        Some(i as usize)
    }

    /// The node owning `key`, or `None` when no node is active.
    #[inline]
    pub fn owner(&self, key: &[u8]) -> Option<&NodeId> {
        self.owner_index(key).map(|i| &self.nodes[i].id)
    }

    /// Indices of up to `r` distinct nodes for `key`, owner first, in the
    /// algorithm's successor order (zones first when zone awareness is on).
    pub fn preference_indices(&self, key: &[u8], r: usize) -> Vec<usize> {
        self.preference_of_hash(self.key_hash(key), r)
            .into_iter()
            .map(|i| i as usize)
            .collect()
    }

    /// [`Placement::preference_indices`] of a key whose
    /// [`Placement::key_hash`] is `h`, as `u32` indices: a caller that
    /// also needs the hash (a lookup's answer) computes it once, and gets
    /// the list without a second allocation.
    pub fn preference_of_hash(&self, h: u64, r: usize) -> Vec<u32> {
        let n = self.nodes.len();
        let zones = self.zones.as_ref().map(|z| (&z.of_node[..], z.count));
        match &self.layout {
            Layout::Ring(c)
            | Layout::Ketama(c)
            | Layout::Nginx(c)
            | Layout::Twemproxy(c)
            | Layout::EnvoyRingHash(c) => match c.successor(h) {
                Some(start) => preference::select(c.walk(start), r, n, zones),
                None => Vec::new(),
            },
            // The nearest point, then the points after it: the servers
            // HAProxy falls back to, in order, when it must avoid one.
            Layout::Haproxy(c) => match c.boundaries.successor(h) {
                Some(start) => preference::select(c.boundaries.walk(start), r, n, zones),
                None => Vec::new(),
            },
            Layout::Maglev(t) if !t.is_empty() => {
                let start = (h % self.config.table_size) as usize;
                let walk = (0..t.len()).map(|k| t[(start + k) % t.len()]);
                preference::select(walk, r, n, zones)
            }
            // One step per run of a node, not per bucket: the same list
            // (see `BucketRuns::successors`).
            Layout::Jump(b) if !b.is_empty() => {
                preference::select(b.successors(b.lookup(h)), r, n, zones)
            }
            // The partition's row, then the rows after it, so a list longer
            // than the replicas continues in partition order.
            Layout::Table(t) if t.replicas() > 0 => {
                let first = t.partition_of(h);
                let rows = t.partitions() as usize;
                let walk = (0..rows).flat_map(|k| t.row((first + k) % rows).iter().copied());
                preference::select(walk, r, n, zones)
            }
            Layout::Maglev(_) | Layout::Jump(_) | Layout::Table(_) => Vec::new(),
            Layout::Rendezvous {
                node_hashes,
                weights,
                uniform,
            } => {
                let ranked = rendezvous::ranked(h, node_hashes, weights, *uniform);
                preference::select(ranked.into_iter(), r, n, zones)
            }
        }
    }

    /// Up to `r` distinct nodes for `key`: exactly `min(r, active nodes)`,
    /// except under `ketama`, where (as in libketama) a node whose weight
    /// share rounds down to zero points owns nothing and is never listed.
    pub fn preference_list(&self, key: &[u8], r: usize) -> Vec<&NodeId> {
        self.preference_indices(key, r)
            .into_iter()
            .map(|i| &self.nodes[i].id)
            .collect()
    }
}
