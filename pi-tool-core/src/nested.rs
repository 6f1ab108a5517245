//! Nested calls: a tool that calls other tools through its context (Pi 0.99's
//! `ctx.executeTool()`, `ExtensionContext::call_tool`, which names this module, not the
//! reverse).
//!
//! The core defines the contract; each host implements it with its own full call path:
//!
//! * A tool declares what it may call, its **reach** ([`ToolSpec::reaches`](crate::ToolSpec),
//!   `#[pi_tool(reaches = ["read", "grep"])]`). A tool without a reach cannot make nested
//!   calls, and a nested call to a tool outside the reach is refused before the host sees it.
//! * A host that runs a tool with a reach gives its context a [`CallScope`]: the host's
//!   [`ToolCaller`], the outer call's id and tool, its depth, the tools above it, and its
//!   abort signal.
//! * A nested call then goes through the host's [`ToolCaller::call_tool`], which runs it
//!   through **everything a direct call goes through** in that host (hooks and handlers,
//!   argument limits, validation, timeout, redaction, result budget, span, limits).
//!
//! What the core checks before the host sees a call: the reach, the depth
//! ([`DEFAULT_MAX_DEPTH`], or the host's [`ToolCaller::max_depth`]) and cycles (a tool
//! that would call itself through its own nested calls, `a → b → a`). Each refusal is a
//! [`ToolError`] whose text the outer tool can hand on to the model as it is.
//!
//! **Abort.** A nested call's signal is a child of the outer call's: aborting the run or
//! the outer call aborts it, and so does dropping the outer call's future (a timeout, or
//! the outer tool giving up on the call), through a guard held by
//! `ExtensionContext::call_tool`.
//!
//! **A pending decision.** A nested call cannot suspend the outer run: the outer tool is
//! in the middle of its execution. A nested call whose hooks answer "ask" (a pending
//! approval) is blocked, with the request's `unanswered` text as its error, on every host.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use serde_json::Value;

use crate::abort::AbortSignal;
use crate::error::{ToolError, ToolErrorKind};
use crate::result::JsonToolResult;

/// How deep nested calls go unless a host says otherwise: a direct call is depth 0, its
/// nested calls depth 1, and a call at depth 8 cannot make nested calls.
pub const DEFAULT_MAX_DEPTH: usize = 8;

/// A host's path for nested calls: it runs a [`NestedCall`] through everything a direct
/// call goes through in that host. The agent, the session and `PackServer` each
/// implement it; a tool reaches it through
/// `ExtensionContext::call_tool`.
#[async_trait]
pub trait ToolCaller: Send + Sync + 'static {
    /// Runs one nested call: `Ok` with the result the outer tool reads, or the
    /// [`ToolError`] carrying the text the model would have read had the call been direct
    /// (blocked, invalid, failed, timed out, aborted; redacted where the host redacts).
    async fn call_tool(&self, call: NestedCall) -> Result<JsonToolResult, ToolError>;

    /// The deepest a nested call may be (default [`DEFAULT_MAX_DEPTH`]).
    fn max_depth(&self) -> usize {
        DEFAULT_MAX_DEPTH
    }
}

/// One nested call as a host's [`ToolCaller`] receives it; reach, depth and cycles are
/// already checked.
#[derive(Debug)]
#[non_exhaustive]
pub struct NestedCall {
    /// The nested call's own id: the outer call's id, `/`, and a number counting the
    /// outer call's nested calls from 1 (`call_1/2`).
    pub id: String,
    /// The tool to call.
    pub name: String,
    /// Its raw arguments, checked by the host as the model's are.
    pub arguments: Value,
    /// The id of the outer call (Pi's `toolCallId` of the tool making the call).
    pub parent_id: Arc<str>,
    /// The outer call's tool.
    pub parent_name: Arc<str>,
    /// The nested call's depth: 1 for a call made by a direct call.
    pub depth: usize,
    /// The tools above the nested call, from the direct call down to the outer call.
    pub ancestors: Arc<[Arc<str>]>,
    /// Aborted with the outer call (its run, its timeout, or its dropped future).
    pub signal: AbortSignal,
}

impl NestedCall {
    /// The scope of the nested call's own execution, for a host whose nested call runs a
    /// tool with a reach: the same `caller`, this call as the parent, one level deeper.
    pub fn scope(&self, caller: Arc<dyn ToolCaller>, reaches: &[String]) -> CallScope {
        let mut ancestors = Vec::with_capacity(self.ancestors.len() + 1);
        ancestors.extend(self.ancestors.iter().cloned());
        ancestors.push(Arc::from(self.name.as_str()));
        CallScope {
            caller,
            call_id: Arc::from(self.id.as_str()),
            tool_name: Arc::from(self.name.as_str()),
            reaches: reaches.into(),
            depth: self.depth,
            ancestors: ancestors.into(),
            signal: self.signal.clone(),
            next: AtomicU64::new(1),
        }
    }
}

