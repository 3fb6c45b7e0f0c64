//! The layout version and its migrations, applied at start-up under an
//! etcd lock so that two instances starting together never migrate at once.

use std::collections::BTreeMap;

use etcd_client::{Compare, CompareOp, LockOptions, Txn, TxnOp};
use serde::Deserialize;

use super::{unavailable, Ops};
use crate::store::StoreError;

/// Migrations in order; migration `n` (1-based) brings the layout from
/// version `n - 1` to `n`. Embedded so the binary carries its own layout.
/// Append only: a released migration must never change.
const MIGRATIONS: &[&str] = &[include_str!("../../../migrations/etcd/0001_init.json")];

/// The layout version this binary writes and understands.
pub const LAYOUT_VERSION: u64 = MIGRATIONS.len() as u64;

/// How long the migration lock outlives a crashed migrating instance.
const LOCK_TTL_SECS: i64 = 30;

/// One migration: keys (relative to the prefix) to put, declaratively.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Migration {
    /// What it does, for people.
    #[allow(dead_code)]
    description: String,
    /// Keys below the prefix and their values.
    #[serde(default)]
    put: BTreeMap<String, String>,
}

/// Refuses a layout newer than this binary.
fn check_supported(found: u64) -> Result<(), StoreError> {
    if found > LAYOUT_VERSION {
        return Err(StoreError::SchemaTooNew {
            found,
            supported: LAYOUT_VERSION,
        });
    }
    Ok(())
}

impl Ops {
    /// Brings the layout up to [`LAYOUT_VERSION`]; returns the etcd
    /// revision at which the layout was found current.
    pub(super) async fn migrate(&self) -> Result<i64, StoreError> {
        // The common case — already current, or too new — needs no lock,
        // and refusing a newer layout this way writes nothing at all.
        let (found, revision) = self.layout_version().await?;
        check_supported(found)?;
        if found == LAYOUT_VERSION {
            return Ok(revision);
        }
        let mut client = self.client.clone();
        let lease = client
            .lease_grant(LOCK_TTL_SECS, None)
            .await
            .map_err(unavailable)?
            .id();
        let result = async {
            let lock = client
                .lock(
                    self.keys.migrate_lock(),
                    Some(LockOptions::new().with_lease(lease)),
                )
                .await
                .map_err(unavailable)?;
            let applied = self.apply_pending().await;
            client.unlock(lock.key()).await.map_err(unavailable)?;
            applied
        }
        .await;
        // Revoking also releases the lock if unlocking failed above.
        let _ = client.lease_revoke(lease).await;
        result
    }

    /// Under the lock: re-reads the layout (another instance may have
    /// migrated meanwhile) and applies each pending migration in its own
    /// transaction, guarded by the layout version it starts from.
    async fn apply_pending(&self) -> Result<i64, StoreError> {
        let (mut found, mut revision) = self.layout_version().await?;
        check_supported(found)?;
        while found < LAYOUT_VERSION {
            let index = usize::try_from(found).unwrap_or(usize::MAX);
            let text = MIGRATIONS
                .get(index)
                .ok_or_else(|| StoreError::unavailable("missing migration"))?;
            let migration: Migration = serde_json::from_str(text).map_err(|e| {
                StoreError::unavailable_from(format!("etcd migration {}", found + 1), e)
            })?;
            let key = self.keys.layout();
            let guard = if found == 0 {
                Compare::version(key.clone(), CompareOp::Equal, 0)
            } else {
                Compare::value(key.clone(), CompareOp::Equal, found.to_string())
            };
            let mut ops: Vec<TxnOp> = migration
                .put
                .iter()
                .map(|(k, v)| TxnOp::put(self.keys.below(k), v.as_str(), None))
                .collect();
            ops.push(TxnOp::put(key, (found + 1).to_string(), None));
            let resp = self
                .client
                .clone()
                .txn(Txn::new().when([guard]).and_then(ops))
                .await
                .map_err(unavailable)?;
            if !resp.succeeded() {
                return Err(StoreError::unavailable(
                    "the etcd layout changed while migrating under the lock",
                ));
            }
            revision = resp.header().map_or(revision, |h| h.revision());
            found += 1;
        }
        Ok(revision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_parse() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            serde_json::from_str::<Migration>(m).unwrap_or_else(|e| panic!("migration {i}: {e}"));
        }
    }
}
