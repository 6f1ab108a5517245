//! One `tools/call` of a [`PackServer`]: the tool found, the call's client and abort
//! signal set up, the call run through the server's policy (plain, or as a task for a
//! client that declared tasks), and its result converted.

use std::sync::{Arc, OnceLock, PoisonError};

use pi_tool_core::{
    AbortController, AbortSignal, AgentTool, JsonToolResult, OnUpdate, TaskSupport, ToolError,
    ToolErrorKind, Value,
};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, CreateTaskResult,
    InputRequiredResult, InputResponses, JsonObject,
};
use rmcp::service::{RequestContext, RoleServer};

use super::PackServer;
use super::admission::trace_refused;
use super::call::{CallEnd, run_call_with_policy, trace_unknown_tool};
use super::convert::call_tool_result;
use super::disconnect::client_gone;
use super::input::{BadState, CallInput, Suspended};
use super::nested::Session;
use super::progress::ProgressForwarder;
use super::served::effective_support;
use super::tasks::{Running, Tasks};

impl PackServer {
    pub(super) fn find(&self, name: &str) -> Option<Arc<dyn AgentTool>> {
        self.served.find(name)
    }

    /// What the calls of this handler's session share (nested.rs).
    fn session(&self) -> Session {
        Session {
            served: self.served.clone(),
            policy: self.policy.policy.clone(),
            limits: self.policy.nested,
            max_session_calls: self.policy.max_session_calls,
            scheduler: self.policy.scheduler.clone(),
            calls: self.session_calls.clone(),
        }
    }

    /// Counts a `tools/call` against the session's limit; past it, the result the client
    /// reads instead of running the call.
    fn refused(&self, tool: &Arc<dyn AgentTool>, call_id: &str) -> Option<CallToolResponse> {
        let name = tool.name();
        let error = self
            .session_calls
            .admit(self.policy.max_session_calls, name)
            .err()?;
        trace_refused(name, call_id, &error, &self.policy.policy);
        Some(call_tool_result(Err(error), tool.spec().output_schema.as_deref()).into())
    }

    /// Runs one `tools/call` through the server's policy
    /// ([`CallPolicy::call`](pi_tool_core::CallPolicy::call): limits, `prepare_arguments`,
    /// validation, `execute` contained, redaction, result budget, span).
    pub(super) async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let call_id = format!("mcp-{}", context.id);
        let policy = &self.policy.policy;
        let Some(tool) = self.find(&request.name) else {
            // MCP lists an unknown tool among the protocol errors (-32602), at every
            // revision; the message is Pi's text for it, which names the tool.
            let error = ToolError::new(format!("Tool {} not found", request.name));
            trace_unknown_tool(&request.name, &call_id, &error, policy);
            return Err(McpError::invalid_params(
                error.message().to_owned(),
                Some(serde_json::json!({ "tool": request.name })),
            ));
        };
        if let Some(refused) = self.refused(&tool, &call_id) {
            return Ok(refused);
        }
        if let Some(support) = effective_support(tool.as_ref(), &self.task_support) {
            let client_tasks = context
                .client_capabilities()
                .is_some_and(|capabilities| capabilities.supports_tasks());
            if client_tasks {
                return self.call_as_task(tool.clone(), request, context).await;
            }
            if support == TaskSupport::Required {
                return Err(McpError::missing_required_client_capability(
                    ClientCapabilities::builder().enable_tasks().build(),
                ));
            }
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        // rmcp cancels this token when the client sends `notifications/cancelled` for
        // this request: it is the call's abort signal. Over streamable HTTP, a client
        // that closes the call's response cancels it too (disconnect.rs).
        let token = context.ct.child_token();
        let signal = AbortSignal::from_token(token.clone());
        let input = self.call_input(
            &context,
            signal.clone(),
            ("tool", &request.name, &arguments),
            request.input_responses,
            request.request_state.as_deref(),
        )?;
        let gone = client_gone(&context);
        let progress =
            ProgressForwarder::new(context.peer.clone(), context.meta.get_progress_token());
        // The room is taken inside the run, so that a client that goes away while the call
        // waits for it ends the wait.
        let session = self.session();
        let lease = session.lease(&tool);
        let scope = session.scope((&call_id, &tool), lease.clone(), &signal);
        let run = input.scope(run_call_with_policy(
            &tool,
            &call_id,
            arguments,
            policy,
            signal,
            progress.on_update(),
            (scope, lease),
        ));
        let mut run = std::pin::pin!(run);
        let gone = async {
            match gone {
                Some(gone) => gone.aborted().await,
                None => std::future::pending().await,
            }
        };
        let (result, end) = tokio::select! {
            ended = &mut run => ended,
            () = gone => {
                token.cancel();
                run.await
            }
            () = input.suspended() => {
                // The round ends here: the tool asked what this request has no answer
                // for. Its future is dropped; the retried request runs it again.
                token.cancel();
                progress.finish().await;
                return self.suspended(&input);
            }
        };
        progress.finish().await;
        if let Some(hook) = &self.on_call_end {
            // A failing log hook must not cost the client its result.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(&end)));
        }
        Ok(call_tool_result(result, tool.spec().output_schema.as_deref()).into())
    }
}

