//! Extensions: code that registers tools and handlers on a session.
//!
//! An [`Extension`] is loaded once, in the order the builder was given: its
//! [`register`](Extension::register) step receives an [`ExtensionApi`] and registers
//! tools ([`ExtensionApi::register_tool`]) and handlers (`on_tool_call`,
//! `on_tool_result`, `on_tool_execution`). The API is a cheap, cloneable handle: keep a
//! clone in a tool to register more tools or change the active set while the session
//! runs. During loading the session does not exist yet, so the action methods
//! (`active_tool_names`, `set_active_tools`) fail with Pi's message.
//!
//! Every extension's tools are owned by `<inline:NAME>`; a name registered by two
//! owners makes the session refuse to build (or the late registration fail).

use std::sync::{Arc, Weak};

use super::SessionError;
use super::event::ActiveToolsChange;
use super::handlers::{ToolCallHandler, ToolExecutionHandler, ToolResultHandler};
use super::shared::Shared;
use crate::pack::ToolOwner;
use pi_tool_core::IntoAgentTool;

/// Pi's message for an action method called while extensions load.
pub const NOT_INITIALIZED_MESSAGE: &str =
    "Extension runtime not initialized. Action methods cannot be called during extension loading.";

/// An extension (Pi's extension factory).
pub trait Extension: Send + Sync + 'static {
    /// The extension's name; its tools are owned by `<inline:NAME>`.
    fn name(&self) -> &str;

    /// Registers tools and handlers. An error stops the session from building.
    fn register(&self, api: &ExtensionApi) -> Result<(), SessionError>;
}

/// An extension made from a name and a registration closure.
pub struct FnExtension<F> {
    name: String,
    register: F,
}

impl<F> FnExtension<F>
where
    F: Fn(&ExtensionApi) -> Result<(), SessionError> + Send + Sync + 'static,
{
    /// An extension named `name` whose registration step is `register`.
    pub fn new(name: impl Into<String>, register: F) -> Self {
        FnExtension {
            name: name.into(),
            register,
        }
    }
}

impl<F> Extension for FnExtension<F>
where
    F: Fn(&ExtensionApi) -> Result<(), SessionError> + Send + Sync + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn register(&self, api: &ExtensionApi) -> Result<(), SessionError> {
        (self.register)(api)
    }
}

/// The handle an extension registers through (Pi's `pi`). Cheap to clone.
#[derive(Clone)]
pub struct ExtensionApi {
    pub(crate) shared: Weak<Shared>,
    pub(crate) index: usize,
    pub(crate) owner: ToolOwner,
}

impl std::fmt::Debug for ExtensionApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionApi")
            .field("owner", &self.owner)
            .finish()
    }
}

impl ExtensionApi {
    fn shared(&self) -> Result<Arc<Shared>, SessionError> {
        match self.shared.upgrade() {
            Some(shared) if !shared.is_disposed() => Ok(shared),
            _ => Err(SessionError::Disposed),
        }
    }

    /// The owner name of this extension's tools (`<inline:NAME>`).
    pub fn owner(&self) -> &ToolOwner {
        &self.owner
    }

    /// Registers a tool (Pi's `pi.registerTool`). Registering a name this extension
    /// already registered replaces that tool; a name another owner registered is an
    /// error. At run time an allowed new tool becomes active immediately.
    pub fn register_tool(&self, tool: impl IntoAgentTool) -> Result<(), SessionError> {
        self.shared()?
            .register_tool(self.index, tool.into_agent_tool())
    }

    /// Adds a `tool_call` handler (runs after the handlers registered before it).
    pub fn on_tool_call(&self, handler: impl ToolCallHandler) -> Result<(), SessionError> {
        let handler: Arc<dyn ToolCallHandler> = Arc::new(handler);
        self.shared()?
            .with_extension(self.index, |slot| slot.tool_call.push(handler));
        Ok(())
    }

    /// Adds a `tool_result` handler.
    pub fn on_tool_result(&self, handler: impl ToolResultHandler) -> Result<(), SessionError> {
        let handler: Arc<dyn ToolResultHandler> = Arc::new(handler);
        self.shared()?
            .with_extension(self.index, |slot| slot.tool_result.push(handler));
        Ok(())
    }

    /// Adds a handler for the `tool_execution_start`, `_update` and `_end` events.
    pub fn on_tool_execution(
        &self,
        handler: impl ToolExecutionHandler,
    ) -> Result<(), SessionError> {
        let handler: Arc<dyn ToolExecutionHandler> = Arc::new(handler);
        self.shared()?
            .with_extension(self.index, |slot| slot.tool_execution.push(handler));
        Ok(())
    }

    /// The active tool names (Pi's `pi.getActiveTools()`); an error during loading.
    #[doc(alias = "getActiveTools")]
    pub fn active_tool_names(&self) -> Result<Vec<String>, SessionError> {
        let shared = self.shared()?;
        if !shared.is_ready() {
            return Err(SessionError::NotInitialized);
        }
        Ok(shared.active_tool_names())
    }

    /// Sets the active tools by name (Pi's `pi.setActiveTools`); see
    /// [`AgentSession::set_active_tools`](super::AgentSession::set_active_tools).
    #[doc(alias = "setActiveTools")]
    pub fn set_active_tools<I, S>(&self, names: I) -> Result<ActiveToolsChange, SessionError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let shared = self.shared()?;
        if !shared.is_ready() {
            return Err(SessionError::NotInitialized);
        }
        Ok(shared.set_active_tools(names))
    }
}
