//! A ready approval policy for the permission gate, driven by declared effects
//! ([`ToolAnnotations`]).
//!
//! The rule is [`ToolAnnotations::needs_approval`]: never ask for a read-only tool; ask
//! before a destructive or open-world one, reading what a tool did not declare with MCP's
//! defaults (destructive, open world). So a tool that declares nothing is asked about,
//! like an unannotated MCP tool in a careful client.
//!
//! Asking goes through [`ExtensionUi::confirm`]. Without a UI the policy does what the
//! Pi's custom-tool page's gate does: it blocks, with a reason the model can act on
//! (`delete_file requires interactive approval`); [`WithoutUi::Allow`] lets such calls
//! through instead (a trusted batch job). A blocked or declined call becomes an error
//! result, so the model can explain the refusal or choose another action.
//!
//! The same policy installs in two places:
//! * as the agent's [`BeforeToolCall`] hook (`RunPolicy::before_tool_call`): it finds
//!   the called tool's annotations in the run's context, and asks the UI given with
//!   [`ApprovalPolicy::ui`];
//! * as a session `tool_call` handler (`session::ToolCallHandler`, implemented in
//!   `session`): it asks the session's UI
//!   (`ctx.ui()`, `ctx.has_ui()`), and reads annotations from the tools given with
//!   [`ApprovalPolicy::tools`] (a handler sees the call, not the tool).
//!
//! A question waits for the user as long as the run lives: an abort ends the wait and
//! blocks the call.
//!
//! The policy also answers a request to widen a call's sandbox after it refused
//! something ([`WidenSandbox`], installed with `RunPolicy::widen_sandbox`): it asks its
//! UI the runtime's question, and never grants a widening without one.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::hooks::{ApprovalRequest, BeforeToolCall, BeforeToolCallContext, BeforeToolCallResult};
use super::widen::{WidenSandbox, WidenSandboxContext};
use crate::context::ExtensionUi;
use pi_tool_core::AbortSignal;
use pi_tool_core::ToolError;
use pi_tool_core::{AgentTool, ToolAnnotations};

/// What the policy does with a call that needs approval when there is no UI to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WithoutUi {
    /// Block it (Pi's custom-tool page's gate): `<tool> requires interactive approval`.
    #[default]
    Block,
    /// Let it run.
    Allow,
}

/// How many characters of the arguments the confirmation shows.
const SHOWN_ARGUMENTS: usize = 400;

/// Asks before destructive or open-world calls, never for read-only ones (see the
/// module docs).
///
/// ```
/// use std::sync::Arc;
/// use pi_tool::agent::{ApprovalPolicy, RunPolicy, WithoutUi};
///
/// // In an agent without a UI: block what needs approval.
/// let policy = RunPolicy::default().before_tool_call(Arc::new(ApprovalPolicy::new()));
/// // A trusted job: let everything run, but keep the policy's rule for when a UI exists.
/// let _trusted = ApprovalPolicy::new().without_ui(WithoutUi::Allow);
/// # let _ = policy;
/// ```
#[derive(Clone, Default)]
pub struct ApprovalPolicy {
    ui: Option<Arc<dyn ExtensionUi>>,
    without_ui: WithoutUi,
    defer: bool,
    approval_ttl: Option<std::time::Duration>,
    pub(crate) known: HashMap<String, ToolAnnotations>,
}

impl std::fmt::Debug for ApprovalPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalPolicy")
            .field("has_ui", &self.ui.is_some())
            .field("without_ui", &self.without_ui)
            .field("defer", &self.defer)
            .field("approval_ttl", &self.approval_ttl)
            .field("known_tools", &self.known.len())
            .finish()
    }
}

impl ApprovalPolicy {
    /// No UI, blocking what needs approval.
    pub fn new() -> Self {
        Self::default()
    }

    /// The UI the agent hook asks (a session handler asks the session's UI instead).
    #[must_use]
    pub fn ui(mut self, ui: Arc<dyn ExtensionUi>) -> Self {
        self.ui = Some(ui);
        self
    }

    /// What to do when approval is needed and there is no UI.
    #[must_use]
    pub fn without_ui(mut self, decision: WithoutUi) -> Self {
        self.without_ui = decision;
        self
    }

    /// Answers [`BeforeToolCallResult::Ask`] instead of asking a UI in place: a durable
    /// run ([`DurableRuns`](super::DurableRuns)) suspends until a person decides, through
    /// the store, on exactly the call that will run (docs/durable-runs.md). A run
    /// without a store blocks the call with [`ApprovalRequest::unanswered`].
    #[must_use]
    pub fn defer(mut self) -> Self {
        self.defer = true;
        self
    }