impl PackServer {
    /// Runs a call of a task-capable tool for a client that declared tasks: a plain
    /// result when the tool ends at once, an MRTR round when it asks before it first
    /// waits, otherwise a task (see `tasks.rs`).
    async fn call_as_task(
        &self,
        tool: Arc<dyn AgentTool>,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let call_id = format!("mcp-{}", context.id);
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        // Not the request's token: the task outlives the request.
        let abort = AbortController::new();
        let input = self.call_input(
            &context,
            abort.signal(),
            ("tool", &request.name, &arguments),
            request.input_responses,
            request.request_state.as_deref(),
        )?;
        let task: Arc<OnceLock<Arc<Running>>> = Arc::default();
        let progress_task = task.clone();
        let on_update = OnUpdate::new(move |update: JsonToolResult| {
            let text = update.text_content();
            if let Some(running) = progress_task.get()
                && !text.is_empty()
            {
                Tasks::progress(running, text);
            }
        });
        let output = tool.spec().output_schema.clone();
        let policy = self.policy.clone();
        let signal = abort.signal();
        let session = self.session();
        let lease = session.lease(&tool);
        let scope = session.scope((&call_id, &tool), lease.clone(), &signal);
        let mut run = Box::pin(input.scoped(async move {
            run_call_with_policy(
                &tool,
                &call_id,
                arguments,
                &policy.policy,
                signal,
                on_update,
                (scope, lease),
            )
            .await
        }));
        // One step of the tool decides: done, asking (MRTR), or waiting (a task).
        tokio::select! {
            biased;
            (result, end) = &mut run => {
                self.call_ended(&end);
                return Ok(call_tool_result(result, output.as_deref()).into());
            }
            () = input.suspended() => {
                abort.abort();
                return self.suspended(&input);
            }
            () = std::future::ready(()) => {}
        }
        let (running, created) = self.tasks.create(abort).await?;
        let _ = task.set(running.clone());
        input.escalate(self.tasks.clone(), running.clone());
        let tasks = self.tasks.clone();
        let hook = self.on_call_end.clone();
        tokio::spawn(async move {
            // A task no client finishes (questions never answered) ends with its time
            // to live, aborted, so that it does not stay in memory.
            let work = async {
                match tokio::time::timeout(Tasks::TTL, &mut run).await {
                    Ok(ended) => ended,
                    Err(_) => {
                        running.abort();
                        run.await
                    }
                }
            };
            let mut work = std::pin::pin!(work);
            // Another replica's `tasks/cancel` aborts the tool; the run then ends as
            // the tool answers its abort.
            let (result, end) = tokio::select! {
                ended = &mut work => ended,
                () = tasks.cancelled_elsewhere(&running) => work.await,
            };
            if let Some(hook) = &hook {
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(&end)));
            }
            let outcome = match result {
                // A panic is the server's failure, not the tool's answer.
                Err(error) if error.kind() == ToolErrorKind::Panicked => Err(json_object(
                    serde_json::json!({"code": -32603, "message": error.message()}),
                )),
                result => Ok(json_object(
                    serde_json::to_value(call_tool_result(result, output.as_deref()))
                        .unwrap_or_default(),
                )),
            };
            tasks.finish(&running, outcome).await;
        });
        Ok(CallToolResponse::Task(CreateTaskResult::new(created)))
    }

    fn call_ended(&self, end: &CallEnd) {
        if let Some(hook) = &self.on_call_end {
            // A failing log hook must not cost the client its result.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(end)));
        }
    }

    /// The client of one request, with the answers a 2026-07-28 retry carries; a
    /// `requestState` that fails its check is -32602.
    pub(super) fn call_input(
        &self,
        context: &RequestContext<RoleServer>,
        signal: AbortSignal,
        binding: (&str, &str, &Value),
        responses: Option<InputResponses>,
        state: Option<&str>,
    ) -> Result<CallInput, McpError> {
        let stateless = context
            .protocol_version()
            .is_some_and(|version| version.to_string().as_str() >= "2026-07-28");
        let log_level = if stateless {
            context.meta.log_level()
        } else {
            *self
                .log_level
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
        };
        CallInput::new(
            stateless,
            context.peer.clone(),
            context.client_capabilities().unwrap_or_default(),
            log_level,
            signal,
            &self.request_state,
            binding,
            responses,
            state,
        )
        .map_err(|BadState(error)| McpError::invalid_params(error, None))
    }

    /// The answer to a 2026-07-28 round that ended on a question.
    pub(super) fn suspended<T: From<InputRequiredResult>>(
        &self,
        input: &CallInput,
    ) -> Result<T, McpError> {
        match input.take_suspended(&self.request_state) {
            Some((Suspended::Input(requests), state)) => {
                Ok(InputRequiredResult::new(Some(requests), Some(state)).into())
            }
            Some((Suspended::MissingCapability(required), _)) => {
                Err(McpError::missing_required_client_capability(required))
            }
            Some((Suspended::BadAnswer(error), _)) => Err(McpError::invalid_params(error, None)),
            None => Err(McpError::internal_error(
                "the request state could not be sealed",
                None,
            )),
        }
    }
}

/// The object of a JSON value (an empty one for any other value).
fn json_object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}
