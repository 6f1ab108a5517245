//! The one call path: limits → prepare → validate → execute, with nothing escaping. A panic or an
//! overrun becomes a [`ToolError`] whose text the model can read.
//!
//! [`call_contained`] is the whole path; the agent loop runs its two halves,
//! [`check_contained`] and [`execute_contained`], with its `before_tool_call` hook between
//! them. The loop, the session (through the loop) and the MCP server all call these, so a
//! failure reads the same wherever a tool runs, and panic payloads become text in one place
//! ([`panic_text`]).

use std::any::Any;
use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt;
use serde_json::Value;

use crate::error::{ToolError, ToolErrorKind};
use crate::result::JsonToolResult;
use crate::schema::ArgumentLimits;
use crate::tool::{AgentTool, ToolInvocation};

/// Runs `tool.execute` with every failure contained.
///
/// * The tool's own error comes back as it is.
/// * A panic becomes [`ToolErrorKind::Panicked`]: `Tool <name> panicked: <message>`.
/// * With a `timeout`, a call that runs longer is dropped and becomes
///   [`ToolErrorKind::Timeout`]: `Tool <name> timed out after 30s`. The tool runs under a
///   child of `signal`, which is aborted at the deadline, so work the tool started on its
///   own (a spawned task, a child process) sees the abort too; `signal` itself is left
///   alone.
///
/// Panics are logged at error level and timeouts at warn level through `tracing`.
///
/// ```
/// use std::time::Duration;
/// use pi_tool_core::{AbortSignal, IntoAgentTool, OnUpdate, ToolError, ToolErrorKind, ToolInvocation};
/// use pi_tool_core::{execute_contained, json, pi_tool};
///
/// /// Waits for a minute.
/// #[pi_tool(name = "slow")]
/// async fn slow(signal: AbortSignal) -> Result<String, ToolError> {
///     signal.sleep(Duration::from_secs(60)).await?;
///     Ok("done".into())
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let tool = Slow.into_agent_tool();
/// let args = json!({});
/// let call = ToolInvocation::new("call_1", &args, AbortSignal::never(), OnUpdate::none());
/// let error = execute_contained(&*tool, call, Some(Duration::from_secs(30)))
/// .await
/// .unwrap_err();
/// assert_eq!(error.kind(), ToolErrorKind::Timeout);
/// assert_eq!(error.message(), "Tool slow timed out after 30s");
/// # }
/// ```
pub async fn execute_contained(
    tool: &dyn AgentTool,
    mut call: ToolInvocation<'_>,
    timeout: Option<Duration>,
) -> Result<JsonToolResult, ToolError> {
    let name = tool.name();
    let tool_call_id = call.id;
    let outcome = match timeout {
        None => AssertUnwindSafe(tool.execute(call)).catch_unwind().await,
        Some(limit) => {
            let (controller, child) = call.signal.child();
            call.signal = child;
            let execute = AssertUnwindSafe(tool.execute(call)).catch_unwind();
            match tokio::time::timeout(limit, execute).await {
                Ok(outcome) => outcome,
                Err(_) => {
                    controller.abort();
                    let error = ToolError::with_kind(
                        ToolErrorKind::Timeout,
                        format!("Tool {name} timed out after {}", format_duration(limit)),
                    );
                    tracing::warn!(tool = name, tool_call_id, "{error}");
                    return Err(error);
                }
            }
        }
    };
    outcome.unwrap_or_else(|payload| {
        let error = panicked(name, &*payload);
        tracing::error!(tool = name, tool_call_id, "{error}");
        Err(error)
    })
}

/// Checks raw model arguments against the limits ([`ArgumentLimits`]: the tool's own
/// [`ToolSpec::argument_limits`](crate::ToolSpec) when set, else the host's `limits`),
/// then prepares and validates them (`dyn AgentTool::check_arguments`) with a panic in
/// the tool's `prepare_arguments` contained: it reads as a panic in `execute` does,
/// `Tool <name> panicked: <message>` ([`ToolErrorKind::Panicked`]).
///
/// The limits come first so that nothing downstream (the tool's code, coercion,
/// validation) walks arguments that are too large or too deep.
pub fn check_contained<'a>(
    tool: &dyn AgentTool,
    arguments: &'a Value,
    limits: &ArgumentLimits,
) -> Result<Cow<'a, Value>, ToolError> {
    let limits = tool.spec().argument_limits.as_ref().unwrap_or(limits);
    limits.check(tool.name(), arguments)?;
    std::panic::catch_unwind(AssertUnwindSafe(|| tool.check_arguments(arguments))).unwrap_or_else(
        |payload| {
            let error = panicked(tool.name(), &*payload);
            tracing::error!(tool = tool.name(), "{error}");
            Err(error)
        },
    )
}

/// The whole call path for hosts without hooks (the MCP server): [`check_contained`] on
/// the call's raw arguments with the host's `limits`, then [`execute_contained`] on the
/// checked ones.
pub async fn call_contained(
    tool: &dyn AgentTool,
    call: ToolInvocation<'_>,
    limits: &ArgumentLimits,
    timeout: Option<Duration>,
) -> Result<JsonToolResult, ToolError> {
    let params = check_contained(tool, call.params, limits)?;
    let call = ToolInvocation {
        params: &*params,
        ..call
    };
    execute_contained(tool, call, timeout).await
}

fn panicked(name: &str, payload: &(dyn Any + Send)) -> ToolError {
    ToolError::with_kind(
        ToolErrorKind::Panicked,
        format!(
            "Tool {name} panicked: {}",
            panic_text(payload, "unknown panic payload")
        ),
    )
}

