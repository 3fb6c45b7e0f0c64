//! Rollout records: one key per rollout under `{p}/rollouts/{ring}/`, and
//! `{p}/rollout-active/{ring}` naming the ring's active one while it has
//! one. Creating a rollout puts both in one transaction that requires the
//! ring to exist, the active key to be absent and the new id unused, so
//! two instances cannot start two rollouts on one ring. A record's etcd
//! version (puts since its creation) is its revision, so an update is a
//! compare on it.

use async_trait::async_trait;
use etcd_client::{Compare, CompareOp, GetOptions, SortOrder, SortTarget, Txn, TxnOp};

use super::layout::{decode, encode};
use super::{unavailable, EtcdStore, Ops};
use crate::ring::rollout::{RolloutId, RolloutRecord};
use crate::ring::RingName;
use crate::store::{RolloutStore, StoreError, ROLLOUT_RETENTION};

impl Ops {
    async fn active_id(&self, ring: &RingName) -> Result<Option<RolloutId>, StoreError> {
        let key = self.keys.active_rollout(ring);
        let (kvs, _) = self.get(key, GetOptions::new(), 0).await?;
        kvs.first()
            .map(|kv| decode::<u64>(kv.key(), kv.value()).map(RolloutId))
            .transpose()
    }

    async fn create_rollout(&self, mut record: RolloutRecord) -> Result<RolloutRecord, StoreError> {
        let ring = record.ring.clone();
        let newest = GetOptions::new()
            .with_prefix()
            .with_keys_only()
            .with_sort(SortTarget::Key, SortOrder::Descend)
            .with_limit(1);
        let (kvs, _) = self.get(self.keys.rollouts(&ring), newest, 0).await?;
        let last = match kvs.first() {
            None => 0,
            Some(kv) => {
                let key = String::from_utf8_lossy(kv.key());
                key.rsplit('/')
                    .next()
                    .and_then(|id| id.parse::<u64>().ok())
                    .ok_or_else(|| StoreError::corrupt(format!("rollout key `{key}`")))?
            }
        };
        record.id = RolloutId(last + 1);
        record.revision = 1;
        let key = self.keys.rollout(&ring, record.id.0);
        let active = self.keys.active_rollout(&ring);
        let txn = Txn::new()
            .when([
                Compare::version(self.keys.meta(&ring), CompareOp::Greater, 0),
                Compare::version(active.clone(), CompareOp::Equal, 0),
                Compare::version(key.clone(), CompareOp::Equal, 0),
            ])
            .and_then([
                TxnOp::put(key, encode("rollout", &record)?, None),
                TxnOp::put(active, encode("rollout id", &record.id.0)?, None),
            ]);
        let resp = self.client.clone().txn(txn).await.map_err(unavailable)?;
        if !resp.succeeded() {
            // Tell the three guards apart by reading again.
            if let Some(id) = self.active_id(&ring).await? {
                return Err(StoreError::RolloutActive { ring, id });
            }
            let (meta, _) = self
                .get(self.keys.meta(&ring), GetOptions::new(), 0)
                .await?;
            if meta.is_empty() {
                return Err(StoreError::RingNotFound(ring));
            }
            return Err(StoreError::unavailable(
                "another rollout of this ring was created at the same moment; retry",
            ));
        }
        // Created: a failed clean-up is retried by the next creation.
        if let Err(e) = self.prune_rollouts(&ring, record.id.0).await {
            tracing::debug!(ring = %ring, error = %e, "old rollouts not pruned");
        }
        Ok(record)
    }

