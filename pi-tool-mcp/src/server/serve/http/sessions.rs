//! The session rules of the HTTP layer that rmcp does not have: a session id that is
//! not readable is named as such (400), a `DELETE` of a session the server does not
//! hold is 404, and a request that would open a session past
//! [`HttpLimits::max_sessions`](crate::HttpLimits::max_sessions) is refused with 503 and
//! `Retry-After` (see [`HttpLimits`](crate::HttpLimits) for why new sessions are
//! refused rather than old ones evicted).
//!
//! The cap is exact under concurrency: rmcp's HTTP service adds a session to the
//! session table only while it serves the `initialize`, so a request admitted holds an
//! [`Opening`] until rmcp has answered it, and admissions, one at a time, count the
//! sessions open plus those opening. A session already in the table whose `Opening` is
//! still held counts twice for that moment, so an admission that finds the server full
//! while openings are pending waits for them to settle (they take no client I/O: the
//! body is read) and counts again; it is refused only when the sessions open alone fill
//! the cap.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use hyper::body::Bytes;
use hyper::{HeaderMap, Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use super::table::SessionTable;

/// How long a client refused at the session cap is asked to wait, in seconds.
const RETRY_AFTER_SECONDS: u64 = 5;

/// The sessions of one server, as the layer sees them.
pub(crate) struct Sessions {
    pub(crate) manager: Arc<SessionTable>,
    pub(crate) max: usize,
    /// Without sessions (stateless HTTP) none of these rules apply.
    pub(crate) stateless: bool,
    /// `tools/call` requests of one session running at once, and their slots.
    pub(crate) max_calls: usize,
    pub(crate) calls: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Requests admitted to open a session that rmcp has not answered yet.
    pub(crate) opening: Arc<AtomicUsize>,
    /// One admission at a time, so two cannot both take the last place.
    pub(crate) admitting: tokio::sync::Mutex<()>,
    /// Woken when an opening settles.
    pub(crate) settled: Arc<Notify>,
}

/// How long an admission that finds the server full waits for pending openings.
const SETTLE_WAIT: Duration = Duration::from_secs(1);

/// A place taken at the session cap by a request that opens a session, until rmcp has
/// answered it (by then the session is in the session table, or was never made).
pub(crate) struct Opening(Arc<AtomicUsize>, Arc<Notify>);

impl Drop for Opening {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
        self.1.notify_waiters();
    }
}

/// An answer of this layer: status, JSON-RPC body, and `Retry-After` when set.
pub(crate) struct Refusal {
    pub(crate) status: StatusCode,
    pub(crate) body: Bytes,
    pub(crate) retry_after: Option<u64>,
}

fn error(id: Value, code: i64, message: &str) -> Bytes {
    Bytes::from(
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            .to_string(),
    )
}

impl Sessions {
    /// The refusal of a request by its method and headers alone, if any.
    pub(crate) async fn check(&self, method: &Method, headers: &HeaderMap) -> Option<Refusal> {
        if self.stateless {
            return None;
        }
        let header = headers.get("mcp-session-id")?;
        let Ok(id) = header.to_str() else {
            return Some(Refusal {
                status: StatusCode::BAD_REQUEST,
                body: error(
                    Value::Null,
                    -32600,
                    "Bad Request: the Mcp-Session-Id header is not readable \
                     (a session id is visible ASCII)",
                ),
                retry_after: None,
            });
        };
        if method == Method::DELETE && !self.manager.contains(id.trim()) {
            return Some(Refusal {
                status: StatusCode::NOT_FOUND,
                body: error(Value::Null, -32001, "Session not found"),
                retry_after: None,
            });
        }
        None
    }

    /// A slot for a `tools/call` of a session, held until its response is gone, or the
    /// refusal when the session's calls fill its slots (429). `body` is the message.
    pub(crate) async fn call_slot(
        &self,
        headers: &HeaderMap,
        body: Option<&Bytes>,
    ) -> Result<Option<OwnedSemaphorePermit>, Refusal> {
        let Some(id) = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) else {
            return Ok(None);
        };
        let Some(message) = body.and_then(|body| serde_json::from_slice::<Value>(body).ok()) else {
            return Ok(None);
        };
        if self.stateless || message.get("method").and_then(Value::as_str) != Some("tools/call") {
            return Ok(None);
        }
        let slots = {
            let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
            if !calls.contains_key(id) {
                // The slots of sessions that ended go when a new session's are made.
                calls.retain(|session, _| self.manager.contains(session));
            }
            calls
                .entry(id.to_owned())
                .or_insert_with(|| Arc::new(Semaphore::new(self.max_calls.max(1))))
                .clone()
        };
        match slots.try_acquire_owned() {
            Ok(permit) => Ok(Some(permit)),
            Err(_) => Err(Refusal {
                status: StatusCode::TOO_MANY_REQUESTS,
                body: error(
                    message.get("id").cloned().unwrap_or(Value::Null),
                    -32000,
                    &format!(
                        "Too many calls: this session already runs its maximum of {} calls; \
                         retry when one has ended",
                        self.max_calls
                    ),
                ),
                retry_after: Some(1),
            }),
        }
    }

    /// For a request that would open a session (a POST without a session id): its
    /// place, held until rmcp has answered it, or the refusal while the server holds its
    /// maximum. `body` is the message, for its id.
    pub(crate) async fn check_open(
        &self,
        method: &Method,
        headers: &HeaderMap,
        body: Option<&Bytes>,
    ) -> Result<Option<Opening>, Refusal> {
        if self.stateless || method != Method::POST || headers.contains_key("mcp-session-id") {
            return Ok(None);
        }
        let deadline = tokio::time::Instant::now() + SETTLE_WAIT;
        loop {
            // Registered before counting, so a settling in between is not missed.
            let settled = self.settled.notified();
            let mut settled = std::pin::pin!(settled);
            settled.as_mut().enable();
            {
                let _one_at_a_time = self.admitting.lock().await;
                let open = self.manager.len();
                let opening = self.opening.load(Ordering::SeqCst);
                if open + opening < self.max {
                    self.opening.fetch_add(1, Ordering::SeqCst);
                    return Ok(Some(Opening(self.opening.clone(), self.settled.clone())));
                }
                if opening == 0 {
                    break;
                }
            }
            if tokio::time::timeout_at(deadline, settled).await.is_err() {
                break;
            }
        }
        let id = body
            .and_then(|body| serde_json::from_slice::<Value>(body).ok())
            .and_then(|message| message.get("id").cloned())
            .unwrap_or(Value::Null);
        Err(Refusal {
            status: StatusCode::SERVICE_UNAVAILABLE,
            body: error(
                id,
                -32000,
                &format!(
                    "Server busy: it holds its maximum of {} sessions; retry later",
                    self.max
                ),
            ),
            retry_after: Some(RETRY_AFTER_SECONDS),
        })
    }
}