/// What a host gives the context of a call whose tool has a reach: where nested calls
/// go and what they descend from.
pub struct CallScope {
    caller: Arc<dyn ToolCaller>,
    call_id: Arc<str>,
    tool_name: Arc<str>,
    reaches: Arc<[String]>,
    depth: usize,
    /// From the direct call down to this one, this call's tool included.
    ancestors: Arc<[Arc<str>]>,
    signal: AbortSignal,
    next: AtomicU64,
}

impl fmt::Debug for CallScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallScope")
            .field("call_id", &self.call_id)
            .field("tool_name", &self.tool_name)
            .field("reaches", &self.reaches)
            .field("depth", &self.depth)
            .finish_non_exhaustive()
    }
}

impl CallScope {
    /// The scope of a direct call (depth 0) of `tool_name` with id `call_id`, whose tool
    /// reaches `reaches`, run with `signal`.
    pub fn direct(
        caller: Arc<dyn ToolCaller>,
        call_id: &str,
        tool_name: &str,
        reaches: &[String],
        signal: AbortSignal,
    ) -> Self {
        let tool_name: Arc<str> = Arc::from(tool_name);
        CallScope {
            caller,
            call_id: Arc::from(call_id),
            reaches: reaches.into(),
            depth: 0,
            ancestors: Arc::from([tool_name.clone()]),
            tool_name,
            signal,
            next: AtomicU64::new(1),
        }
    }

    /// The id of the call this scope belongs to (the parent of its nested calls).
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The tool of the call this scope belongs to.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// The tools this call may call.
    #[doc(alias = "reachesTools")]
    pub fn reaches(&self) -> &[String] {
        &self.reaches
    }

    /// The call's depth: 0 for a direct call.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Checks a nested call of `name` against the reach, the depth and the tools above,
    /// and builds it; the error is what the outer tool reads.
    pub fn nested(&self, name: &str, arguments: Value) -> Result<NestedCall, ToolError> {
        if !self.reaches.iter().any(|r| r == name) {
            let reach = if self.reaches.is_empty() {
                format!(
                    "{} declares no reach, so it cannot call tools; declare the tools it calls with #[pi_tool(reaches = [\"{name}\"])]",
                    self.tool_name
                )
            } else {
                format!(
                    "{} reaches only {}",
                    self.tool_name,
                    quoted_list(&self.reaches)
                )
            };
            return Err(ToolError::new(format!(
                "Nested call to {name} refused: {reach}"
            )));
        }
        let depth = self.depth + 1;
        let max = self.caller.max_depth();
        if depth > max {
            return Err(ToolError::new(format!(
                "Nested call to {name} refused: calls nest {max} deep at most ({} → {name})",
                chain(&self.ancestors)
            )));
        }
        if self.ancestors.iter().any(|a| &**a == name) {
            return Err(ToolError::new(format!(
                "Nested call to {name} refused: it would call itself ({} → {name})",
                chain(&self.ancestors)
            )));
        }
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        Ok(NestedCall {
            id: format!("{}/{number}", self.call_id),
            name: name.to_owned(),
            arguments,
            parent_id: self.call_id.clone(),
            parent_name: self.tool_name.clone(),
            depth,
            ancestors: self.ancestors.clone(),
            signal: self.signal.clone(),
        })
    }

    /// Runs a checked nested call through the host, aborting it if the future is dropped
    /// before it ends (the outer call timed out or gave up).
    pub(crate) async fn run(&self, mut call: NestedCall) -> Result<JsonToolResult, ToolError> {
        let (controller, signal) = call.signal.child();
        call.signal = signal;
        let guard = AbortOnDrop(Some(controller));
        let outcome = self.caller.call_tool(call).await;
        guard.disarm();
        outcome
    }
}

/// Aborts a nested call whose outer future went away before it ended.
struct AbortOnDrop(Option<crate::abort::AbortController>);

impl AbortOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(controller) = self.0.take() {
            controller.abort();
        }
    }
}

fn quoted_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn chain(ancestors: &[Arc<str>]) -> String {
    ancestors
        .iter()
        .map(|a| &**a)
        .collect::<Vec<_>>()
        .join(" → ")
}

/// The error a nested call's error result becomes for the outer tool: the text the model
/// would have read, and the kind its failure had.
pub fn error_of_result(result: &JsonToolResult, kind: ToolErrorKind) -> ToolError {
    ToolError::with_kind(kind, result.text_content())
}

/// The error of `call_tool` on a context that has no host to call tools in.
pub(crate) fn no_host(name: &str) -> ToolError {
    ToolError::new(format!(
        "Nested call to {name} refused: this call has no reach: its tool declares none (declare the tools it calls, `#[pi_tool(reaches = [\"{name}\"])]`), or it runs outside a host of nested calls (an Agent, an AgentSession, a PackServer)"
    ))
}
