//! Back-pressure for the stdio framing: a bounded window of requests in flight.
//!
//! rmcp reads requests as fast as they come and spawns a task for each; the answers
//! queue inside rmcp until the transport can write them. A client that sends calls but
//! stops reading their answers therefore made the server buffer every answer: 2 000
//! calls with 256 KiB results took the server to 524 MiB. So the framing layer counts
//! the requests it has passed to rmcp and not yet seen answered, and stops reading the
//! client's input while [`DEFAULT_MAX_PENDING_REQUESTS`] (or the server's own limit) are
//! pending. The client's writes then stall in the pipe, which is back-pressure: memory
//! is bounded by the window times the largest answer. An answer frees its slot once it
//! is written to the client; `notifications/cancelled` frees the cancelled request's slot
//! (rmcp sends no answer for it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How many requests of one stdio client may wait for their answers at once, unless
/// [`PackServer::with_max_pending_requests`](crate::PackServer::with_max_pending_requests)
/// says otherwise. Further requests stay unread in the client's pipe until an answer is
/// written.
pub const DEFAULT_MAX_PENDING_REQUESTS: usize = 256;

/// The requests passed to rmcp and not answered yet, each holding a slot.
#[derive(Clone)]
pub(crate) struct Window {
    slots: Arc<Semaphore>,
    size: u32,
    pending: Arc<Mutex<HashMap<String, OwnedSemaphorePermit>>>,
}

/// What a message is, for the window.
pub(crate) enum Kind {
    /// A request with this id (normalised JSON text).
    Request(String),
    /// `notifications/cancelled` for the request with this id.
    Cancelled(String),
    /// Anything else (responses of the client to the server's requests too: a slot is
    /// freed by the server's answer, `transport.rs`).
    Other,
}

/// Classifies one message, by its top level.
pub(crate) fn classify_value(message: &Value) -> Kind {
    let id = message
        .get("id")
        .filter(|id| !id.is_null())
        .map(Value::to_string);
    let method = message.get("method").and_then(Value::as_str);
    match (id, method) {
        (Some(id), Some(_)) => Kind::Request(id),
        (None, Some("notifications/cancelled")) => message
            .get("params")
            .and_then(|params| params.get("requestId"))
            .filter(|id| !id.is_null())
            .map_or(Kind::Other, |id| Kind::Cancelled(id.to_string())),
        _ => Kind::Other,
    }
}

impl Window {
    pub(crate) fn new(size: usize) -> Self {
        // At most `u32::MAX`, so that `drained` can take every slot at once.
        let size = u32::try_from(size.max(1)).unwrap_or(u32::MAX);
        Window {
            slots: Arc::new(Semaphore::new(size as usize)),
            size,
            pending: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// Resolves once no request waits for its answer. Cancel safe.
    pub(crate) async fn drained(&self) {
        let _ = self.slots.acquire_many(self.size).await;
    }

    /// Takes a slot for request `id`, waiting while the window is full.
    pub(crate) async fn enter(&self, id: String) {
        // The semaphore is never closed; without a slot the request still goes through.
        let permit = self.slots.clone().acquire_owned().await.ok();
        if let Some(permit) = permit {
            self.lock().insert(id, permit);
        }
    }

    /// Frees the slot of request `id`, if it holds one.
    pub(crate) fn leave(&self, id: &str) {
        self.lock().remove(id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, OwnedSemaphorePermit>> {
        match self.pending.lock() {
            Ok(pending) => pending,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_told_apart_by_their_top_level() {
        let classify = |line: &[u8]| classify_value(&serde_json::from_slice(line).unwrap());
        let request = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"result":1}}}"#;
        assert!(matches!(classify(request), Kind::Request(id) if id == "7"));
        let response = br#"{"jsonrpc":"2.0","id":"a","result":{"content":[]}}"#;
        assert!(matches!(classify(response), Kind::Other));
        let error = br#"{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"m"}}"#;
        assert!(matches!(classify(error), Kind::Other));
        let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"\u0061"}}"#;
        assert!(matches!(classify(cancel), Kind::Cancelled(id) if id == "\"a\""));
        let other = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(matches!(classify(other), Kind::Other));
    }

    #[tokio::test]
    async fn a_full_window_waits_for_an_answer() {
        let window = Window::new(1);
        window.enter("1".into()).await;
        let second = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            window.enter("2".into()),
        );
        assert!(second.await.is_err(), "the second request waits");
        window.leave("1");
        window.enter("2".into()).await;
    }
}
