//! A `jump` ring's bucket order held as runs of one owner.
//!
//! The specification defines the order one bucket at a time, and a ring of
//! five nodes at weight 1,000,000 has 5,000,000 buckets but five runs. A
//! snapshot keeps the runs, shares them between copies and stores them as
//! runs; only the HTTP view of a snapshot writes them out per bucket (see
//! `docs/architecture.md`, "Snapshots and the jump bucket order").

use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, SerializeTuple, Serializer};
use serde::{Deserialize, Serialize};

use crate::placement::{NodeId, Placement};

/// Consecutive buckets with one owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketRun {
    /// The node owning them, or `None` for holes.
    pub owner: Option<NodeId>,
    /// How many buckets (at least 1).
    pub len: u32,
}

/// A bucket order as maximal runs: no run is empty and neighbouring runs
/// have different owners, so two orders are equal exactly when they hold
/// the same buckets. Cloning shares the runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BucketOrder(Arc<[BucketRun]>);

impl BucketOrder {
    /// The order of `runs`, merging neighbours with one owner and dropping
    /// empty runs.
    pub fn from_runs(runs: impl IntoIterator<Item = BucketRun>) -> Self {
        let mut out = Merger::default();
        for run in runs {
            out.push(run.owner, run.len);
        }
        out.finish()
    }

    /// The bucket order of a `jump` placement; `None` for other algorithms.
    pub fn of(placement: &Placement) -> Option<Self> {
        let runs = placement.bucket_runs()?;
        Some(Self::from_runs(runs.map(|(owner, len)| BucketRun {
            owner: owner.cloned(),
            len,
        })))
    }

    /// The runs, in bucket order.
    pub fn runs(&self) -> &[BucketRun] {
        &self.0
    }

    /// The runs as the placement core takes them.
    pub fn placement_runs(&self) -> impl Iterator<Item = (Option<&NodeId>, u32)> + '_ {
        self.0.iter().map(|r| (r.owner.as_ref(), r.len))
    }

    /// Number of buckets, holes included.
    pub fn bucket_count(&self) -> u64 {
        self.0.iter().map(|r| u64::from(r.len)).sum()
    }

    /// Every bucket's owner in order (`None` for a hole), expanded lazily.
    pub fn buckets(&self) -> impl Iterator<Item = Option<&NodeId>> + '_ {
        self.0
            .iter()
            .flat_map(|r| std::iter::repeat_n(r.owner.as_ref(), r.len as usize))
    }

    /// The per-bucket form (`buckets` on the wire): one id or `null` per
    /// bucket, written from the runs without collecting them.
    pub fn per_bucket(&self) -> PerBucket<'_> {
        PerBucket(self)
    }
}

/// Collects runs, merging neighbours with one owner.
#[derive(Default)]
struct Merger {
    runs: Vec<BucketRun>,
}

impl Merger {
    fn push(&mut self, owner: Option<NodeId>, len: u32) {
        if len == 0 {
            return;
        }
        match self.runs.last_mut() {
            // A length past u32 cannot be a valid order; keep it as a new
            // run so the placement core refuses it by its total.
            Some(last) if last.owner == owner && last.len.checked_add(len).is_some() => {
                last.len += len;
            }
            _ => self.runs.push(BucketRun { owner, len }),
        }
    }

    /// Extends the last run by one bucket of `owner` when it has that
    /// owner, without building a [`NodeId`].
    fn extend_last(&mut self, owner: Option<&str>) -> bool {
        match self.runs.last_mut() {
            Some(last)
                if last.owner.as_ref().map(NodeId::as_str) == owner && last.len < u32::MAX =>
            {
                last.len += 1;
                true
            }
            _ => false,
        }
    }

    fn finish(self) -> BucketOrder {
        BucketOrder(self.runs.into())
    }
}

/// Stored form: `[[owner or null, len], …]`.
impl Serialize for BucketOrder {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for run in self.0.iter() {
            seq.serialize_element(&RunPair(run))?;
        }
        seq.end()
    }
}

struct RunPair<'a>(&'a BucketRun);

impl Serialize for RunPair<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(2)?;
        t.serialize_element(&self.0.owner)?;
        t.serialize_element(&self.0.len)?;
        t.end()
    }
}

/// The per-bucket form of a [`BucketOrder`], serialized by streaming.
#[derive(Debug, Clone, Copy)]
pub struct PerBucket<'a>(&'a BucketOrder);

impl Serialize for PerBucket<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let count = usize::try_from(self.0.bucket_count()).map_err(serde::ser::Error::custom)?;
        let mut seq = s.serialize_seq(Some(count))?;
        for run in self.0.runs() {
            for _ in 0..run.len {
                seq.serialize_element(&run.owner)?;
            }
        }
        seq.end()
    }
}

