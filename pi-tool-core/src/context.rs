//! `ExtensionContext`: the session a tool call runs in (Pi's fifth `execute` argument, `ctx`).
//!
//! A context tells a tool where and how it runs: the working directory, the host mode
//! (`tui`, `rpc`, `json`, `print`), whether a user interface is attached, and a UI handle
//! to ask the user. As in Pi, [`wrap_tool_definition`](crate::wrap_tool_definition) builds
//! a fresh context for every execute call; do not keep one beyond the call.
//!
//! A context made by an `AgentSession` (pi-tool's session) is also a live
//! view of its session: [`is_idle`](ExtensionContext::is_idle),
//! [`model`](ExtensionContext::model), [`system_prompt`](ExtensionContext::system_prompt),
//! [`live_signal`](ExtensionContext::live_signal) and [`abort`](ExtensionContext::abort)
//! read the session at the moment they are called (Pi's lazy getters). Once the session
//! is disposed (or dropped) every live getter returns [`ContextError::Stale`], and
//! [`ui`](ExtensionContext::ui) declines every question, so a context kept past its
//! session can never reach a user interface or a run that no longer exists.
//! A context built with [`ExtensionContext::builder`] (tests, tools outside sessions)
//! belongs to no session: it is never stale, and its live getters report what the
//! builder was given.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::abort::AbortSignal;
use crate::error::ToolError;
use crate::model::Model;
use crate::nested::{self, CallScope};
use crate::result::JsonToolResult;

/// Pi's text for a context used after its session was disposed or replaced.
pub const STALE_CONTEXT_MESSAGE: &str = "This extension ctx is stale after session replacement or reload. \
Use the ctx passed to the current tool call or handler instead of one kept from an earlier session.";

/// Why a live context getter failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContextError {
    /// The session this context belongs to was disposed (or dropped).
    Stale,
}

impl fmt::Display for ContextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContextError::Stale => f.write_str(STALE_CONTEXT_MESSAGE),
        }
    }
}

impl std::error::Error for ContextError {}

/// The live session behind a session-made context (implemented by the session).
#[doc(hidden)]
pub trait SessionLink: Send + Sync + 'static {
    /// `false` once the session is disposed or gone.
    fn is_live(&self) -> bool;
    /// Whether no run is active.
    fn is_idle(&self) -> bool;
    /// The session's current model.
    fn model(&self) -> Model;
    /// The session's current system prompt.
    fn system_prompt(&self) -> String;
    /// The active run's signal.
    fn signal(&self) -> Option<AbortSignal>;
    /// Aborts the active run.
    fn abort(&self);
}

/// The host mode a session runs in (Pi's `ctx.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Mode {
    /// Interactive terminal UI.
    Tui,
    /// JSON-RPC over stdio, with a UI bridge.
    Rpc,
    /// One-shot run printing JSON events.
    Json,
    /// One-shot run printing text; the SDK default.
    #[default]
    Print,
}

impl Mode {
    /// Pi's spelling of the mode.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Tui => "tui",
            Mode::Rpc => "rpc",
            Mode::Json => "json",
            Mode::Print => "print",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "tui" => Ok(Mode::Tui),
            "rpc" => Ok(Mode::Rpc),
            "json" => Ok(Mode::Json),
            "print" => Ok(Mode::Print),
            other => Err(format!(
                "unknown mode `{other}`: expected `tui`, `rpc`, `json` or `print`"
            )),
        }
    }
}

/// How loud a [`ExtensionUi::notify`] message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum NotifyLevel {
    /// Informational.
    #[default]
    Info,
    /// Something the user should look at.
    Warning,
    /// Something failed.
    Error,
}

/// The user interface a host attaches (Pi's `ctx.ui`). Every method is pluggable; the
/// defaults behave like Pi's no-UI context: `confirm` is `false`, `select` and `input`
/// are `None`, `notify` does nothing.
#[async_trait]
pub trait ExtensionUi: Send + Sync + 'static {
    /// Asks a yes/no question.
    async fn confirm(&self, title: &str, message: &str) -> bool {
        let _ = (title, message);
        false
    }

    /// Asks the user to pick one of `options`.
    async fn select(&self, title: &str, options: &[String]) -> Option<String> {
        let _ = (title, options);
        None
    }

    /// Asks for free text.
    async fn input(&self, title: &str, placeholder: Option<&str>) -> Option<String> {
        let _ = (title, placeholder);
        None
    }

    /// Shows a message without waiting for an answer.
    fn notify(&self, message: &str, level: NotifyLevel) {
        let _ = (message, level);
    }
}

/// The UI of a context without a user interface: every question is declined.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoUi;

impl ExtensionUi for NoUi {}

