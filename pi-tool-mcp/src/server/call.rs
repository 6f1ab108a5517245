//! One tool call of the server, from raw arguments to a result that cannot panic, and
//! the [`CallEnd`] a server reports of it.
//!
//! The order is Pi's: `prepare_arguments`, schema validation (both in
//! [`AgentTool::check_arguments`]), then `execute` with the call's abort signal and
//! progress callback. A panic anywhere in the tool's code is caught and becomes an error,
//! so one bad tool cannot take down a server that other calls are using.
//!
//! Each call runs through the server's [`CallPolicy`], the runner every host shares: the
//! same checks, containment, redaction, result budget and `execute_tool {tool name}` span
//! ([`CallSpan`](pi_tool_core::CallSpan)) as in the agent loop.

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tool_core::concurrency::Lease;
use pi_tool_core::{
    AbortSignal, AgentTool, CallFailure, CallPolicy, CallScope, CallSpan, JsonDetails,
    JsonToolResult, OnUpdate, ToolError, ToolErrorKind, Value,
};

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

/// Runs one call of the server through its policy, in its room when classes are limited
/// (`lease`), and measures it (the wait for room included).
pub(crate) async fn run_call_with_policy(
    tool: &Arc<dyn AgentTool>,
    tool_call_id: &str,
    arguments: Value,
    policy: &CallPolicy,
    signal: AbortSignal,
    on_update: OnUpdate<Option<JsonDetails>>,
    scope: (Option<Arc<CallScope>>, Option<Arc<Lease>>),
) -> (Result<JsonToolResult, ToolError>, CallEnd) {
    let started = Instant::now();
    let result = super::nested::invoke(
        tool,
        tool_call_id,
        &arguments,
        policy,
        (signal, on_update),
        scope,
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

/// The span of a call that names a tool the server does not have.
pub(crate) fn trace_unknown_tool(
    name: &str,
    tool_call_id: &str,
    error: &ToolError,
    policy: &CallPolicy,
) {
    CallSpan::new(name, tool_call_id).record_failure(
        CallFailure::NOT_FOUND,
        error.message(),
        policy,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tool_core::schema::ToolSchema;
    use pi_tool_core::{AbortController, ToolInvocation, ToolSpec, async_trait, json};

    /// A call under the default policy, as a server without `with_policy` runs it.
    async fn run_call(
        tool: &Arc<dyn AgentTool>,
        id: &str,
        arguments: Value,
        signal: AbortSignal,
        on_update: OnUpdate<Option<JsonDetails>>,
    ) -> Result<JsonToolResult, ToolError> {
        run_call_with_policy(
            tool,
            id,
            arguments,
            &CallPolicy::default(),
            signal,
            on_update,
            (None, None),
        )
        .await
        .0
    }

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
