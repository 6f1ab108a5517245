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
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use pi_tool_core::context::{ExtensionContext, ExtensionUi, NotifyLevel};
use pi_tool_core::{AbortSignal, async_trait};
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationSchema, InputRequest, InputRequests,
    InputResponses, ListRootsResult, LoggingLevel, LoggingMessageNotificationParam,
    RequestStateCodec, SealOptions, ServerRequest,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::tasks::{Running, Tasks};

tokio::task_local! {
    /// The client of the request being served.
    static CALLING: CallingClient;
}

/// How long a sealed `requestState` stays valid: a user answering a question takes
/// minutes, not days.
const STATE_TTL: Duration = Duration::from_secs(60 * 60);

/// The client of the MCP request a tool (or prompt) is serving: ask it for input from
/// its user, a completion from its model, or its roots. See the [crate docs](crate)
/// and `pi-tool-mcp/README.md` ("Input from the user"): before MCP 2026-07-28 a question
/// is a request the client answers while the tool waits; at 2026-07-28 it ends the round
/// with an input-required result, and the retried request runs the tool again, which then
/// reads its answer (so ask before side effects, and key questions the same on each run).
#[derive(Clone)]
pub struct CallingClient {
    inner: Arc<Inner>,
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

struct Inner {
    capabilities: ClientCapabilities,
    peer: Peer<RoleServer>,
    /// The least severe level the client asked to hear (`logging/setLevel`, or the
    /// request's `_meta` at 2026-07-28); `None`: no log messages.
    log_level: Option<LoggingLevel>,
    channel: Channel,
    signal: AbortSignal,
    /// Numbers the questions of the context's UI, the same way on every run.
    ui_questions: AtomicUsize,
    /// Set once the call became a task: its questions then park the task.
    task: OnceLock<(Arc<Tasks>, Arc<Running>)>,
}

enum Channel {
    /// A session: requests go to the client, answers come back.
    Session,
    /// 2026-07-28: answers come with the retried request.
    Retry(Box<Retry>),
}

/// The answers a 2026-07-28 call has, and what it asked without an answer.
pub(crate) struct Retry {
    /// From the verified state and this request's `inputResponses`.
    answers: BTreeMap<String, Value>,
    /// The answers the call read: the next round's state.
    read: Mutex<BTreeMap<String, Value>>,
    suspended: Mutex<Option<Suspended>>,
    wake: Notify,
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
    fn next_ui_key(&self) -> String {
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
fn check_answer(request: &InputRequest, answer: &Value) -> Result<(), serde_json::Error> {
    let answer = answer.clone();
    match request {
        InputRequest::Elicitation(_) => serde_json::from_value::<ElicitResult>(answer).map(drop),
        InputRequest::CreateMessage(_) => {
            serde_json::from_value::<CreateMessageResult>(answer).map(drop)
        }
        _ => serde_json::from_value::<ListRootsResult>(answer).map(drop),
    }
}

fn wrong_shape(error: serde_json::Error) -> InputError {
    InputError::Failed(format!("an answer of the wrong shape: {error}"))
}

impl Retry {
    /// Records why the round ends, wakes the server, and never returns: the server
    /// drops the call's future.
    async fn suspend(&self, why: Suspended) {
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

/// The context of a call over MCP: [`ExtensionContext::detached`]'s, with the calling
/// client as its UI when the client declared `elicitation`.
pub(crate) fn mcp_context() -> ExtensionContext {
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let builder = ExtensionContext::builder(cwd);
    match CallingClient::current() {
        Some(client) if client.can_elicit() => builder.ui(Arc::new(ClientUi(client))).build(),
        _ => builder.build(),
    }
}

/// The calling client as a tool's UI, through `elicitation/create`.
struct ClientUi(CallingClient);

impl ClientUi {
    /// Asks for one field; its value when the user accepted.
    async fn ask(&self, message: String, field: &str, schema: Value) -> Option<Value> {
        let schema = json!({
            "type": "object",
            "properties": { field: schema },
            "required": [field],
        });
        let requested_schema = serde_json::from_value::<ElicitationSchema>(schema).ok()?;
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema,
        };
        let key = self.0.next_ui_key();
        let result = self.0.elicit(&key, params).await.ok()?;
        match result.action {
            ElicitationAction::Accept => result.content?.get(field).cloned(),
            _ => None,
        }
    }
}

fn message(title: &str, detail: &str) -> String {
    if detail.is_empty() {
        title.to_owned()
    } else {
        format!("{title}\n\n{detail}")
    }
}

#[async_trait]
impl ExtensionUi for ClientUi {
    async fn confirm(&self, title: &str, message_text: &str) -> bool {
        let answer = self
            .ask(
                message(title, message_text),
                "confirm",
                json!({"type": "boolean", "title": title}),
            )
            .await;
        answer.and_then(|value| value.as_bool()).unwrap_or(false)
    }

    async fn select(&self, title: &str, options: &[String]) -> Option<String> {
        let answer = self
            .ask(
                title.to_owned(),
                "selection",
                json!({"type": "string", "title": title, "enum": options}),
            )
            .await?;
        answer
            .as_str()
            .filter(|chosen| options.iter().any(|option| option == chosen))
            .map(str::to_owned)
    }

    async fn input(&self, title: &str, placeholder: Option<&str>) -> Option<String> {
        let mut schema = json!({"type": "string", "title": title});
        if let Some(placeholder) = placeholder {
            schema["description"] = Value::from(placeholder);
        }
        let answer = self.ask(title.to_owned(), "value", schema).await?;
        answer.as_str().map(str::to_owned)
    }

    fn notify(&self, message: &str, level: NotifyLevel) {
        let _ = (message, level);
    }
}