struct Inner {
    cwd: PathBuf,
    mode: Mode,
    ui: Option<Arc<dyn ExtensionUi>>,
    signal: Option<AbortSignal>,
    model: Option<Model>,
    system_prompt: Option<String>,
    link: Option<Arc<dyn SessionLink>>,
}

/// What a context-aware tool knows about its session (Pi's `ExtensionContext`), and
/// where its nested calls go ([`call_tool`](Self::call_tool)).
#[derive(Clone)]
pub struct ExtensionContext {
    inner: Arc<Inner>,
    /// Set by the host for a call whose tool has a reach: one per call, so it sits
    /// beside the shared part rather than in it.
    scope: Option<Arc<CallScope>>,
}

impl fmt::Debug for ExtensionContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExtensionContext")
            .field("cwd", &self.inner.cwd)
            .field("mode", &self.inner.mode)
            .field("has_ui", &self.has_ui())
            .field("scope", &self.scope)
            .finish()
    }
}

impl ExtensionContext {
    /// Starts a context for `cwd`, in print mode, without UI.
    pub fn builder(cwd: impl Into<PathBuf>) -> ExtensionContextBuilder {
        ExtensionContextBuilder {
            cwd: cwd.into(),
            mode: Mode::Print,
            ui: None,
            signal: None,
            model: None,
            system_prompt: None,
            link: None,
        }
    }

    /// A print-mode context without UI for the process's current directory.
    pub fn detached() -> Self {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        Self::builder(cwd).build()
    }

    /// The working directory of the session (Pi's `ctx.cwd`).
    pub fn cwd(&self) -> &Path {
        &self.inner.cwd
    }

    /// The host mode (Pi's `ctx.mode`).
    pub fn mode(&self) -> Mode {
        self.inner.mode
    }

    /// Whether a user interface is attached (Pi's `ctx.hasUI`).
    pub fn has_ui(&self) -> bool {
        self.inner.ui.is_some()
    }

    /// The UI handle; without a UI it declines every question (Pi's no-op UI). A stale
    /// context (its session was disposed) also declines every question.
    pub fn ui(&self) -> &dyn ExtensionUi {
        match &self.inner.ui {
            Some(ui) if self.is_live() => ui.as_ref(),
            _ => &NoUi,
        }
    }

    /// The abort signal of the run this context was made in, if one was running. For the
    /// signal of whatever run is active now, see [`live_signal`](Self::live_signal).
    pub fn signal(&self) -> Option<&AbortSignal> {
        self.inner.signal.as_ref()
    }

    /// `false` once the session this context belongs to was disposed. Contexts built
    /// with [`ExtensionContext::builder`] are always live.
    pub fn is_live(&self) -> bool {
        self.inner.link.as_ref().is_none_or(|link| link.is_live())
    }

    /// `Ok` while the context is live; [`ContextError::Stale`] after its session was
    /// disposed.
    pub fn ensure_live(&self) -> Result<(), ContextError> {
        if self.is_live() {
            Ok(())
        } else {
            Err(ContextError::Stale)
        }
    }

    fn live(&self) -> Result<Option<&dyn SessionLink>, ContextError> {
        match &self.inner.link {
            None => Ok(None),
            Some(link) if link.is_live() => Ok(Some(link.as_ref())),
            Some(_) => Err(ContextError::Stale),
        }
    }

    /// Whether no run is active now (Pi's `ctx.isIdle()`). Outside a session: whether
    /// the builder was given no signal.
    pub fn is_idle(&self) -> Result<bool, ContextError> {
        Ok(match self.live()? {
            Some(link) => link.is_idle(),
            None => self.inner.signal.is_none(),
        })
    }

    /// The signal of the run active now (Pi's live `ctx.signal`): `None` when idle.
    pub fn live_signal(&self) -> Result<Option<AbortSignal>, ContextError> {
        Ok(match self.live()? {
            Some(link) => link.signal(),
            None => self.inner.signal.clone(),
        })
    }

    /// The session's current model (Pi's `ctx.model`); outside a session, the builder's.
    pub fn model(&self) -> Result<Option<Model>, ContextError> {
        Ok(match self.live()? {
            Some(link) => Some(link.model()),
            None => self.inner.model.clone(),
        })
    }

    /// The session's current system prompt (Pi's `ctx.getSystemPrompt()`); outside a
    /// session, the builder's.
    pub fn system_prompt(&self) -> Result<Option<String>, ContextError> {
        Ok(match self.live()? {
            Some(link) => Some(link.system_prompt()),
            None => self.inner.system_prompt.clone(),
        })
    }

