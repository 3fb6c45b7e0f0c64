//! Completing a `table` snapshot read from the wire, which carries no
//! table: from the previous version and this version's moves when the
//! client holds that version, otherwise by downloading the canonical
//! encoding from `…/snapshots/{v}/table`. Either way the result must hash
//! to the snapshot's fingerprint.

use std::sync::Arc;

use crate::placement::{Algorithm, Placement};
use crate::ring::Snapshot;

use super::error::ClientError;
use super::http::Endpoints;
use super::view::RingView;

/// How a view was built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Built {
    /// From the snapshot alone (every algorithm but `table`).
    Snapshot,
    /// From the previous version and the moves.
    Moves,
    /// From a downloaded table.
    Download,
}

/// Verifies `snapshot`, completing a `table` one first. `held` is the view
/// routed on now.
pub(crate) async fn verified(
    endpoints: &Endpoints,
    held: Option<Arc<RingView>>,
    snapshot: Snapshot,
) -> Result<(RingView, Built), ClientError> {
    if snapshot.config.algorithm != Algorithm::Table || snapshot.table.is_some() {
        let view = blocking(move || RingView::verify(snapshot)).await?;
        return Ok((view, Built::Snapshot));
    }
    let follows = held.filter(|h| {
        h.version() + 1 == snapshot.version && h.placement().partition_table().is_some()
    });
    if let (Some(held), Some(_)) = (follows, &snapshot.table_moves) {
        let s = snapshot.clone();
        let from_moves = blocking(move || {
            let placement = s.placement_from_moves(held.placement());
            RingView::verify_built(s, placement)
        })
        .await;
        match from_moves {
            Ok(view) => return Ok((view, Built::Moves)),
            // Moves that do not verify are no reason to refuse the version:
            // the table itself may still be good.
            Err(e) => {
                tracing::warn!(ring = %snapshot.ring, version = snapshot.version, error = %e, "table moves did not verify; downloading the table")
            }
        }
    }
    let path = format!(
        "/v1/rings/{}/snapshots/{}/table",
        snapshot.ring, snapshot.version
    );
    let encoding = endpoints.get_bytes(&path).await?;
    let view = blocking(move || {
        let nodes: Vec<_> = snapshot.nodes.iter().map(|n| n.to_node()).collect();
        let placement =
            Placement::build_from_encoding(&snapshot.config, &nodes, &encoding).map_err(Into::into);
        RingView::verify_built(snapshot, placement)
    })
    .await?;
    Ok((view, Built::Download))
}

/// Runs CPU work (building a large placement takes milliseconds) off the
/// runtime's worker threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ClientError> + Send + 'static,
) -> Result<T, ClientError> {
    // A task that cannot finish means the runtime is shutting down.
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or(Err(ClientError::Closed))
}
