//! The canonical binary encoding of a materialized placement, and its
//! SHA-256 fingerprint.
//!
//! Layout (all integers little-endian; `docs/placement-spec.md` is the
//! normative description):
//!
//! ```text
//! magic      8 bytes  "RINGDPL" 0x01
//! algorithm  u8       1 ring, 2 ketama, 3 maglev, 4 jump, 5 rendezvous, 6 table,
//!                     7 nginx, 8 haproxy, 9 twemproxy
//! hash       u8       1 xxh3, 2 md5, 3 sha256, 4 murmur3, 5 crc32; twemproxy's
//!                     9 to 17 (spec 2.1)
//! zone_aware u8       0 or 1
//! flags      u8       bit 0: ramped (some active node's ramp is below full);
//!                     0 otherwise, so unramped encodings are as before
//!                     ramps existed
//! replicas   u32      replication factor
//! nodes      u32      count, then per active node in id order:
//!                     u8 id length, id bytes, u8 zone length (0 = none,
//!                     and always 0 unless zone_aware), zone bytes, u32 weight,
//!                     and, only when ramped, u32 ramp (parts of 65,536),
//!                     and, only for an algorithm that places by address,
//!                     u8 address length, address bytes
//! body, by algorithm:
//!   ring        u32 count, then count × (u64 position, u32 node)
//!   ketama      u32 count, then count × (u32 position, u32 node)
//!   nginx       the same as ketama
//!   maglev      u32 table size, then size × u32 node
//!   jump        u32 buckets, then buckets × u32 node (0xFFFFFFFF = hole)
//!   rendezvous  per node, u64 label hash
//!   table       u32 partitions, u8 replicas, then partitions × replicas
//!               node indices, primary first (u16, or u32 above 65,535 nodes)
//!   haproxy     u8 avalanche (0 or 1), per node u32 server id, then u32
//!               count, then count × (u32 key, u32 node), ascending by key
//!   twemproxy   u8 hash_tag length (0 or 2), its bytes, then as ketama,
//!               equal positions in nutcracker's (server-name) order
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Layout, Placement};

/// First bytes of every encoding; the last byte is the format version.
pub(super) const MAGIC: &[u8; 8] = b"RINGDPL\x01";

/// Node number that marks a jump hole.
pub(super) const HOLE: u32 = u32::MAX;

/// SHA-256 over the canonical encoding; shown as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Fingerprint(pub [u8; 32]);

impl Fingerprint {
    /// Fingerprint of an encoding.
    pub fn of(encoding: &[u8]) -> Self {
        Self(Sha256::digest(encoding).into())
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({self})")
    }
}

/// Why a fingerprint string did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fingerprint must be 64 lowercase hex digits")]
pub struct BadFingerprint;

impl FromStr for Fingerprint {
    type Err = BadFingerprint;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let b = s.as_bytes();
        if b.len() != 64 {
            return Err(BadFingerprint);
        }
        let digit = |c: u8| match c {
            b'0'..=b'9' => Ok(c - b'0'),
            b'a'..=b'f' => Ok(c - b'a' + 10),
            _ => Err(BadFingerprint),
        };
        let mut out = [0u8; 32];
        for (i, pair) in b.chunks_exact(2).enumerate() {
            out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
        }
        Ok(Self(out))
    }
}

impl From<Fingerprint> for String {
    fn from(f: Fingerprint) -> Self {
        f.to_string()
    }
}

impl TryFrom<String> for Fingerprint {
    type Error = BadFingerprint;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

/// Where an encoding goes: a buffer, or straight into the fingerprint's
/// hash, so a 24 MB jump encoding is never held just to be hashed.
trait Sink {
    fn extend_from_slice(&mut self, bytes: &[u8]);
    fn push(&mut self, byte: u8) {
        self.extend_from_slice(&[byte]);
    }
    /// `count` copies of a 4-byte word.
    fn repeat_word(&mut self, word: [u8; 4], count: usize);
}

impl Sink for Vec<u8> {
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        Vec::extend_from_slice(self, bytes);
    }
    fn repeat_word(&mut self, word: [u8; 4], count: usize) {
        self.reserve(count * 4);
        for _ in 0..count {
            Vec::extend_from_slice(self, &word);
        }
    }
}

impl Sink for Sha256 {
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.update(bytes);
    }
    fn repeat_word(&mut self, word: [u8; 4], count: usize) {
        // A run of jump buckets is one word repeated: hash it from a block
        // filled once.
        const WORDS: usize = 1024;
        let block: Vec<u8> = word.repeat(WORDS.min(count));
        let mut left = count;
        while left > 0 {
            let n = left.min(WORDS);
            self.update(&block[..n * 4]);
            left -= n;
        }
    }
}