    /// Calls another tool from inside this call (Pi's `ctx.executeTool()`): `name` with
    /// JSON `arguments`, through everything a direct call goes through in the host that
    /// runs this call (its hooks and handlers, so an approval policy asks; argument
    /// limits; validation with Pi's texts; timeout; redaction; result budget; a span
    /// that is a child of this call's; its concurrency classes and run limits). The
    /// result goes to the calling tool, not to the model.
    ///
    /// The error carries the text the model would have read had the call been direct:
    /// blocked, invalid, failed, timed out or aborted. The call is refused (an error,
    /// nothing runs) when `name` is not in the calling tool's reach
    /// ([`ToolSpec::reaches`](crate::ToolSpec)), when it would nest deeper than the
    /// host allows (8 by default), when it would call a tool already above it (`a → b →
    /// a`), or when this context belongs to no host that runs nested calls. A pending
    /// decision (a hook answering "ask") blocks a nested call: the outer call cannot be
    /// suspended in the middle of its execution.
    ///
    /// Aborting the outer call aborts its nested calls, and so does dropping this future.
    #[doc(alias = "executeTool")]
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: serde_json::Value,
    ) -> Result<JsonToolResult, ToolError> {
        let Some(scope) = &self.scope else {
            return Err(nested::no_host(name));
        };
        let call = scope.nested(name, arguments)?;
        scope.run(call).await
    }

    /// The nested-call scope the host gave this call, if its tool has a reach.
    pub fn call_scope(&self) -> Option<&Arc<CallScope>> {
        self.scope.as_ref()
    }

    /// This context, with nested calls going through `scope` (what a host does for a
    /// call whose tool has a reach).
    #[must_use]
    pub fn with_call_scope(mut self, scope: Arc<CallScope>) -> Self {
        self.scope = Some(scope);
        self
    }

    /// Aborts the session's active run (Pi's `ctx.abort()`). Outside a session this does
    /// nothing: the builder's signal belongs to whoever made it.
    pub fn abort(&self) -> Result<(), ContextError> {
        if let Some(link) = self.live()? {
            link.abort();
        }
        Ok(())
    }
}

/// Builds an [`ExtensionContext`].
pub struct ExtensionContextBuilder {
    cwd: PathBuf,
    mode: Mode,
    ui: Option<Arc<dyn ExtensionUi>>,
    signal: Option<AbortSignal>,
    model: Option<Model>,
    system_prompt: Option<String>,
    link: Option<Arc<dyn SessionLink>>,
}

impl ExtensionContextBuilder {
    /// Sets the model [`ExtensionContext::model`] reports.
    #[must_use]
    pub fn model(mut self, model: Model) -> Self {
        self.model = Some(model);
        self
    }

    /// Sets the prompt [`ExtensionContext::system_prompt`] reports.
    #[must_use]
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Makes the context a live view of a session.
    #[doc(hidden)]
    pub fn link(mut self, link: Arc<dyn SessionLink>) -> Self {
        self.link = Some(link);
        self
    }

    /// Sets the host mode.
    #[must_use]
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Attaches a user interface; `has_ui()` becomes true.
    #[must_use]
    pub fn ui(mut self, ui: Arc<dyn ExtensionUi>) -> Self {
        self.ui = Some(ui);
        self
    }

    /// Sets the run's abort signal.
    #[must_use]
    pub fn signal(mut self, signal: AbortSignal) -> Self {
        self.signal = Some(signal);
        self
    }

    /// Finishes the context.
    pub fn build(self) -> ExtensionContext {
        ExtensionContext {
            inner: Arc::new(Inner {
                cwd: self.cwd,
                mode: self.mode,
                ui: self.ui,
                signal: self.signal,
                model: self.model,
                system_prompt: self.system_prompt,
                link: self.link,
            }),
            scope: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Yes;
    #[async_trait]
    impl ExtensionUi for Yes {
        async fn confirm(&self, _: &str, _: &str) -> bool {
            true
        }
    }

    #[tokio::test]
    async fn without_ui_every_question_is_declined() {
        let ctx = ExtensionContext::builder("/tmp").build();
        assert!(!ctx.has_ui());
        assert_eq!(ctx.mode(), Mode::Print);
        assert!(!ctx.ui().confirm("t", "m").await);
        assert_eq!(ctx.ui().select("t", &["a".into()]).await, None);
        assert_eq!(ctx.ui().input("t", None).await, None);
    }

    #[tokio::test]
    async fn a_ui_is_pluggable() {
        let ctx = ExtensionContext::builder("/tmp")
            .mode(Mode::Tui)
            .ui(Arc::new(Yes))
            .build();
        assert!(ctx.has_ui());
        assert!(ctx.ui().confirm("t", "m").await);
        assert_eq!("rpc".parse::<Mode>().unwrap(), Mode::Rpc);
    }
}
