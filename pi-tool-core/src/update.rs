//! Progress updates: Pi's `onUpdate` callback, typed.
//!
//! A tool calls [`OnUpdate::send`] with a partial [`AgentToolResult`] while it runs; the
//! agent turns each into a `tool_execution_update` event. Updates are for hosts and UIs:
//! only the final result reaches the model. Once the call has settled the callback is
//! closed and later updates are dropped silently, as in Pi.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use crate::details::JsonDetails;
use crate::result::AgentToolResult;

type Callback<D> = dyn Fn(AgentToolResult<D>) + Send + Sync;

/// The flag and the callback in one allocation (`Inner<F>` coerces to `Inner<dyn Fn>`):
/// the loop makes one callback per tool call.
struct Inner<F: ?Sized> {
    open: AtomicBool,
    callback: F,
}

/// The progress callback handed to a tool (Pi's `AgentToolUpdateCallback<T>`).
///
/// Cheap to clone; a no-op when nobody listens ([`OnUpdate::none`]); silently ignored
/// after [`close`](OnUpdate::close), which the runtime calls when the call settles.
pub struct OnUpdate<D> {
    inner: Option<Arc<Inner<Callback<D>>>>,
    _details: PhantomData<fn(D)>,
}

impl<D> Clone for OnUpdate<D> {
    fn clone(&self) -> Self {
        OnUpdate {
            inner: self.inner.clone(),
            _details: PhantomData,
        }
    }
}

impl<D> Default for OnUpdate<D> {
    fn default() -> Self {
        Self::none()
    }
}

impl<D> fmt::Debug for OnUpdate<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnUpdate")
            .field("listening", &self.is_listening())
            .finish()
    }
}

impl<D> OnUpdate<D> {
    /// A callback nobody listens to: every update is dropped without work.
    pub fn none() -> Self {
        OnUpdate {
            inner: None,
            _details: PhantomData,
        }
    }

    /// A callback that hands every update to `callback` until closed.
    pub fn new(callback: impl Fn(AgentToolResult<D>) + Send + Sync + 'static) -> Self {
        let inner: Arc<Inner<Callback<D>>> = Arc::new(Inner {
            open: AtomicBool::new(true),
            callback,
        });
        OnUpdate {
            inner: Some(inner),
            _details: PhantomData,
        }
    }

    /// Whether an update would reach anyone (lets a tool skip building expensive updates).
    pub fn is_listening(&self) -> bool {
        self.inner
            .as_ref()
            .is_some_and(|inner| inner.open.load(Ordering::Acquire))
    }

    /// Reports progress (Pi's `onUpdate(partialResult)`). Dropped silently when nobody
    /// listens or the call has settled.
    #[doc(alias = "onUpdate")]
    pub fn send(&self, update: AgentToolResult<D>) {
        if let Some(inner) = &self.inner
            && inner.open.load(Ordering::Acquire)
        {
            (inner.callback)(update);
        }
    }

    /// Closes the callback: later updates are ignored. Every clone sees it.
    pub fn close(&self) {
        if let Some(inner) = &self.inner {
            inner.open.store(false, Ordering::Release);
        }
    }
}

impl<D: Serialize + 'static> OnUpdate<D> {
    /// A typed view of a JSON-level callback: each update's details are serialised.
    /// Closing either side closes the JSON callback for both.
    pub fn from_json(json: OnUpdate<Option<JsonDetails>>) -> Self {
        Self::from_json_with(json, |details| JsonDetails::from_typed(details))
    }
}

impl<D: 'static> OnUpdate<D> {
    /// [`from_json`](Self::from_json) with the details' serialisation given: a typed
    /// tool's details are a `bounds::ToolDetails`, which reaches serde through its own
    /// method.
    pub(crate) fn from_json_with(
        json: OnUpdate<Option<JsonDetails>>,
        to_json: fn(&D) -> Result<JsonDetails, serde_json::Error>,
    ) -> Self {
        if json.inner.is_none() {
            return OnUpdate::none();
        }
        OnUpdate::new(move |update: AgentToolResult<D>| {
            if !json.is_listening() {
                return;
            }
            match update.into_json_with(to_json) {
                Ok(update) => json.send(update),
                Err(error) => tracing::warn!(%error, "progress update dropped"),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::JsonToolResult;
    use std::sync::Mutex;

    #[test]
    fn updates_reach_the_listener_until_closed() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let on_update =
            OnUpdate::new(move |u: AgentToolResult<u32>| sink.lock().unwrap().push(u.details));
        let clone = on_update.clone();
        on_update.send(AgentToolResult::text("a", 1));
        clone.send(AgentToolResult::text("b", 2));
        on_update.close();
        clone.send(AgentToolResult::text("late", 3));
        assert_eq!(*seen.lock().unwrap(), vec![1, 2]);
        assert!(!clone.is_listening());
    }

    #[test]
    fn none_is_a_no_op() {
        let on_update: OnUpdate<u32> = OnUpdate::none();
        assert!(!on_update.is_listening());
        on_update.send(AgentToolResult::text("x", 1));
    }

    #[test]
    fn typed_view_serialises_details_and_shares_closing() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let json = OnUpdate::new(move |u: JsonToolResult| sink.lock().unwrap().push(u.to_json()));
        let typed: OnUpdate<u32> = OnUpdate::from_json(json.clone());
        typed.send(AgentToolResult::text("x", 5));
        json.close();
        typed.send(AgentToolResult::text("late", 6));
        assert_eq!(
            *seen.lock().unwrap(),
            vec![serde_json::json!({"content": [{"type": "text", "text": "x"}], "details": 5})]
        );
    }
}