impl Placement {
    /// The canonical encoding: everything a thin client needs to place keys
    /// exactly as this placement does.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.body_len());
        self.encode_into(&mut out);
        out
    }

    /// SHA-256 of [`Placement::encode`], hashed as it is written.
    pub(crate) fn digest(&self) -> Fingerprint {
        let mut hasher = Sha256::new();
        self.encode_into(&mut hasher);
        Fingerprint(hasher.finalize().into())
    }

    fn encode_into(&self, out: &mut impl Sink) {
        out.extend_from_slice(MAGIC);
        out.push(self.config.algorithm.code());
        out.push(self.config.hash.code());
        out.push(u8::from(self.config.zone_aware));
        let ramped = self.is_ramped();
        let by_address = self.config.algorithm.places_by_address();
        out.push(u8::from(ramped));
        out.extend_from_slice(&self.config.replication_factor.to_le_bytes());
        out.extend_from_slice(&(self.nodes.len() as u32).to_le_bytes());
        for n in &self.nodes {
            let id = n.id.as_str().as_bytes();
            out.push(id.len() as u8);
            out.extend_from_slice(id);
            // Zones only matter to placement when zone awareness is on.
            let zone = match (&n.zone, self.config.zone_aware) {
                (Some(z), true) => z.as_str().as_bytes(),
                _ => &[][..],
            };
            out.push(zone.len() as u8);
            out.extend_from_slice(zone);
            out.extend_from_slice(&n.weight.get().to_le_bytes());
            if ramped {
                out.extend_from_slice(&n.ramp.get().to_le_bytes());
            }
            // Addresses are at most 255 bytes; only the algorithms that
            // place by them write them, so no other encoding changes.
            if by_address {
                let address = n
                    .address
                    .as_ref()
                    .map_or(&[][..], |a| a.as_str().as_bytes());
                out.push(address.len() as u8);
                out.extend_from_slice(address);
            }
        }
        match &self.layout {
            // Envoy's ring is written as `ring`'s: its entries and owners.
            Layout::Ring(c) | Layout::EnvoyRingHash(c) => {
                out.extend_from_slice(&(c.len() as u32).to_le_bytes());
                for p in c.points() {
                    out.extend_from_slice(&p.pos.to_le_bytes());
                    out.extend_from_slice(&p.owner.to_le_bytes());
                }
            }
            Layout::Ketama(c) | Layout::Nginx(c) | Layout::Twemproxy(c) => {
                if matches!(self.layout, Layout::Twemproxy(_)) {
                    let tag = self.config.hash_tag;
                    let tag = tag.as_ref().map_or(&[][..], |t| &t.as_bytes()[..]);
                    out.push(tag.len() as u8);
                    out.extend_from_slice(tag);
                }
                out.extend_from_slice(&(c.len() as u32).to_le_bytes());
                for p in c.points() {
                    out.extend_from_slice(&(p.pos as u32).to_le_bytes());
                    out.extend_from_slice(&p.owner.to_le_bytes());
                }
            }
            Layout::Maglev(t) => {
                out.extend_from_slice(&(t.len() as u32).to_le_bytes());
                for o in t {
                    out.extend_from_slice(&o.to_le_bytes());
                }
            }
            Layout::Jump(b) => {
                out.extend_from_slice(&b.len().to_le_bytes());
                for (owner, count) in b.runs() {
                    out.repeat_word(owner.to_le_bytes(), count as usize);
                }
            }
            Layout::Rendezvous { node_hashes, .. } => {
                for h in node_hashes {
                    out.extend_from_slice(&h.to_le_bytes());
                }
            }
            Layout::Table(_) => {
                out.extend_from_slice(&self.table_body().expect("a table layout"));
            }
            Layout::Haproxy(c) => {
                out.push(u8::from(self.config.avalanche));
                for id in &c.server_ids {
                    out.extend_from_slice(&id.to_le_bytes());
                }
                out.extend_from_slice(&(c.points().len() as u32).to_le_bytes());
                for &(key, owner) in c.points() {
                    out.extend_from_slice(&key.to_le_bytes());
                    out.extend_from_slice(&owner.to_le_bytes());
                }
            }
        }
    }

    fn body_len(&self) -> usize {
        match &self.layout {
            Layout::Ring(c) | Layout::EnvoyRingHash(c) => c.len() * 12,
            Layout::Ketama(c) | Layout::Nginx(c) => c.len() * 8,
            Layout::Twemproxy(c) => 3 + c.len() * 8,
            Layout::Maglev(t) => t.len() * 4,
            Layout::Jump(b) => b.len() as usize * 4,
            Layout::Rendezvous { node_hashes, .. } => node_hashes.len() * 8,
            Layout::Table(t) => {
                5 + t.cells().len() * super::table::layout::index_width(self.nodes.len())
            }
            Layout::Haproxy(c) => 5 + c.server_ids.len() * 4 + c.points().len() * 8,
        }
    }
}