    /// How long a deferred question stands (default: the store's, 24 hours).
    #[must_use]
    pub fn approval_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.approval_ttl = Some(ttl);
        self
    }

    /// The tools whose annotations a session handler reads; a call to a tool not given
    /// here counts as declaring nothing (and so is asked about).
    #[must_use]
    pub fn tools<'a>(mut self, tools: impl IntoIterator<Item = &'a Arc<dyn AgentTool>>) -> Self {
        for tool in tools {
            let spec = tool.spec();
            self.known
                .insert(spec.name.clone(), spec.annotations.clone());
        }
        self
    }

    /// The decision for one call to `tool_name` with `annotations`, asking `ui` if needed.
    pub(crate) async fn decide(
        &self,
        tool_name: &str,
        annotations: &ToolAnnotations,
        args: &Value,
        ui: Option<&dyn ExtensionUi>,
        signal: Option<&AbortSignal>,
    ) -> BeforeToolCallResult {
        if !annotations.needs_approval() {
            return BeforeToolCallResult::Allow;
        }
        if self.defer {
            let mut request = ApprovalRequest::new(
                format!("Run {tool_name}?"),
                confirmation(tool_name, annotations, args),
            );
            if let Some(ttl) = self.approval_ttl {
                request = request.expires_in(ttl);
            }
            return BeforeToolCallResult::Ask(request);
        }
        let Some(ui) = ui else {
            return match self.without_ui {
                WithoutUi::Allow => BeforeToolCallResult::Allow,
                WithoutUi::Block => BeforeToolCallResult::block(format!(
                    "{tool_name} requires interactive approval"
                )),
            };
        };
        let title = format!("Run {tool_name}?");
        let message = confirmation(tool_name, annotations, args);
        match confirm(ui, &title, &message, signal).await {
            Some(true) => BeforeToolCallResult::Allow,
            Some(false) => BeforeToolCallResult::block(format!("User denied {tool_name}")),
            None => BeforeToolCallResult::block(format!("The approval of {tool_name} was aborted")),
        }
    }
}

/// Asks `ui`; `None` when `signal` aborted first.
async fn confirm(
    ui: &dyn ExtensionUi,
    title: &str,
    message: &str,
    signal: Option<&AbortSignal>,
) -> Option<bool> {
    match signal {
        Some(signal) => {
            let asked = std::pin::pin!(ui.confirm(title, message));
            let aborted = std::pin::pin!(signal.aborted());
            match futures::future::select(asked, aborted).await {
                futures::future::Either::Left((answer, _)) => Some(answer),
                futures::future::Either::Right(((), _)) => None,
            }
        }
        None => Some(ui.confirm(title, message).await),
    }
}

/// What the user reads: why the call needs approval, and its arguments (shortened).
fn confirmation(tool_name: &str, annotations: &ToolAnnotations, args: &Value) -> String {
    let why = match (
        annotations.effective_destructive(),
        annotations.effective_open_world(),
    ) {
        (true, true) if annotations.destructive.is_none() && annotations.open_world.is_none() => {
            "declares no effects, so it may change anything and reach outside systems"
        }
        (true, true) => "may change or delete data and reaches outside systems",
        (true, false) => "may change or delete data",
        _ => "reaches outside systems",
    };
    let mut shown = args.to_string();
    if shown.chars().count() > SHOWN_ARGUMENTS {
        shown = shown.chars().take(SHOWN_ARGUMENTS).collect::<String>() + "…";
    }
    format!("{tool_name} {why}.\nArguments: {shown}")
}

#[async_trait]
impl BeforeToolCall for ApprovalPolicy {
    async fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext<'_>,
        signal: &AbortSignal,
    ) -> Result<BeforeToolCallResult, ToolError> {
        let name = &ctx.tool_call.name;
        let annotations = match ctx.context.find_tool(name) {
            Some(tool) => tool.spec().annotations.clone(),
            None => self.known.get(&**name).cloned().unwrap_or_default(),
        };
        Ok(self
            .decide(
                name,
                &annotations,
                ctx.args,
                self.ui.as_deref(),
                Some(signal),
            )
            .await)
    }
}

/// Asks to widen a call's sandbox as it asks before a call: through its UI, with the
/// question the runtime wrote (what was refused, what is asked, what a re-run means).
/// Deferred ([`defer`](ApprovalPolicy::defer)), it answers
/// [`Ask`](BeforeToolCallResult::Ask), which nothing can wait for once the call has run:
/// the model reads the violation. Without a UI it refuses, whatever
/// [`WithoutUi`] says: a widening is granted only by someone who read the question.
#[async_trait]
impl WidenSandbox for ApprovalPolicy {
    async fn widen_sandbox(
        &self,
        ctx: WidenSandboxContext<'_>,
        signal: &AbortSignal,
    ) -> Result<BeforeToolCallResult, ToolError> {
        let name = &ctx.tool_call.name;
        if self.defer {
            let mut request = ctx.request.clone();
            if let Some(ttl) = self.approval_ttl {
                request = request.expires_in(ttl);
            }
            return Ok(BeforeToolCallResult::Ask(request));
        }
        let Some(ui) = self.ui.as_deref() else {
            return Ok(BeforeToolCallResult::block(format!(
                "widening the sandbox of {name} requires interactive approval"
            )));
        };
        Ok(
            match confirm(ui, &ctx.request.title, &ctx.request.message, Some(signal)).await {
                Some(true) => BeforeToolCallResult::Allow,
                Some(false) => BeforeToolCallResult::block(format!(
                    "User denied widening the sandbox of {name}"
                )),
                None => BeforeToolCallResult::block(format!(
                    "The approval of widening the sandbox of {name} was aborted"
                )),
            },
        )
    }
}