/// Reads either form, element by element: the stored runs
/// (`[["a", 1000000], [null, 3]]`) or the per-bucket order of the wire and
/// of versions stored before runs (`["a", "a", null]`). Per-bucket input is
/// merged into runs as it is read, so no per-bucket list is ever built.
impl<'de> Deserialize<'de> for BucketOrder {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(OrderVisitor)
    }
}

struct OrderVisitor;

impl<'de> Visitor<'de> for OrderVisitor {
    type Value = BucketOrder;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a bucket order: node ids or null per bucket, or [id or null, count] runs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<BucketOrder, A::Error> {
        let mut out = Merger::default();
        while seq.next_element_seed(Element(&mut out))?.is_some() {}
        Ok(out.finish())
    }
}

/// One element of either form, pushed straight into the runs.
struct Element<'a>(&'a mut Merger);

impl<'de> de::DeserializeSeed<'de> for Element<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Element<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a node id, null, or a [id or null, count] run")
    }

    fn visit_str<E: de::Error>(self, id: &str) -> Result<(), E> {
        if !self.0.extend_last(Some(id)) {
            let id = NodeId::new(id).map_err(E::custom)?;
            self.0.push(Some(id), 1);
        }
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        if !self.0.extend_last(None) {
            self.0.push(None, 1);
        }
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let owner: Option<NodeId> = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &"a run [id or null, count]"))?;
        let len: u32 = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(1, &"a run [id or null, count]"))?;
        if seq.next_element::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(3, &"a run [id or null, count]"));
        }
        if len == 0 {
            return Err(de::Error::custom("a bucket run holds at least one bucket"));
        }
        self.0.push(owner, len);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> Option<NodeId> {
        Some(NodeId::new(s).unwrap())
    }

    fn run(owner: Option<NodeId>, len: u32) -> BucketRun {
        BucketRun { owner, len }
    }

    /// `a a a - - b a`, built with a split run, an empty one and a repeat.
    fn order() -> BucketOrder {
        BucketOrder::from_runs([
            run(id("a"), 2),
            run(id("a"), 1),
            run(None, 0),
            run(None, 2),
            run(id("b"), 1),
            run(id("a"), 1),
        ])
    }

    #[test]
    fn runs_are_merged_and_expand_per_bucket() {
        let o = order();
        assert_eq!(
            o.runs(),
            [
                run(id("a"), 3),
                run(None, 2),
                run(id("b"), 1),
                run(id("a"), 1)
            ]
        );
        assert_eq!(o.bucket_count(), 7);
        let buckets: Vec<Option<&str>> = o.buckets().map(|b| b.map(NodeId::as_str)).collect();
        assert_eq!(
            buckets,
            [
                Some("a"),
                Some("a"),
                Some("a"),
                None,
                None,
                Some("b"),
                Some("a")
            ]
        );
    }

    #[test]
    fn stored_form_is_runs_and_per_bucket_form_streams_buckets() {
        let o = order();
        assert_eq!(
            serde_json::to_string(&o).unwrap(),
            r#"[["a",3],[null,2],["b",1],["a",1]]"#
        );
        assert_eq!(
            serde_json::to_string(&o.per_bucket()).unwrap(),
            r#"["a","a","a",null,null,"b","a"]"#
        );
        assert_eq!(
            serde_json::to_string(&BucketOrder::default().per_bucket()).unwrap(),
            "[]"
        );
    }

    #[test]
    fn both_forms_decode_to_the_same_runs() {
        let runs: BucketOrder =
            serde_json::from_str(r#"[["a",3],[null,2],["b",1],["a",1]]"#).unwrap();
        let per_bucket: BucketOrder =
            serde_json::from_str(r#"["a","a","a",null,null,"b","a"]"#).unwrap();
        // Runs split across elements merge as they are read.
        let split: BucketOrder =
            serde_json::from_str(r#"[["a",1],"a",["a",1],[null,2],"b","a"]"#).unwrap();
        assert_eq!(runs, order());
        assert_eq!(per_bucket, order());
        assert_eq!(split, order());
    }

    #[test]
    fn malformed_orders_are_refused() {
        for (json, says) in [
            (r#"[["a",0]]"#, "at least one bucket"),
            (r#"[["a"]]"#, "invalid length 1"),
            (r#"[["a",1,2]]"#, "invalid length 3"),
            (r#"[["a",-1]]"#, "invalid value"),
            (r#"["bad id!"]"#, "node id"),
            (r#"[7]"#, "a node id, null, or a [id or null, count] run"),
            (r#"{"a":1}"#, "a bucket order"),
        ] {
            let err = serde_json::from_str::<BucketOrder>(json).unwrap_err();
            assert!(err.to_string().contains(says), "{json}: {err}");
        }
    }
}
