//! One MCP tool as an [`AgentTool`].

use std::sync::{Arc, Weak};
use std::time::Duration;

use pi_tool_core::schema::{ToolSchema, normalize};
use pi_tool_core::{
    AgentTool, JsonToolResult, ToolAnnotations, ToolError, ToolExecutionMode, ToolInvocation,
    ToolSpec, Value, async_trait,
};
use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    ElicitRequestParams, InputRequest as McpInputRequest, InputResponses, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RequestHandle, ServiceError};
use sha2::{Digest, Sha256};

use super::connection::Connection;
use super::result::{progress_update, tool_result};

/// How many input-required rounds (2026-07-28) one call may take.
const MAX_INPUT_ROUNDS: usize = 8;

/// How long the cancellation of an aborted call may take to send.
const CANCEL_SEND: Duration = Duration::from_secs(1);

/// A tool of an MCP server.
/// The definitions a toolset approved, as a tool checks them before each call. The
/// toolset's state implements it, so a tool does not depend on the toolset.
pub(crate) trait Pins: Send + Sync {
    /// Whether a tool approved with `digest` may be called now; otherwise why not.
    fn callable(&self, original: &str, digest: &str) -> Result<(), String>;
}

pub(crate) struct McpTool {
    pub(crate) spec: ToolSpec,
    pub(crate) original: String,
    pub(crate) digest: String,
    output: Option<Arc<ToolSchema>>,
    conn: Arc<Connection>,
    /// Weak: the toolset's state holds its tools. Gone with the toolset, after which
    /// nothing can change the pinned definitions any more.
    state: Weak<dyn Pins>,
}

