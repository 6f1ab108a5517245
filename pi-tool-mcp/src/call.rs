//! One tool call, from raw arguments to a result that cannot panic.
//!
//! The order is Pi's: `prepare_arguments`, schema validation (both in
//! [`AgentTool::check_arguments`]), then `execute` with the call's abort signal and
//! progress callback. A panic anywhere in the tool's code is caught and becomes an error,
//! so one bad tool cannot take down a server that other calls are using.
//!
//! Each call of the server is an `execute_tool {tool name}` span
//! ([`pi_tool::agent::telemetry`]), the same span the agent loop makes: `error.type` on a
//! failure, a progress event per update, and the arguments and result (redacted) when
//! the server's policy has [`trace_content`](pi_tool::agent::RunPolicy::trace_content).

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tool::ToolInvocation;
use pi_tool::agent::RunPolicy;
use pi_tool::agent::telemetry::{self, ToolCallSpan};
use pi_tool::schema::ArgumentLimits;
use pi_tool::{
    AbortSignal, AgentTool, JsonDetails, JsonToolResult, OnUpdate, ToolError, ToolErrorKind, Value,
};
use tracing::Instrument;

/// How a call ended, for logs and hosts (the model only sees the result's text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// The tool returned a result.
    Success,
    /// The call failed; the kind says why (aborted, invalid arguments, panic, …).
    Error(ToolErrorKind),
}

/// A finished call, as reported to [`PackServer::on_call_end`](crate::PackServer::on_call_end).
#[derive(Debug, Clone)]
pub struct CallEnd {
    /// The tool's name.
    pub tool: String,
    /// The call id handed to the tool (`mcp-<JSON-RPC request id>`).
    pub call_id: String,
    /// How it ended.
    pub outcome: CallOutcome,
    /// From receiving the request to the end of the tool's work.
    pub elapsed: Duration,
}

/// Runs one call of `tool` through Pi's pipeline and returns its result or the error the
/// model should read. Never panics, whatever the tool does.
///
/// The tool's per-call timeout ([`ToolSpec::timeout`](pi_tool::ToolSpec::timeout)), if
/// set, aborts the tool's signal and ends the call with a timeout error. The arguments are
/// held to the tool's [`argument_limits`](pi_tool::ToolSpec::argument_limits), else to
/// the default [`ArgumentLimits`].
pub async fn run_call(
    tool: &Arc<dyn AgentTool>,
    tool_call_id: &str,
    arguments: Value,
    signal: AbortSignal,
    on_update: OnUpdate<Option<JsonDetails>>,
) -> Result<JsonToolResult, ToolError> {
    // The agent loop's call path: the same containment, the same texts.
    pi_tool::call_contained(
        &**tool,
        ToolInvocation::new(tool_call_id, &arguments, signal, on_update),
        &ArgumentLimits::default(),
        tool.spec().timeout,
    )
    .await
}

/// Runs one call of the server inside its span, with the server's policy: its argument
/// limits and default timeout, then its redactor on the error text and its result
/// budget on the result.
pub(crate) async fn run_call_with_policy(
    tool: &Arc<dyn AgentTool>,
    tool_call_id: &str,
    arguments: Value,
    policy: &RunPolicy,
    signal: AbortSignal,
    on_update: OnUpdate<Option<JsonDetails>>,
) -> (Result<JsonToolResult, ToolError>, CallEnd) {
    let span = ToolCallSpan::new(tool.name(), tool_call_id);
    span.record_arguments(&arguments, policy);
    let on_update = traced_updates(&span, policy, on_update);
    let timeout = tool.spec().timeout.or(policy.tool_timeout);
    let (result, end) = run_call_timed(
        tool,
        tool_call_id,
        arguments,
        &policy.argument_limits,
        signal,
        on_update.clone(),
        timeout,
    )
    .instrument(span.span().clone())
    .await;
    on_update.close();
    let result = match (result, &policy.redactor) {
        (Err(error), Some(redactor)) => Err(ToolError::with_kind(
            error.kind(),
            redactor.redact(error.message()).into_owned(),
        )),
        (result, _) => result,
    };
    let result = match (result, &policy.result_budget) {
        (Ok(result), Some(budget)) => Ok(budget.apply_json(result)),
        (result, _) => result,
    };
    match &result {
        Ok(result) => span.record_result(result, None, policy),
        Err(error) => span.record_error(error, policy),
    }
    (result, end)
}

