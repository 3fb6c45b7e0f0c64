//! A routing handle for hot paths.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::ring::NodeRecord;

use super::view::RingView;
use super::Shared;

/// Answers lookups from a cached view, refreshed when the client swaps in
/// a newer one. Checking costs one atomic load, so a lookup through a
/// `Router` costs what a lookup on the placement itself does. Keep one per
/// thread or task; `&mut self` is what lets it borrow the node it returns.
pub struct Router {
    shared: Arc<Shared>,
    generation: u64,
    view: Option<Arc<RingView>>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("version", &self.view.as_ref().map(|v| v.version()))
            .finish()
    }
}

impl Router {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self {
            shared,
            // Differs from any real generation's start, forcing a first load.
            generation: u64::MAX,
            view: None,
        }
    }

    #[inline(always)]
    fn refresh(&mut self) {
        let generation = self.shared.generation.load(Ordering::Acquire);
        if generation != self.generation {
            self.reload(generation);
        }
    }

    /// The rare path, kept out of line so the lookup around the check
    /// compiles as tightly as a bare placement lookup.
    #[cold]
    #[inline(never)]
    fn reload(&mut self, generation: u64) {
        self.view = self.shared.current.load_full();
        self.generation = generation;
    }

    /// The current view.
    pub fn view(&mut self) -> Option<&Arc<RingView>> {
        self.refresh();
        self.view.as_ref()
    }

    /// The version routed on.
    pub fn version(&mut self) -> Option<u64> {
        self.view().map(|v| v.version())
    }

    /// The node that owns `key`, any byte string (UTF-8 or not); `None`
    /// before the first version or when no node is active.
    #[inline(always)]
    pub fn owner(&mut self, key: &[u8]) -> Option<&NodeRecord> {
        self.refresh();
        self.view.as_deref()?.owner(key)
    }

    /// The first `r` distinct nodes for `key`, owner first.
    pub fn preference_list(&mut self, key: &[u8], r: usize) -> Vec<&NodeRecord> {
        self.refresh();
        match self.view.as_deref() {
            Some(v) => v.preference_list(key, r),
            None => Vec::new(),
        }
    }
}
