//! Input from the user inside a tool: the client of the call is the tool's user
//! interface (MCP's elicitation), its model (sampling) and its workspace (roots).
//!
//! A tool reaches the client of the call it serves through [`CallingClient::current`],
//! and through the context it already has: [`PackServer::new`](crate::PackServer::new)
//! gives each call a context whose [`has_ui`](pi_tool_core::context::ExtensionContext::has_ui)
//! is `true` exactly when the client declared the `elicitation` capability, and whose
//! `ui().confirm/select/input` become elicitations. One tool body serves every host.
//!
//! How a question reaches the client depends on the revision the request speaks:
//!
//! - **Before 2026-07-28** (a session): the server sends `elicitation/create`,
//!   `sampling/createMessage` or `roots/list` to the client and the tool waits for the
//!   answer (or for its abort signal).
//! - **2026-07-28** (no server-to-client requests, SEP-2322): a question whose answer
//!   the retried request does not carry ends this round of the call. The server answers
//!   an `InputRequiredResult` with the questions (`inputRequests`, under the keys the
//!   tool chose) and a `requestState` that holds every answer the call has read so far,
//!   sealed with an HMAC under the server's key and bound to the tool and its arguments.
//!   The client retries with the answers (`inputResponses`) and the state; the tool runs
//!   again from the start and reads its answers this time. Any replica holding the same
//!   key ([`PackServer::with_request_state_key`](crate::PackServer::with_request_state_key))
//!   can resume the call; a state that fails its check, and an answer that is not of its
//!   question's kind (an `ElicitResult` for an elicitation, ...), are refused with
//!   -32602; answers to questions the tool did not ask are ignored. A tool
//!   body that asks must therefore be deterministic up to its questions (do side effects
//!   after asking), and key its questions the same way on every run (the context's UI
//!   numbers its questions in order).
//!
//! A question the client did not declare the capability for is refused: the tool gets
//! [`InputError::MissingCapability`] before 2026-07-28, and at 2026-07-28 the request is
//! answered -32021 (`MissingRequiredClientCapabilityError`, HTTP 400) naming it, as that
//! revision asks.

// Sampling, roots and logging are deprecated by SEP-2577 (2026-07-28), which still has
// them and whose conformance suite calls them.
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, PoisonError};

use pi_tool_core::AbortSignal;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, InputRequest, InputRequests, ListRootsResult, LoggingLevel,
    LoggingMessageNotificationParam, ServerRequest,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};

use self::round::Retry;
use super::tasks::{Running, Tasks};

mod round;
mod ui;

pub(crate) use round::{BadState, CallInput, Suspended};
pub(crate) use ui::mcp_context;

tokio::task_local! {
    /// The client of the request being served.
    static CALLING: CallingClient;
}

/// The client of the MCP request a tool (or prompt) is serving: ask it for input from
/// its user, a completion from its model, or its roots. See the [crate docs](crate)
/// and `pi-tool-mcp/README.md` ("Input from the user"): before MCP 2026-07-28 a question
/// is a request the client answers while the tool waits; at 2026-07-28 it ends the round
/// with an input-required result, and the retried request runs the tool again, which then
/// reads its answer (so ask before side effects, and key questions the same on each run).
#[derive(Clone)]
pub struct CallingClient {
    pub(super) inner: Arc<Inner>,
}

impl fmt::Debug for CallingClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallingClient")
            .field("capabilities", &self.inner.capabilities)
            .field(
                "revision",
                &match self.inner.channel {
                    Channel::Session => "session",
                    Channel::Retry(_) => "2026-07-28",
                },
            )
            .finish()
    }
}

pub(super) struct Inner {
    pub(super) capabilities: ClientCapabilities,
    pub(super) peer: Peer<RoleServer>,
    /// The least severe level the client asked to hear (`logging/setLevel`, or the
    /// request's `_meta` at 2026-07-28); `None`: no log messages.
    pub(super) log_level: Option<LoggingLevel>,
    pub(super) channel: Channel,
    pub(super) signal: AbortSignal,
    /// Numbers the questions of the context's UI, the same way on every run.
    pub(super) ui_questions: AtomicUsize,
    /// Set once the call became a task: its questions then park the task.
    pub(super) task: OnceLock<(Arc<Tasks>, Arc<Running>)>,
}

pub(super) enum Channel {
    /// A session: requests go to the client, answers come back.
    Session,
    /// 2026-07-28: answers come with the retried request.
    Retry(Box<Retry>),
}

