//! One request's round with its client: the [`CallInput`] a server makes for a call or a
//! prompt, and at 2026-07-28 (SEP-2322) the answers it carries, the questions that end
//! the round, and the sealed `requestState` the client retries with.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use pi_tool_core::AbortSignal;
use rmcp::model::{
    ClientCapabilities, InputRequests, InputResponses, LoggingLevel, RequestStateCodec, SealOptions,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::Notify;

use super::super::tasks::{Running, Tasks};
use super::{CALLING, CallingClient, Channel, Inner};

/// How long a sealed `requestState` stays valid: a user answering a question takes
/// minutes, not days.
const STATE_TTL: Duration = Duration::from_secs(60 * 60);

/// The answers a 2026-07-28 call has, and what it asked without an answer.
pub(crate) struct Retry {
    /// From the verified state and this request's `inputResponses`.
    pub(super) answers: BTreeMap<String, Value>,
    /// The answers the call read: the next round's state.
    pub(super) read: Mutex<BTreeMap<String, Value>>,
    pub(super) suspended: Mutex<Option<Suspended>>,
    pub(super) wake: Notify,
}

/// Why a 2026-07-28 round ended before the tool did.
pub(crate) enum Suspended {
    /// The tool asked what the request carries no answer for.
    Input(InputRequests),
    /// The tool asked for a capability the client did not declare.
    MissingCapability(ClientCapabilities),
    /// The request's answer to a question is not of the question's kind.
    BadAnswer(String),
}

impl Retry {
    /// Records why the round ends, wakes the server, and never returns: the server
    /// drops the call's future.
    pub(super) async fn suspend(&self, why: Suspended) {
        *self
            .suspended
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(why);
        self.wake.notify_one();
        std::future::pending::<()>().await;
    }
}

/// What binds a state to one call: the tool (or prompt) and its arguments.
fn associated_data(kind: &str, name: &str, arguments: &Value) -> Vec<u8> {
    format!("pi-tool-mcp/{kind}\n{name}\n{arguments}").into_bytes()
}

/// One request's client, made by the server.
pub(crate) struct CallInput {
    client: CallingClient,
    binding: Vec<u8>,
}

/// A `requestState` that does not pass its check.
pub(crate) struct BadState(pub(crate) String);

impl CallInput {
    /// The client of a request: a session's peer before 2026-07-28; at 2026-07-28 the
    /// answers of the verified `state` and of `responses`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        stateless: bool,
        peer: Peer<RoleServer>,
        capabilities: ClientCapabilities,
        log_level: Option<LoggingLevel>,
        signal: AbortSignal,
        codec: &RequestStateCodec,
        binding: (&str, &str, &Value),
        responses: Option<InputResponses>,
        state: Option<&str>,
    ) -> Result<Self, BadState> {
        let binding = associated_data(binding.0, binding.1, binding.2);
        let channel = if stateless {
            let mut answers = match state {
                Some(state) => {
                    let opened = codec
                        .open_json_with::<Value>(state, &binding)
                        .map_err(|error| BadState(format!("requestState refused: {error}")))?;
                    match opened {
                        Value::Object(answers) => answers.into_iter().collect(),
                        _ => return Err(BadState("requestState refused: not ours".to_owned())),
                    }
                }
                None => BTreeMap::new(),
            };
            answers.extend(responses.unwrap_or_default());
            Channel::Retry(Box::new(Retry {
                answers,
                read: Mutex::default(),
                suspended: Mutex::default(),
                wake: Notify::new(),
            }))
        } else {
            Channel::Session
        };
        Ok(CallInput {
            client: CallingClient {
                inner: Arc::new(Inner {
                    capabilities,
                    peer,
                    log_level,
                    channel,
                    signal,
                    ui_questions: AtomicUsize::new(0),
                    task: OnceLock::new(),
                }),
            },
            binding,
        })
    }

    /// Runs `call` with this client as [`CallingClient::current`].
    pub(crate) async fn scope<F: Future>(&self, call: F) -> F::Output {
        CALLING.scope(self.client.clone(), call).await
    }

    /// `call` with this client as [`CallingClient::current`], as an owned future (for a
    /// call that may go on as a task).
    pub(crate) fn scoped<F: Future>(&self, call: F) -> impl Future<Output = F::Output> + use<F> {
        CALLING.scope(self.client.clone(), call)
    }

    /// The call became `running`: its further questions park the task.
    pub(crate) fn escalate(&self, tasks: Arc<Tasks>, running: Arc<Running>) {
        let _ = self.client.inner.task.set((tasks, running));
    }

    /// Resolves when a 2026-07-28 round ends before the call (never before).
    pub(crate) async fn suspended(&self) {
        match &self.client.inner.channel {
            Channel::Retry(retry) => retry.wake.notified().await,
            Channel::Session => std::future::pending().await,
        }
    }

    /// Why the round ended, and the sealed state of the answers read so far.
    pub(crate) fn take_suspended(&self, codec: &RequestStateCodec) -> Option<(Suspended, String)> {
        let Channel::Retry(retry) = &self.client.inner.channel else {
            return None;
        };
        let why = retry
            .suspended
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()?;
        let answers =
            std::mem::take(&mut *retry.read.lock().unwrap_or_else(PoisonError::into_inner));
        let sealed = codec
            .seal_json_with(
                &answers,
                &SealOptions::new()
                    .associated_data(&self.binding)
                    .ttl(STATE_TTL),
            )
            .ok()?;
        Some((why, sealed))
    }
}
