//! The session rules of the HTTP layer that rmcp does not have: a session id that is
//! not readable is named as such (400), a `DELETE` of a session the server does not
//! hold is 404, and a request that would open a session past
//! [`HttpLimits::max_sessions`](crate::HttpLimits::max_sessions) is refused with 503 and
//! `Retry-After` (see [`HttpLimits`](crate::HttpLimits) for why new sessions are
//! refused rather than old ones evicted).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use hyper::body::Bytes;
use hyper::{HeaderMap, Method, StatusCode};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long a client refused at the session cap is asked to wait, in seconds.
const RETRY_AFTER_SECONDS: u64 = 5;

/// The sessions of one server, as the layer sees them.
pub(crate) struct Sessions {
    pub(crate) manager: Arc<LocalSessionManager>,
    pub(crate) max: usize,
    /// Without sessions (stateless HTTP) none of these rules apply.
    pub(crate) stateless: bool,
    /// `tools/call` requests of one session running at once, and their slots.
    pub(crate) max_calls: usize,
    pub(crate) calls: Mutex<HashMap<String, Arc<Semaphore>>>,
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
        if method == Method::DELETE {
            let held = self
                .manager
                .has_session(&Arc::from(id.trim()))
                .await
                .unwrap_or(false);
            if !held {
                return Some(Refusal {
                    status: StatusCode::NOT_FOUND,
                    body: error(Value::Null, -32001, "Session not found"),
                    retry_after: None,
                });
            }
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
                let live = self.manager.sessions.try_read().ok();
                if let Some(live) = live {
                    calls.retain(|session, _| live.contains_key(session.as_str()));
                }
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

    /// The refusal of a request that would open a session (a POST without a session
    /// id) while the server holds its maximum; `body` is the message, for its id.
    pub(crate) async fn check_open(
        &self,
        method: &Method,
        headers: &HeaderMap,
        body: Option<&Bytes>,
    ) -> Option<Refusal> {
        if self.stateless || method != Method::POST || headers.contains_key("mcp-session-id") {
            return None;
        }
        if self.manager.sessions.read().await.len() < self.max {
            return None;
        }
        let id = body
            .and_then(|body| serde_json::from_slice::<Value>(body).ok())
            .and_then(|message| message.get("id").cloned())
            .unwrap_or(Value::Null);
        Some(Refusal {
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
