//! Why a connection ended, as the transport saw it: the text every call that was
//! waiting on it, and every later call, fails with.

use std::sync::{Arc, Mutex, PoisonError};

/// Set once, by whoever sees the end first (the transport, or a close by the host).
#[derive(Debug, Clone, Default)]
pub(crate) struct CloseReason(Arc<Mutex<Option<String>>>);

impl CloseReason {
    /// Records `why`, unless a reason was already recorded.
    pub(crate) fn set(&self, why: impl Into<String>) {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(why.into());
        }
    }

    /// The recorded reason, if the connection ended.
    pub(crate) fn get(&self) -> Option<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
