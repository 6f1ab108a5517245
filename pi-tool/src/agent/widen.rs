//! Widening a call's sandbox after it refused something: the host's hook
//! ([`WidenSandbox`], opt-in with [`RunPolicy::widen_sandbox`](super::RunPolicy)), and the
//! one re-run it may grant.
//!
//! A call runs inside a [`SandboxScope`]. When its sandboxed processes were refused
//! something a profile can allow ([`Sandbox::widening_for`], within its rule: never `/`,
//! the host's home or what the host marked never widened), the hook is asked, with an
//! [`ApprovalRequest`] written here that names what was refused, what widening is asked,
//! that the first run may have changed files inside the root, and, for a tool not
//! declared idempotent, that running it again repeats what it did. If the hook answers
//! [`Allow`](BeforeToolCallResult::Allow), the call runs once more with exactly those
//! widenings, and the model reads the second run's result with a line saying so. Any
//! other answer (a block, an `Ask` nothing here can wait for, an error, a panic, an
//! abort) leaves the first run's result as it was: the model reads the violation.
//!
//! The question and its answer are `tracing` events (target `pi_tool::sandbox`) in the
//! call's `execute_tool` span.
//!
//! [`Sandbox::widening_for`]: pi_tool_core::safety::Sandbox::widening_for

use std::panic::AssertUnwindSafe;

use async_trait::async_trait;
use futures::FutureExt;
use serde_json::Value;

use super::hooks::{ApprovalRequest, BeforeToolCallResult};
use crate::model::ToolCall;
use pi_tool_core::safety::{SandboxScope, SandboxViolation, Widening};
use pi_tool_core::{AbortSignal, Content, JsonToolResult, ToolAnnotations, ToolError};

/// How many characters of the arguments the question shows.
const SHOWN_ARGUMENTS: usize = 400;

/// What a [`WidenSandbox`] hook sees: a call whose sandbox refused something that a
/// widening for this one call would allow.
#[non_exhaustive]
pub struct WidenSandboxContext<'a> {
    /// The call, as the model made it.
    pub tool_call: &'a ToolCall,
    /// The validated arguments both runs receive.
    pub args: &'a Value,
    /// The tool's declared effects (`idempotent` says whether a re-run is harmless).
    pub annotations: &'a ToolAnnotations,
    /// What the sandbox refused in the first run.
    pub violations: &'a [SandboxViolation],
    /// What the re-run would be granted, and nothing else.
    pub widenings: &'a [Widening],
    /// The question to put to a person: what was refused, what is asked, and what a
    /// re-run means (partial effects of the first run; no idempotence declared).
    pub request: &'a ApprovalRequest,
    /// The call that made this one through its context; `None` for a call the model
    /// made.
    pub parent_tool_call_id: Option<&'a str>,
}

/// Decides whether a call whose sandbox refused something runs again once with its
/// sandbox widened (see the module docs). [`ApprovalPolicy`](super::ApprovalPolicy)
/// implements it by asking its UI.
///
/// Only [`BeforeToolCallResult::Allow`] grants the re-run. [`BeforeToolCallResult::Ask`]
/// cannot suspend the run: the call has already run once, so the question counts as
/// unanswered and the model reads the first run's violation.
///
/// A host's own rule, without a person: let a call read the shared datasets, nothing
/// else.
///
/// ```
/// use std::sync::Arc;
/// use pi_tool::agent::{BeforeToolCallResult, RunPolicy, WidenSandbox, WidenSandboxContext};
/// use pi_tool::safety::Widening;
/// use pi_tool::{AbortSignal, ToolError, async_trait};
///
/// struct Datasets;
///
/// #[async_trait]
/// impl WidenSandbox for Datasets {
///     async fn widen_sandbox(
///         &self,
///         ctx: WidenSandboxContext<'_>,
///         _signal: &AbortSignal,
///     ) -> Result<BeforeToolCallResult, ToolError> {
///         let reads_datasets = ctx.widenings.iter().all(|widening| {
///             matches!(widening, Widening::Read(path) if path.starts_with("/srv/datasets"))
///         });
///         Ok(if reads_datasets {
///             BeforeToolCallResult::Allow
///         } else {
///             BeforeToolCallResult::block(format!("{} may only read /srv/datasets", ctx.tool_call.name))
///         })
///     }
/// }
///
/// let policy = RunPolicy::new().widen_sandbox(Arc::new(Datasets));
/// # let _ = policy;
/// ```
#[async_trait]
pub trait WidenSandbox: Send + Sync + 'static {
    /// Answers one request to widen one call's sandbox.
    async fn widen_sandbox(
        &self,
        ctx: WidenSandboxContext<'_>,
        signal: &AbortSignal,
    ) -> Result<BeforeToolCallResult, ToolError>;
}