/// Why a question got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputError {
    /// The client did not declare the capability the question needs (`elicitation`,
    /// `sampling` or `roots`).
    MissingCapability(&'static str),
    /// The client answered with an error, or with an answer of the wrong shape.
    Failed(String),
    /// The call was aborted while it waited.
    Aborted,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::MissingCapability(capability) => write!(
                f,
                "the client did not declare the `{capability}` capability this needs"
            ),
            InputError::Failed(error) => write!(f, "the client could not answer: {error}"),
            InputError::Aborted => f.write_str("aborted while waiting for the client"),
        }
    }
}

impl std::error::Error for InputError {}

fn capability_of(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::Elicitation(_) => "elicitation",
        InputRequest::CreateMessage(_) => "sampling",
        _ => "roots",
    }
}

fn required(capability: &'static str) -> ClientCapabilities {
    let mut required = ClientCapabilities::default();
    match capability {
        "elicitation" => required.elicitation = Some(Default::default()),
        "sampling" => required.sampling = Some(Default::default()),
        _ => required.roots = Some(Default::default()),
    }
    required
}

impl CallingClient {
    /// The client of the request this task is serving, inside a tool's `execute` (or a
    /// prompt's function) run by a [`PackServer`](crate::PackServer); `None` elsewhere.
    pub fn current() -> Option<Self> {
        CALLING.try_with(Clone::clone).ok()
    }