/// The digest a tool's definition is pinned by: its name, description, input schema,
/// output schema and annotations, as the server listed them.
pub(crate) fn digest(tool: &rmcp::model::Tool) -> String {
    let pinned = serde_json::json!({
        "name": tool.name,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "outputSchema": tool.output_schema,
        "annotations": tool.annotations,
    });
    let hash = Sha256::digest(pinned.to_string().as_bytes());
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

/// The server's schema through our pipeline: normalised like a generated one, then
/// compiled; one that cannot be used makes every call fail with the reason. The schema
/// as the server listed it stays [`ToolSchema::declared`]. Only local `$ref`s (`#…`) are
/// ever resolved: a network `$ref` is never fetched.
fn input_schema(server: &str, tool: &rmcp::model::Tool) -> ToolSchema {
    let raw = Value::Object((*tool.input_schema).clone());
    match normalize(raw.clone()) {
        Ok(normalized) => ToolSchema::from_json(normalized.schema).with_declared(raw),
        Err(error) => {
            tracing::warn!(
                target: "pi_tool_mcp::client",
                "MCP server `{server}`: the input schema of {} cannot be normalised ({error}); used as given",
                tool.name
            );
            ToolSchema::from_json(raw)
        }
    }
}

/// The effects we use for a tool of a server with this trust.
fn effects(tool: &rmcp::model::Tool, trusted: bool) -> ToolAnnotations {
    let mut effects = ToolAnnotations::new();
    if let Some(a) = &tool.annotations {
        effects.read_only = a.read_only_hint;
        effects.destructive = a.destructive_hint;
        effects.idempotent = a.idempotent_hint;
        effects.open_world = a.open_world_hint;
        if let Some(title) = &a.title {
            effects = effects.title(title.clone());
        }
    }
    if !trusted {
        effects.read_only = Some(false);
        effects.destructive = Some(true);
        effects.open_world = Some(true);
    }
    effects
}

impl McpTool {
    pub(crate) fn new(
        conn: Arc<Connection>,
        state: Weak<dyn Pins>,
        name: String,
        tool: &rmcp::model::Tool,
        trusted: bool,
        timeout: Option<Duration>,
    ) -> Self {
        let server = conn.server_name.as_str();
        let mut spec = ToolSpec::new(
            name,
            tool.description.as_deref().unwrap_or_default(),
            Arc::new(input_schema(server, tool)),
        );
        let title = tool
            .title
            .clone()
            .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()));
        spec = spec.label(title.unwrap_or_else(|| tool.name.to_string()));
        spec = spec.annotations(effects(tool, trusted));
        if let Some(timeout) = timeout {
            spec = spec.timeout(timeout);
        }
        let meta = tool.meta.as_ref().map(|m| &m.0);
        let pi_meta = |key: &str| {
            meta.and_then(|m| m.get(&format!("{}{key}", crate::meta::TOOL_META_PREFIX)))
        };
        if trusted {
            if let Some(snippet) = pi_meta("promptSnippet").and_then(Value::as_str) {
                spec = spec.prompt_snippet(snippet);
            }
            if let Some(lines) = pi_meta("promptGuidelines").and_then(Value::as_array) {
                for line in lines.iter().filter_map(Value::as_str) {
                    spec = spec.prompt_guideline(line);
                }
            }
        }
        // Sequential only makes a call safer, so it is honoured from anyone.
        if pi_meta("executionMode").and_then(Value::as_str) == Some("sequential") {
            spec = spec.execution_mode(ToolExecutionMode::Sequential);
        }
        let output = tool.output_schema.as_ref().map(|schema| {
            let schema = Value::Object((**schema).clone());
            Arc::new(match normalize(schema.clone()) {
                Ok(normalized) => ToolSchema::from_json(normalized.schema),
                Err(_) => ToolSchema::from_json(schema),
            })
        });
        McpTool {
            spec,
            original: tool.name.to_string(),
            digest: digest(tool),
            output,
            conn,
            state,
        }
    }

    fn error(&self, message: impl std::fmt::Display) -> ToolError {
        ToolError::new(format!("MCP server `{}`: {message}", self.conn.server_name))
    }

    /// Refuses the call when the server's current definition of the tool is not the one
    /// this tool was approved with.
    fn check_pinned(&self) -> Result<(), ToolError> {
        let Some(state) = self.state.upgrade() else {
            return Ok(());
        };
        state
            .callable(&self.original, &self.digest)
            .map_err(|why| self.error(format!("tool {} {why}", self.spec.name)))
    }

    /// Why the connection is gone, for an error.
    async fn closed(&self, during_call: bool) -> ToolError {
        let why = self.conn.close_reason().await;
        if during_call {
            self.error(format!(
                "the connection ended during the call of {}: {why}",
                self.spec.name
            ))
        } else {
            self.error(format!("not connected: {why}"))
        }
    }

    /// Sends one `tools/call` and waits for its answer, with progress and abort; sends it
    /// again after each new authorization the server asks for (OAuth: a 401, or a 403
    /// asking for more scope), as many as the connection's OAuth settings allow.
    async fn round(
        &self,
        params: CallToolRequestParams,
        call: &ToolInvocation<'_>,
    ) -> Result<ServerResult, ToolError> {
        loop {
            match self.round_once(params.clone(), call).await? {
                Ok(result) => {
                    self.conn.accepted();
                    return Ok(result);
                }
                Err(error) => match self.conn.reauthorized(&error).await {
                    Ok(true) => {}
                    Ok(false) => return Err(self.service_error(error).await),
                    Err(why) => {
                        return Err(self
                            .error(format!("the call of {} was refused: {why}", self.spec.name)));
                    }
                },
            }
        }
    }

    /// The error text of a request that failed.
    async fn service_error(&self, error: ServiceError) -> ToolError {
        match error {
            ServiceError::McpError(error) => self.error(format!(
                "the call of {} failed: {} (JSON-RPC error {})",
                self.spec.name, error.message, error.code.0
            )),
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                self.closed(true).await
            }
            other => self.error(format!("the call of {} failed: {other}", self.spec.name)),
        }
    }

    /// One `tools/call`: its result, or the service's error (for [`Self::round`] to
    /// decide on), or an error of ours (aborted, not connected).
    async fn round_once(
        &self,
        params: CallToolRequestParams,
        call: &ToolInvocation<'_>,
    ) -> Result<Result<ServerResult, ServiceError>, ToolError> {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle: RequestHandle<RoleClient> = match self
            .conn
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(_) => return Err(self.closed(false).await),
        };
        // Progress is routed to a call whose caller listens; for any other the server's
        // notifications are dropped as they come.
        let listening = call.on_update.is_listening();
        let (_route, mut progress) = if listening {
            let (route, progress) = self.conn.handler.route(handle.progress_token.clone());
            (Some(route), Some(progress))
        } else {
            (None, None)
        };
        let mut cancel = CancelOnDrop {
            peer: handle.peer.clone(),
            id: Some(handle.id.clone()),
        };
        let response = handle.await_response();
        tokio::pin!(response);
        let deliver = |progress: &mut ProgressReceiver| {
            let update = progress.borrow_and_update().as_ref().map(progress_update);
            if let Some(update) = update {
                call.on_update.send(update);
            }
        };
        let outcome = loop {
            // Progress first: a server sends its last progress before the result, and
            // both may be ready at once.
            tokio::select! {
                biased;
                changed = changed(&mut progress) => match (changed, progress.as_mut()) {
                    (true, Some(receiver)) => deliver(receiver),
                    _ => progress = None,
                },
                () = call.signal.aborted() => {
                    cancel.send("aborted by the client").await;
                    return Err(ToolError::aborted());
                }
                outcome = &mut response => break outcome,
            }
        };
        cancel.id = None;
        if let Some(progress) = progress.as_mut() {
            // rmcp hands notifications to the handler on tasks of their own, so the last
            // progress may still be on its way when the result is here: one turn of the
            // scheduler lets it arrive.
            tokio::task::yield_now().await;
            if progress.has_changed().unwrap_or(false) {
                deliver(progress);
            }
        }
        Ok(outcome)
    }

    /// Answers a 2026-07-28 input-required result's requests.
    async fn answer_inputs(
        &self,
        requests: rmcp::model::InputRequests,
    ) -> Result<InputResponses, ToolError> {
        let mut responses = InputResponses::new();
        for (key, request) in requests {
            let answer = match request {
                McpInputRequest::Elicitation(request) => {
                    let params: ElicitRequestParams = request.params;
                    let result = self.conn.handler.answer_elicitation(params).await;
                    serde_json::to_value(result).map_err(|e| self.error(e))?
                }
                McpInputRequest::ListRoots(_) => serde_json::json!({"roots": []}),
                #[allow(deprecated)] // SEP-2577: sampling is still in both revisions served.
                McpInputRequest::CreateMessage(request) => {
                    match self.conn.handler.answer_sampling(request.params).await {
                        Ok(result) => serde_json::to_value(result).map_err(|e| self.error(e))?,
                        Err(_) => {
                            return Err(self.error(format!(
                                "tool {} asked for sampling (a model call), which this \
                                 client's host does not provide",
                                self.spec.name
                            )));
                        }
                    }
                }
                _ => {
                    return Err(self.error(format!(
                        "tool {} asked for input this client does not know",
                        self.spec.name
                    )));
                }
            };
            responses.insert(key, answer);
        }
        Ok(responses)
    }
}