/// The call [`execute`] runs, as the hook sees it.
pub(crate) struct WideningCall<'a> {
    pub(crate) call: &'a ToolCall,
    pub(crate) args: &'a Value,
    pub(crate) annotations: &'a ToolAnnotations,
    pub(crate) parent_tool_call_id: Option<&'a str>,
    pub(crate) signal: &'a AbortSignal,
}

/// Runs the call (`run`, one execution) inside a [`SandboxScope`]; when its sandbox
/// refused something a widening would allow, asks `hook`, and on its approval runs it
/// once more with exactly that widening.
pub(crate) async fn execute<F, Fut>(
    hook: &dyn WidenSandbox,
    call: WideningCall<'_>,
    run: F,
) -> Result<JsonToolResult, ToolError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<JsonToolResult, ToolError>>,
{
    let first = SandboxScope::new();
    let outcome = first.run(run()).await;
    let widenings = first.widenings();
    let stopped = matches!(&outcome, Err(error) if error.is_abort());
    if widenings.is_empty() || stopped || call.signal.is_aborted() {
        return outcome;
    }
    let violations = first.violations();
    let request = request(&call, &violations, &widenings);
    let asked: Vec<String> = widenings.iter().map(Widening::to_string).collect();
    tracing::info!(
        target: "pi_tool::sandbox",
        tool = %call.call.name,
        widening = ?asked,
        "asking to widen the sandbox for this call: {}",
        asked.join(", ")
    );
    let ctx = WidenSandboxContext {
        tool_call: call.call,
        args: call.args,
        annotations: call.annotations,
        violations: &violations,
        widenings: &widenings,
        request: &request,
        parent_tool_call_id: call.parent_tool_call_id,
    };
    let answer = AssertUnwindSafe(hook.widen_sandbox(ctx, call.signal))
        .catch_unwind()
        .await;
    let decision = match &answer {
        Ok(Ok(BeforeToolCallResult::Allow)) => "approved",
        Ok(Ok(BeforeToolCallResult::Block { .. })) => "denied",
        Ok(Ok(_)) => "unanswered",
        Ok(Err(_)) => "hook failed",
        Err(_) => "hook panicked",
    };
    let approved = decision == "approved" && !call.signal.is_aborted();
    tracing::info!(
        target: "pi_tool::sandbox",
        tool = %call.call.name,
        decision,
        "the widening of the sandbox was {decision}"
    );
    if !approved {
        return outcome;
    }
    let again = SandboxScope::granting(widenings);
    let rerun = again.run(run()).await;
    let note = format!(
        "[sandbox] Approved for this call only: {}. The call ran a second time with that \
         widening; this is the second run's result (the first run may have changed files \
         inside the project root before it was refused).",
        asked.join(", ")
    );
    Ok(match rerun {
        Ok(mut result) => {
            match result
                .content
                .iter_mut()
                .rev()
                .find_map(|block| match block {
                    Content::Text { text } => Some(text),
                    _ => None,
                }) {
                Some(text) => {
                    text.push_str("\n\n");
                    text.push_str(&note);
                }
                None => result.content.push(Content::text(note)),
            }
            result
        }
        Err(error) => return Err(error.map_message(|message| format!("{message}\n\n{note}"))),
    })
}

/// The question: what was refused, what is asked, what a re-run means.
fn request(
    call: &WideningCall<'_>,
    violations: &[SandboxViolation],
    widenings: &[Widening],
) -> ApprovalRequest {
    let name = &call.call.name;
    let mut message = format!("{name} was refused by its sandbox:\n");
    for violation in violations {
        message.push_str(&format!("- {violation}\n"));
    }
    message.push_str("Run it once more, for this call only, with its sandbox widened to:\n");
    for widening in widenings {
        message.push_str(&format!("- {widening}\n"));
    }
    message.push_str(
        "The first run may already have changed files inside the project root; they stay \
         as they are.\n",
    );
    let idempotent = call.annotations.is_read_only() || call.annotations.idempotent == Some(true);
    if !idempotent {
        message.push_str(&format!(
            "{name} is not declared idempotent: running it again repeats everything the \
             first run did.\n"
        ));
    }
    let mut shown = call.args.to_string();
    if shown.chars().count() > SHOWN_ARGUMENTS {
        shown = shown.chars().take(SHOWN_ARGUMENTS).collect::<String>() + "…";
    }
    message.push_str(&format!("Arguments: {shown}"));
    ApprovalRequest::new(format!("Widen the sandbox of {name}?"), message)
}