/// The text of a panic payload: its message for `panic!("...")` (with or without
/// arguments), else `fallback`.
pub fn panic_text(payload: &(dyn Any + Send), fallback: &str) -> String {
    panic_message(payload).unwrap_or(fallback).to_owned()
}

/// The message of a panic payload (`panic!("...")` with or without arguments); `None` for
/// any other payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

/// A duration as the runtime spells it in messages: `30s`, `1500ms`.
pub(crate) fn format_duration(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use async_trait::async_trait;
    use serde_json::json;

    use super::*;
    use crate::abort::{AbortController, AbortSignal};
    use crate::schema::ToolSchema;
    use crate::tool::ToolSpec;
    use crate::update::OnUpdate;

    /// Keeps the signal it is given and never finishes, or panics.
    struct Stuck {
        spec: ToolSpec,
        seen: Mutex<Option<AbortSignal>>,
        panics: bool,
    }

    #[async_trait]
    impl AgentTool for Stuck {
        fn spec(&self) -> &ToolSpec {
            &self.spec
        }
        async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
            let signal = call.signal;
            *self.seen.lock().unwrap() = Some(signal);
            if self.panics {
                panic!("boom {}", 7);
            }
            std::future::pending().await
        }
    }

    fn stuck(panics: bool) -> Arc<Stuck> {
        let schema = Arc::new(ToolSchema::from_json(json!({"type": "object"})));
        Arc::new(Stuck {
            spec: ToolSpec::new("stuck", "never ends", schema),
            seen: Mutex::new(None),
            panics,
        })
    }

    #[tokio::test(start_paused = true)]
    async fn an_overrun_aborts_the_signal_the_tool_was_given() {
        let tool = stuck(false);
        let run = AbortController::new();
        let limit = Some(Duration::from_millis(1500));
        let error = execute_contained(
            &*tool,
            ToolInvocation::new("c1", &json!({}), run.signal(), OnUpdate::none()),
            limit,
        )
        .await
        .unwrap_err();
        assert_eq!(error.kind(), ToolErrorKind::Timeout);
        assert_eq!(error.message(), "Tool stuck timed out after 1500ms");
        let given = tool.seen.lock().unwrap().clone().unwrap();
        assert!(
            given.is_aborted(),
            "the tool's signal is aborted at the deadline"
        );
        assert!(
            !run.signal().is_aborted(),
            "the caller's signal is left alone"
        );
    }

    #[test]
    fn a_tools_own_limits_replace_the_hosts() {
        let nested = json!({"a": [1]});
        let host = ArgumentLimits::new().max_depth(1);
        let plain = stuck(false);
        let error = check_contained(&*plain, &nested, &host).unwrap_err();
        assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
        assert_eq!(
            error.message(),
            "Tool stuck: arguments nest 2 levels deep; the limit is 1 (max_depth)"
        );
        assert!(check_contained(&*plain, &nested, &ArgumentLimits::new()).is_ok());
        let mut spec = plain.spec.clone();
        spec.argument_limits = Some(ArgumentLimits::unlimited());
        let own = Stuck {
            spec,
            seen: Mutex::new(None),
            panics: false,
        };
        assert!(check_contained(&own, &nested, &host).is_ok());
        let mut spec = plain.spec.clone();
        spec.argument_limits = Some(ArgumentLimits::new().max_string_chars(1));
        let own = Stuck {
            spec,
            seen: Mutex::new(None),
            panics: false,
        };
        assert_eq!(
            check_contained(&own, &json!({"a": "bc"}), &ArgumentLimits::new())
                .unwrap_err()
                .message(),
            "Tool stuck: the string at a is 2 characters long; the limit is 1 (max_string_chars)"
        );
    }

    /// With no limits, a value deeper than any parser makes (built by hand) still meets
    /// only bounded walks: the validator refuses it after 128 levels. On a 256 KiB stack,
    /// so recursion creeping into the call path fails this test.
    #[test]
    fn without_limits_a_deep_value_is_refused_by_the_validator_on_a_small_stack() {
        let checked = std::thread::Builder::new().stack_size(256 << 10).spawn(|| {
            let mut deep = json!(0);
            for _ in 0..100_000 {
                deep = Value::Array(vec![deep]);
            }
            let mut map = serde_json::Map::new();
            map.insert("a".to_owned(), deep);
            let deep = Value::Object(map);
            let tool = stuck(false);
            let message = check_contained(&*tool, &deep, &ArgumentLimits::unlimited())
                .map(|_| String::new())
                .unwrap_or_else(|e| e.message().to_owned());
            // serde_json's Drop recurses: take the value apart by hand.
            let mut pending = vec![deep];
            while let Some(v) = pending.pop() {
                match v {
                    Value::Array(items) => pending.extend(items),
                    Value::Object(map) => pending.extend(map.into_iter().map(|(_, v)| v)),
                    _ => {}
                }
            }
            message
        });
        let message = checked.and_then(|t| t.join().map_err(|_| std::io::Error::other("panicked")));
        assert!(
            message
                .as_deref()
                .is_ok_and(|m| m.contains("root: must not nest deeper than 128 levels")),
            "{message:?}"
        );
    }

    #[tokio::test]
    async fn a_panic_is_an_error_naming_the_tool_and_the_message() {
        let tool = stuck(true);
        let error = execute_contained(
            &*tool,
            ToolInvocation::new("c1", &json!({}), AbortSignal::never(), OnUpdate::none()),
            None,
        )
        .await
        .unwrap_err();
        assert_eq!(error.kind(), ToolErrorKind::Panicked);
        assert_eq!(error.message(), "Tool stuck panicked: boom 7");
    }
}