    /// What the client declared it can do.
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.inner.capabilities
    }

    /// Whether the client can ask its user (`elicitation`).
    pub fn can_elicit(&self) -> bool {
        self.inner.capabilities.elicitation.is_some()
    }

    /// Whether the client can run its model for the server (`sampling`).
    pub fn can_sample(&self) -> bool {
        self.inner.capabilities.sampling.is_some()
    }

    /// Whether the client can list its roots (`roots`).
    pub fn can_list_roots(&self) -> bool {
        self.inner.capabilities.roots.is_some()
    }

    /// Asks the user through `elicitation/create`; `key` names the question in an
    /// `InputRequiredResult` (2026-07-28) and must be the same on every run.
    pub async fn elicit(
        &self,
        key: &str,
        params: ElicitRequestParams,
    ) -> Result<ElicitResult, InputError> {
        let request = InputRequest::Elicitation(rmcp::model::ElicitRequest::new(params));
        serde_json::from_value(self.ask_one(key, request).await?).map_err(wrong_shape)
    }

    /// Asks the client's model through `sampling/createMessage`; `key` as for
    /// [`elicit`](Self::elicit).
    pub async fn create_message(
        &self,
        key: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, InputError> {
        let request = InputRequest::CreateMessage(rmcp::model::CreateMessageRequest::new(params));
        serde_json::from_value(self.ask_one(key, request).await?).map_err(wrong_shape)
    }

    /// Asks the client for its roots through `roots/list`; `key` as for
    /// [`elicit`](Self::elicit).
    pub async fn list_roots(&self, key: &str) -> Result<ListRootsResult, InputError> {
        let request = serde_json::from_value::<InputRequest>(json!({"method": "roots/list"}))
            .map_err(|error| InputError::Failed(error.to_string()))?;
        serde_json::from_value(self.ask_one(key, request).await?).map_err(wrong_shape)
    }

    /// Asks several questions at once (at 2026-07-28 they travel in one
    /// `InputRequiredResult`); the answers as JSON, by key.
    pub async fn ask(
        &self,
        requests: InputRequests,
    ) -> Result<BTreeMap<String, Value>, InputError> {
        for request in requests.values() {
            self.check_capability(capability_of(request)).await?;
        }
        match &self.inner.channel {
            Channel::Session => {
                let mut answers = BTreeMap::new();
                for (key, request) in requests {
                    let answer = self.send(request).await?;
                    answers.insert(key, answer);
                }
                Ok(answers)
            }
            Channel::Retry(retry) => {
                let mut answers = BTreeMap::new();
                let mut missing = InputRequests::new();
                for (key, request) in requests {
                    match retry.answers.get(&key) {
                        Some(answer) => {
                            if let Err(error) = check_answer(&request, answer) {
                                retry
                                    .suspend(Suspended::BadAnswer(format!(
                                        "Invalid params: inputResponses[{key:?}]: {error}"
                                    )))
                                    .await;
                            }
                            answers.insert(key, answer.clone());
                        }
                        None => {
                            missing.insert(key, request);
                        }
                    }
                }
                // Read before suspending: the next round's state keeps them, as the
                // client then answers only the missing questions.
                retry
                    .read
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .extend(answers.iter().map(|(k, v)| (k.clone(), v.clone())));
                if missing.is_empty() {
                    return Ok(answers);
                }
                let Some((tasks, running)) = self.inner.task.get() else {
                    retry.suspend(Suspended::Input(missing)).await;
                    return Ok(answers);
                };
                let asked = missing.clone();
                let got = tasks
                    .ask(running, missing)
                    .await
                    .map_err(|error| InputError::Failed(error.to_string()))?;
                for (key, answer) in got {
                    if let Some(request) = asked.get(&key) {
                        check_answer(request, &answer).map_err(wrong_shape)?;
                    }
                    answers.insert(key, answer);
                }
                Ok(answers)
            }
        }
    }

    async fn ask_one(&self, key: &str, request: InputRequest) -> Result<Value, InputError> {
        let mut answers = self
            .ask(InputRequests::from([(key.to_owned(), request)]))
            .await?;
        answers
            .remove(key)
            .ok_or_else(|| InputError::Failed(format!("no answer for {key:?}")))
    }

    async fn check_capability(&self, capability: &'static str) -> Result<(), InputError> {
        let declared = match capability {
            "elicitation" => self.can_elicit(),
            "sampling" => self.can_sample(),
            _ => self.can_list_roots(),
        };
        if declared {
            return Ok(());
        }
        match &self.inner.channel {
            Channel::Session => Err(InputError::MissingCapability(capability)),
            Channel::Retry(_) if self.inner.task.get().is_some() => {
                Err(InputError::MissingCapability(capability))
            }
            Channel::Retry(retry) => {
                retry
                    .suspend(Suspended::MissingCapability(required(capability)))
                    .await;
                Err(InputError::MissingCapability(capability))
            }
        }
    }

    async fn send(&self, request: InputRequest) -> Result<Value, InputError> {
        let request: ServerRequest = match request {
            InputRequest::Elicitation(request) => request.into(),
            InputRequest::CreateMessage(request) => request.into(),
            InputRequest::ListRoots(request) => request.into(),
            _ => return Err(InputError::Failed("an unknown kind of request".to_owned())),
        };
        tokio::select! {
            answer = self.inner.peer.send_request(request) => {
                let answer = answer.map_err(|error| InputError::Failed(error.to_string()))?;
                serde_json::to_value(answer).map_err(|error| InputError::Failed(error.to_string()))
            }
            () = self.inner.signal.aborted() => Err(InputError::Aborted),
        }
    }

    /// Sends the client a log message (`notifications/message`) when it asked for
    /// messages of this level (`logging/setLevel` before 2026-07-28, the request's
    /// `_meta` `io.modelcontextprotocol/logLevel` at 2026-07-28); otherwise nothing. A
    /// client that is gone is not an error: the message is lost, as logs may be.
    pub async fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) {
        let Some(least) = self.inner.log_level else {
            return;
        };
        if severity(level) < severity(least) {
            return;
        }
        let mut message = LoggingMessageNotificationParam::new(level, data);
        message.logger = logger.map(str::to_owned);
        #[allow(deprecated)] // 2026-07-28 deprecates logging, but still has it.
        let _ = self.inner.peer.notify_logging_message(message).await;
    }

    /// The next key of the context's UI questions.
    pub(super) fn next_ui_key(&self) -> String {
        let n = self.inner.ui_questions.fetch_add(1, Ordering::Relaxed);
        format!("pi-tool/ui/{n}")
    }
}

/// The syslog order of MCP's levels, least severe first.
pub(crate) fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// Whether `answer` has the shape of an answer to `request`.
pub(super) fn check_answer(
    request: &InputRequest,
    answer: &Value,
) -> Result<(), serde_json::Error> {
    let answer = answer.clone();
    match request {
        InputRequest::Elicitation(_) => serde_json::from_value::<ElicitResult>(answer).map(drop),
        InputRequest::CreateMessage(_) => {
            serde_json::from_value::<CreateMessageResult>(answer).map(drop)
        }
        _ => serde_json::from_value::<ListRootsResult>(answer).map(drop),
    }
}

pub(super) fn wrong_shape(error: serde_json::Error) -> InputError {
    InputError::Failed(format!("an answer of the wrong shape: {error}"))
}
