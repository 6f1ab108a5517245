//! The sessions of [`PackServer::serve_http`](crate::PackServer::serve_http): rmcp's
//! [`SessionManager`] with a session as a small record, in place of rmcp's
//! `LocalSessionManager`.
//!
//! rmcp's manager gives each session a worker task and five channels between it, the
//! service and the HTTP side, each channel allocating its first block of 32 message
//! slots whatever its capacity: most of what a session held (63 KiB from a fresh start,
//! against the Python SDK's 32 KiB; `bench/README.md`). Here a session is a record under
//! a lock ([`state::State`]): the messages waiting for the service, the routes of the
//! requests in flight to their response streams, and the standalone stream with its
//! replay cache. The service's transport ([`transport::SessionTransport`]) reads and
//! writes that record directly, so there is no worker task, and a channel exists only
//! while a response stream is open. The behaviour is rmcp's, rule for rule: event ids
//! `N/R` on request streams (`0/R` the priming event) and `N` on the standalone one,
//! responses and progress on their request's stream, server requests on their
//! originating request's stream (SEP-2260), a cancelled request's stream closed, the
//! standalone stream's last 16 events replayed to a new or resumed stream, later GET
//! streams kept alive as shadows, and a session ended after
//! [`HttpLimits::session_idle_timeout`](crate::HttpLimits::session_idle_timeout)
//! without a message (here: and with no request in flight).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use tokio::sync::mpsc::Receiver;

use self::state::Session;
use self::transport::SessionTransport;

pub(crate) mod state;
pub(crate) mod transport;

/// Every session of one server, by id.
pub(crate) struct SessionTable {
    sessions: RwLock<HashMap<SessionId, Arc<Session>>>,
    idle: Duration,
}

/// A session the table does not hold (ended, or never opened); rmcp answers 404 or 500
/// from it as it would from its own manager's error.
#[derive(Debug)]
pub(crate) struct SessionGone;

impl std::fmt::Display for SessionGone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the session has ended")
    }
}

impl std::error::Error for SessionGone {}

impl SessionTable {
    /// A table whose sessions end after `idle` without a message.
    pub(crate) fn new(idle: Duration) -> Self {
        SessionTable {
            sessions: RwLock::default(),
            idle,
        }
    }

    /// The sessions open now.
    pub(crate) fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether `id` names an open session.
    pub(crate) fn contains(&self, id: &str) -> bool {
        self.read().contains_key(id)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<SessionId, Arc<Session>>> {
        self.sessions
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn get(&self, id: &SessionId) -> Result<Arc<Session>, SessionGone> {
        self.read().get(id).cloned().ok_or(SessionGone)
    }
}

/// The events a response stream carries, until its sender is dropped.
fn events(
    mut receiver: Receiver<ServerSseMessage>,
) -> impl Stream<Item = ServerSseMessage> + Send + Sync + 'static {
    futures::stream::poll_fn(move |cx| receiver.poll_recv(cx))
}

/// A session id: 128 random bits as hex, as unguessable as rmcp's UUIDs.
fn new_id() -> SessionId {
    let mut bytes = [0u8; 16];
    // Without the system's randomness the id still differs per session and process.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        bytes = (nanos ^ u128::from(std::process::id()) << 64).to_le_bytes();
    }
    bytes
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect::<String>()
        .into()
}

impl SessionManager for SessionTable {
    type Error = SessionGone;
    type Transport = SessionTransport;

    async fn create_session(&self) -> Result<(SessionId, SessionTransport), SessionGone> {
        let id = new_id();
        let session = Arc::new(Session::new(self.idle));
        self.sessions
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id.clone(), session.clone());
        Ok((id, SessionTransport::new(session)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, SessionGone> {
        let answer = self.get(id)?.initialize(message);
        answer.await.map_err(|_| SessionGone)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, SessionGone> {
        Ok(self.contains(id))
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), SessionGone> {
        let session = self
            .sessions
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(id);
        if let Some(session) = session {
            session.close();
        }
        Ok(())
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionGone> {
        let receiver = self.get(id)?.request_stream(message)?;
        Ok(events(receiver))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), SessionGone> {
        self.get(id)?.accept(message)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionGone> {
        let receiver = self.get(id)?.standalone_stream(Some(0))?;
        Ok(events(receiver))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionGone> {
        let receiver = self.get(id)?.resume(&last_event_id)?;
        Ok(events(receiver))
    }
}