    /// Deletes the ring's finished rollouts beyond the retention.
    async fn prune_rollouts(&self, ring: &RingName, newest: u64) -> Result<(), StoreError> {
        let Some(oldest_kept) = newest.checked_sub(ROLLOUT_RETENTION as u64 - 1) else {
            return Ok(());
        };
        if oldest_kept <= 1 {
            return Ok(());
        }
        let from = self.keys.rollout(ring, 0);
        let to = self.keys.rollout(ring, oldest_kept);
        let options = etcd_client::DeleteOptions::new().with_range(to);
        self.client
            .clone()
            .delete(from, Some(options))
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn update_rollout(&self, record: &RolloutRecord) -> Result<(), StoreError> {
        let key = self.keys.rollout(&record.ring, record.id.0);
        let read = record.revision as i64 - 1;
        let mut ops = vec![TxnOp::put(key.clone(), encode("rollout", record)?, None)];
        if !record.state.is_active() {
            ops.push(TxnOp::delete(self.keys.active_rollout(&record.ring), None));
        }
        let txn = Txn::new()
            .when([Compare::version(key.clone(), CompareOp::Equal, read)])
            .and_then(ops);
        let resp = self.client.clone().txn(txn).await.map_err(unavailable)?;
        if resp.succeeded() {
            return Ok(());
        }
        let (kvs, _) = self.get(key, GetOptions::new().with_keys_only(), 0).await?;
        Err(if kvs.is_empty() {
            StoreError::RolloutNotFound {
                ring: record.ring.clone(),
                id: record.id,
            }
        } else {
            StoreError::RolloutConflict {
                ring: record.ring.clone(),
                id: record.id,
            }
        })
    }

    async fn rollout(&self, ring: &RingName, id: RolloutId) -> Result<RolloutRecord, StoreError> {
        let (kvs, _) = self
            .get(self.keys.rollout(ring, id.0), GetOptions::new(), 0)
            .await?;
        let kv = kvs.first().ok_or_else(|| StoreError::RolloutNotFound {
            ring: ring.clone(),
            id,
        })?;
        decode(kv.key(), kv.value())
    }

    async fn rollouts(&self, ring: &RingName) -> Result<Vec<RolloutRecord>, StoreError> {
        let options = GetOptions::new()
            .with_prefix()
            .with_sort(SortTarget::Key, SortOrder::Descend);
        let (kvs, _) = self.get(self.keys.rollouts(ring), options, 0).await?;
        kvs.iter().map(|kv| decode(kv.key(), kv.value())).collect()
    }

    async fn latest_rollout(&self, ring: &RingName) -> Result<Option<RolloutRecord>, StoreError> {
        let options = GetOptions::new()
            .with_prefix()
            .with_sort(SortTarget::Key, SortOrder::Descend)
            .with_limit(1);
        let (kvs, _) = self.get(self.keys.rollouts(ring), options, 0).await?;
        kvs.first()
            .map(|kv| decode(kv.key(), kv.value()))
            .transpose()
    }

    async fn active_rollouts(&self) -> Result<Vec<RolloutRecord>, StoreError> {
        let (kvs, _) = self
            .get(
                self.keys.active_rollouts(),
                GetOptions::new().with_prefix(),
                0,
            )
            .await?;
        let mut out = Vec::with_capacity(kvs.len());
        for kv in kvs {
            let id: u64 = decode(kv.key(), kv.value())?;
            let ring = String::from_utf8_lossy(kv.key())
                .strip_prefix(&self.keys.active_rollouts())
                .map(str::to_owned)
                .ok_or_else(|| StoreError::corrupt("active-rollout key"))?;
            let ring = RingName::new(ring).map_err(|e| StoreError::corrupt_from("ring name", e))?;
            match self.rollout(&ring, RolloutId(id)).await {
                Ok(r) => out.push(r),
                // Deleted with its ring meanwhile.
                Err(StoreError::RolloutNotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}

#[async_trait]
impl RolloutStore for EtcdStore {
    async fn create_rollout(&self, record: RolloutRecord) -> Result<RolloutRecord, StoreError> {
        self.bounded(self.ops.create_rollout(record)).await
    }

    async fn update_rollout(&self, record: &RolloutRecord) -> Result<(), StoreError> {
        self.bounded(self.ops.update_rollout(record)).await
    }

    async fn rollout(&self, ring: &RingName, id: RolloutId) -> Result<RolloutRecord, StoreError> {
        self.bounded(self.ops.rollout(ring, id)).await
    }

    async fn rollouts(&self, ring: &RingName) -> Result<Vec<RolloutRecord>, StoreError> {
        self.bounded(self.ops.rollouts(ring)).await
    }

    async fn latest_rollout(&self, ring: &RingName) -> Result<Option<RolloutRecord>, StoreError> {
        self.bounded(self.ops.latest_rollout(ring)).await
    }

    async fn active_rollout(&self, ring: &RingName) -> Result<Option<RolloutRecord>, StoreError> {
        let id = self.bounded(self.ops.active_id(ring)).await?;
        match id {
            None => Ok(None),
            Some(id) => match self.bounded(self.ops.rollout(ring, id)).await {
                Ok(r) => Ok(Some(r)),
                Err(StoreError::RolloutNotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            },
        }
    }

    async fn active_rollouts(&self) -> Result<Vec<RolloutRecord>, StoreError> {
        self.bounded(self.ops.active_rollouts()).await
    }
}