/// The span of a call that names a tool the server does not have.
pub(crate) fn trace_unknown_tool(
    name: &str,
    tool_call_id: &str,
    error: &ToolError,
    policy: &RunPolicy,
) {
    ToolCallSpan::new(name, tool_call_id).record_failure(
        telemetry::TOOL_NOT_FOUND,
        error.message(),
        policy,
    );
}

/// `on_update` that also records each update in the call's span. Only when a subscriber
/// wants the span: otherwise the tool gets the client's callback untouched (and no
/// allocation).
fn traced_updates(
    span: &ToolCallSpan,
    policy: &RunPolicy,
    on_update: OnUpdate<Option<JsonDetails>>,
) -> OnUpdate<Option<JsonDetails>> {
    if span.span().is_disabled() {
        return on_update;
    }
    let (span, policy) = (span.clone(), policy.clone());
    OnUpdate::new(move |update: JsonToolResult| {
        span.record_update(&update, &policy);
        on_update.call(update);
    })
}

/// Runs the call path with the host's `limits` and `timeout` and measures it.
pub(crate) async fn run_call_timed(
    tool: &Arc<dyn AgentTool>,
    tool_call_id: &str,
    arguments: Value,
    limits: &ArgumentLimits,
    signal: AbortSignal,
    on_update: OnUpdate<Option<JsonDetails>>,
    timeout: Option<Duration>,
) -> (Result<JsonToolResult, ToolError>, CallEnd) {
    let started = Instant::now();
    let result = pi_tool::call_contained(
        &**tool,
        ToolInvocation::new(tool_call_id, &arguments, signal, on_update),
        limits,
        timeout,
    )
    .await;
    let end = CallEnd {
        tool: tool.name().to_owned(),
        call_id: tool_call_id.to_owned(),
        outcome: match &result {
            Ok(_) => CallOutcome::Success,
            Err(error) => CallOutcome::Error(error.kind()),
        },
        elapsed: started.elapsed(),
    };
    (result, end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tool::schema::ToolSchema;
    use pi_tool::{AbortController, ToolSpec, async_trait, json};

    struct Scripted {
        spec: ToolSpec,
        behaviour: fn(Value) -> Result<JsonToolResult, ToolError>,
    }

    #[async_trait]
    impl AgentTool for Scripted {
        fn spec(&self) -> &ToolSpec {
            &self.spec
        }

        async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
            let _id = call.id;
            let params = call.params;
            let signal = call.signal;
            let _on_update = call.on_update;
            if params.get("wait").is_some() {
                signal.sleep(Duration::from_secs(60)).await?;
            }
            (self.behaviour)(params.clone())
        }
    }

    fn tool(behaviour: fn(Value) -> Result<JsonToolResult, ToolError>) -> Arc<dyn AgentTool> {
        let schema = ToolSchema::from_json(json!({"type": "object", "properties": {}}));
        Arc::new(Scripted {
            spec: ToolSpec::new("scripted", "test tool", Arc::new(schema)),
            behaviour,
        })
    }

    #[tokio::test]
    async fn a_panic_is_an_error_naming_the_tool() {
        let tool = tool(|_| panic!("boom"));
        let error = run_call(
            &tool,
            "c",
            json!({}),
            AbortSignal::never(),
            OnUpdate::none(),
        )
        .await
        .unwrap_err();
        assert_eq!(error.kind(), ToolErrorKind::Panicked);
        assert_eq!(error.message(), "Tool scripted panicked: boom");
    }

    #[tokio::test]
    async fn arguments_that_are_not_an_object_fail_validation_before_execute() {
        let tool = tool(|_| panic!("execute must not run"));
        let error = run_call(
            &tool,
            "c",
            json!([1]),
            AbortSignal::never(),
            OnUpdate::none(),
        )
        .await
        .unwrap_err();
        assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
        assert!(
            error
                .message()
                .starts_with("Validation failed for tool \"scripted\":"),
            "{}",
            error.message()
        );
    }

    #[tokio::test]
    async fn an_abort_ends_a_waiting_call() {
        let tool = tool(|_| Ok(JsonToolResult::text("done", None)));
        let controller = AbortController::new();
        let signal = controller.signal();
        let call = tokio::spawn(async move {
            run_call(&tool, "c", json!({"wait": true}), signal, OnUpdate::none()).await
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        controller.abort();
        let error = call.await.unwrap().unwrap_err();
        assert!(error.is_abort(), "{error:?}");
    }
}