type ProgressReceiver =
    tokio::sync::watch::Receiver<Option<rmcp::model::ProgressNotificationParam>>;

/// Whether new progress came (`false`: none ever will); never, without a receiver.
async fn changed(progress: &mut Option<ProgressReceiver>) -> bool {
    match progress {
        Some(progress) => progress.changed().await.is_ok(),
        None => std::future::pending().await,
    }
}

/// Sends `notifications/cancelled` for a request whose caller gave up, also when the
/// call's future is dropped (a timeout of the call path).
struct CancelOnDrop {
    peer: rmcp::Peer<RoleClient>,
    id: Option<rmcp::model::RequestId>,
}

impl CancelOnDrop {
    async fn send(&mut self, reason: &str) {
        if let Some(id) = self.id.take() {
            let note = CancelledNotificationParam::new(Some(id), Some(reason.to_owned()));
            let _ = tokio::time::timeout(CANCEL_SEND, self.peer.notify_cancelled(note)).await;
        }
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.id.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let peer = self.peer.clone();
            runtime.spawn(async move {
                let note = CancelledNotificationParam::new(
                    Some(id),
                    Some("the call was dropped".to_owned()),
                );
                let _ = tokio::time::timeout(CANCEL_SEND, peer.notify_cancelled(note)).await;
            });
        }
    }
}

#[async_trait]
impl AgentTool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        self.check_pinned()?;
        let arguments = match call.params {
            Value::Object(map) => map.clone(),
            other => {
                return Err(self.error(format!(
                    "tool {} takes an object of arguments, not {other}",
                    self.spec.name
                )));
            }
        };
        let _ui = self.conn.handler.enter_call(call.context.as_ref());
        let mut params =
            CallToolRequestParams::new(self.original.clone()).with_arguments(arguments);
        for _ in 0..MAX_INPUT_ROUNDS {
            match self.round(params.clone(), &call).await? {
                ServerResult::CallToolResult(result) => {
                    return tool_result(
                        &self.conn.server_name,
                        &self.spec.name,
                        self.output.as_deref(),
                        result,
                    );
                }
                ServerResult::InputRequiredResult(required) => {
                    let responses = self
                        .answer_inputs(required.input_requests.unwrap_or_default())
                        .await?;
                    params.input_responses = (!responses.is_empty()).then_some(responses);
                    params.request_state = required.request_state;
                }
                ServerResult::EmptyResult(_) => {
                    return tool_result(
                        &self.conn.server_name,
                        &self.spec.name,
                        self.output.as_deref(),
                        rmcp::model::CallToolResult::success(Vec::new()),
                    );
                }
                _ => {
                    return Err(self.error(format!(
                        "the answer to the call of {} is not a tool result",
                        self.spec.name
                    )));
                }
            }
        }
        Err(self.error(format!(
            "tool {} asked for input more than {MAX_INPUT_ROUNDS} times",
            self.spec.name
        )))
    }
}
