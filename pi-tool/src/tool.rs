//! The tool contract: the object-safe JSON-level traits hosts hold, the typed traits
//! macro-generated and hand-written tools implement, and the adapters between them.
//!
//! ```text
//!  #[pi_tool] async fn ──► TypedTool ─────────────┐ (adapter: deserialise params,
//!  (4 arguments)              │ (ctx ignored)     │  serialise details, once, generically)
//!                             ▼                   ▼
//!  #[pi_tool] async fn ──► TypedToolDefinition ─► ToolDefinition ──wrap_tool_definition──► AgentTool
//!  (+ ExtensionContext)                           (5 arguments, JSON)   (fresh ctx per call)  (4 arguments, JSON)
//! ```
//!
//! Hosts hold `Arc<dyn AgentTool>` (Pi's `AgentTool`), or `Arc<dyn ToolDefinition>` when
//! they can supply an [`ExtensionContext`] (Pi's `ToolDefinition` with `execute(..., ctx)`).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::abort::AbortSignal;
use crate::context::ExtensionContext;
use crate::details::JsonDetails;
use crate::error::{ToolError, ToolErrorKind};
use crate::mode::ToolExecutionMode;
use crate::result::{AgentToolResult, JsonToolResult};
use crate::schema::ToolSchema;
use crate::update::OnUpdate;

/// What every tool says about itself: the fields Pi's `AgentTool` and `ToolDefinition`
/// share. Built once per tool; hosts read it on every call without cost.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The protocol name the model calls (`get_weather`).
    pub name: String,
    /// A human-readable label for UIs (`Get weather`).
    pub label: String,
    /// The selection rule the model reads: when to call, what it takes, what it returns.
    pub description: String,
    /// The parameter schema, enforced before execute.
    pub parameters: Arc<ToolSchema>,
    /// `Some(Sequential)` serialises every batch that calls this tool.
    pub execution_mode: Option<ToolExecutionMode>,
    /// Ends a call that runs longer, with an error result.
    pub timeout: Option<Duration>,
    /// One line for the system prompt's "Available tools" section.
    pub prompt_snippet: Option<String>,
    /// Lines for the system prompt's "Guidelines" section.
    pub prompt_guidelines: Vec<String>,
    /// This tool's limits on its arguments' size, depth and string length, replacing
    /// the host's ([`RunPolicy::argument_limits`](crate::agent::RunPolicy)) when set.
    pub argument_limits: Option<crate::schema::ArgumentLimits>,
}

impl ToolSpec {
    /// A spec with the given name, description and schema; label = name, no options.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Arc<ToolSchema>,
    ) -> Self {
        let name = name.into();
        ToolSpec {
            label: name.clone(),
            name,
            description: description.into(),
            parameters,
            execution_mode: None,
            timeout: None,
            prompt_snippet: None,
            prompt_guidelines: Vec::new(),
            argument_limits: None,
        }
    }

    /// The spec of a typed tool, from its constants and its params type's schema.
    pub fn of<T: ToolMetadata>() -> Self {
        ToolSpec {
            name: T::NAME.to_owned(),
            label: T::LABEL.to_owned(),
            description: T::DESCRIPTION.to_owned(),
            parameters: ToolSchema::for_type::<T::Params>(),
            execution_mode: T::EXECUTION_MODE,
            timeout: T::TIMEOUT,
            prompt_snippet: T::PROMPT_SNIPPET.map(str::to_owned),
            prompt_guidelines: T::PROMPT_GUIDELINES
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            argument_limits: None,
        }
    }
}

/// The core four-argument contract at JSON level (Pi's `AgentTool.execute(toolCallId,
/// params, signal, onUpdate)`). Object safe: hosts hold `Arc<dyn AgentTool>`.
///
/// `params` has already passed [`AgentTool::prepare_arguments`] and the schema; a typed
/// tool still deserialises it, because hooks may change it without re-validation (as in Pi).
///
/// Arguments are borrowed all the way: the transcript keeps the model's arguments anyway,
/// and a tool cannot change what it borrows, so the copy Pi makes per call
/// (`structuredClone`) is made only where something does change them (a coercion, a
/// `prepare_arguments` shim, a `before_tool_call` hook).
#[async_trait]
pub trait AgentTool: Send + Sync + 'static {
    /// Name, label, description, schema and options.
    fn spec(&self) -> &ToolSpec;

    /// A compatibility shim run on the raw arguments before validation (Pi's
    /// `prepareArguments`): return `Cow::Owned` with the rewritten arguments. The default
    /// passes them through.
    fn prepare_arguments<'a>(&self, arguments: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
        Ok(Cow::Borrowed(arguments))
    }

    /// Runs the call.
    async fn execute(
        &self,
        tool_call_id: &str,
        params: &Value,
        signal: AbortSignal,
        on_update: OnUpdate<Option<JsonDetails>>,
    ) -> Result<JsonToolResult, ToolError>;

    /// The protocol name.
    fn name(&self) -> &str {
        &self.spec().name
    }

    /// Prepares and validates raw model arguments: the value execute would receive
    /// (borrowed when neither step changed it), or Pi's validation error text.
    fn check_arguments<'a>(&self, arguments: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
        let prepared = self.prepare_arguments(arguments)?;
        self.spec().parameters.validate_cow(self.name(), prepared)
    }
}

/// The five-argument contract at JSON level (Pi's `ToolDefinition`): execute also gets
/// the session's [`ExtensionContext`].
#[async_trait]
pub trait ToolDefinition: Send + Sync + 'static {
    /// Name, label, description, schema, options, prompt snippet and guidelines.
    fn spec(&self) -> &ToolSpec;

    /// See [`AgentTool::prepare_arguments`].
    fn prepare_arguments<'a>(&self, arguments: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
        Ok(Cow::Borrowed(arguments))
    }

    /// Runs the call with its context.
    async fn execute(
        &self,
        tool_call_id: &str,
        params: &Value,
        signal: AbortSignal,
        on_update: OnUpdate<Option<JsonDetails>>,
        ctx: ExtensionContext,
    ) -> Result<JsonToolResult, ToolError>;
}

/// The metadata of a typed tool, as constants (so that packs can check names at compile
/// time). `#[pi_tool]` implements it.
pub trait ToolMetadata: Send + Sync + 'static {
    /// The arguments, deserialised from the model's JSON.
    type Params: DeserializeOwned + JsonSchema + Send + 'static;
    /// The details of results and progress updates.
    type Details: Serialize + Send + 'static;
    /// The protocol name.
    const NAME: &'static str;
    /// The UI label.
    const LABEL: &'static str;
    /// The model-facing description.
    const DESCRIPTION: &'static str;
    /// The execution mode, if the tool sets one.
    const EXECUTION_MODE: Option<ToolExecutionMode> = None;
    /// The per-call timeout, if any.
    const TIMEOUT: Option<Duration> = None;
    /// The system-prompt snippet, if any.
    const PROMPT_SNIPPET: Option<&'static str> = None;
    /// The system-prompt guidelines.
    const PROMPT_GUIDELINES: &'static [&'static str] = &[];

    /// See [`AgentTool::prepare_arguments`].
    fn prepare_arguments<'a>(&self, arguments: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
        Ok(Cow::Borrowed(arguments))
    }
}

/// A typed four-argument tool (what `#[pi_tool]` generates for a function without an
/// `ExtensionContext` argument).
pub trait TypedTool: ToolMetadata {
    /// Runs the call with typed params and typed progress.
    fn execute(
        &self,
        tool_call_id: &str,
        params: Self::Params,
        signal: AbortSignal,
        on_update: OnUpdate<Self::Details>,
    ) -> impl Future<Output = Result<AgentToolResult<Self::Details>, ToolError>> + Send;
}

/// A typed five-argument tool (what `#[pi_tool]` generates for a function that takes an
/// `ExtensionContext`). Every [`TypedTool`] is one too, ignoring the context.
pub trait TypedToolDefinition: ToolMetadata {
    /// Runs the call with typed params, typed progress and the session context.
    fn execute_with_context(
        &self,
        tool_call_id: &str,
        params: Self::Params,
        signal: AbortSignal,
        on_update: OnUpdate<Self::Details>,
        ctx: ExtensionContext,
    ) -> impl Future<Output = Result<AgentToolResult<Self::Details>, ToolError>> + Send;
}

impl<T: TypedTool> TypedToolDefinition for T {
    fn execute_with_context(
        &self,
        tool_call_id: &str,
        params: Self::Params,
        signal: AbortSignal,
        on_update: OnUpdate<Self::Details>,
        _ctx: ExtensionContext,
    ) -> impl Future<Output = Result<AgentToolResult<Self::Details>, ToolError>> + Send {
        TypedTool::execute(self, tool_call_id, params, signal, on_update)
    }
}

/// Deserialises validated arguments into a params type; a failure reads like Pi's
/// validation errors, with the path of the field serde rejected (`  - limit: invalid value:
/// integer 5000000000, expected u32`) and the arguments it was given.
///
/// The schema cannot say everything the type says (a `u32`'s range, a custom
/// `Deserialize`), so serde can still refuse arguments the schema accepted.
pub fn deserialize_params<P: DeserializeOwned>(
    tool_name: &str,
    params: &Value,
) -> Result<P, ToolError> {
    // The plain deserialiser first: tracking the path costs on every call, and is only
    // needed to explain a failure.
    if let Ok(p) = P::deserialize(params) {
        return Ok(p);
    }
    match serde_path_to_error::deserialize::<_, P>(params) {
        Ok(p) => Ok(p),
        Err(error) => {
            let line = format!("  - {}: {}", serde_path(error.path()), error.inner());
            Err(ToolError::with_kind(
                ToolErrorKind::InvalidArguments,
                crate::schema::failure_text(tool_name, &[line], params),
            ))
        }
    }
}

/// A serde path in Pi's notation: `a.0.b`, `root` when empty.
fn serde_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let parts: Vec<String> = path
        .iter()
        .map(|segment| match segment {
            Segment::Seq { index } => index.to_string(),
            Segment::Map { key } => key.clone(),
            Segment::Enum { variant } => variant.clone(),
            Segment::Unknown => "?".to_owned(),
        })
        .collect();
    if parts.is_empty() {
        "root".to_owned()
    } else {
        parts.join(".")
    }
}

/// The adapter from a typed tool to the JSON-level traits. Built once per tool: it holds
/// the spec (and so the schema and validator).
struct Typed<T> {
    tool: Arc<T>,
    spec: ToolSpec,
}

impl<T: ToolMetadata> Typed<T> {
    fn new(tool: T) -> Self {
        Typed {
            tool: Arc::new(tool),
            spec: ToolSpec::of::<T>(),
        }
    }
}

#[async_trait]
impl<T: TypedTool> AgentTool for Typed<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare_arguments<'a>(&self, arguments: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
        self.tool.prepare_arguments(arguments)
    }

    async fn execute(
        &self,
        tool_call_id: &str,
        params: &Value,
        signal: AbortSignal,
        on_update: OnUpdate<Option<JsonDetails>>,
    ) -> Result<JsonToolResult, ToolError> {
        let params = deserialize_params::<T::Params>(&self.spec.name, params)?;
        let result = TypedTool::execute(
            &*self.tool,
            tool_call_id,
            params,
            signal,
            OnUpdate::from_json(on_update),
        )
        .await?;
        result.into_json()
    }
}

#[async_trait]
impl<T: TypedToolDefinition> ToolDefinition for Typed<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare_arguments<'a>(&self, arguments: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
        self.tool.prepare_arguments(arguments)
    }

    async fn execute(
        &self,
        tool_call_id: &str,
        params: &Value,
        signal: AbortSignal,
        on_update: OnUpdate<Option<JsonDetails>>,
        ctx: ExtensionContext,
    ) -> Result<JsonToolResult, ToolError> {
        let params = deserialize_params::<T::Params>(&self.spec.name, params)?;
        let result = self
            .tool
            .execute_with_context(
                tool_call_id,
                params,
                signal,
                OnUpdate::from_json(on_update),
                ctx,
            )
            .await?;
        result.into_json()
    }
}

/// Turns a typed four-argument tool into the `Arc<dyn AgentTool>` hosts hold.
pub trait IntoAgentTool {
    /// Builds the JSON-level tool (schema and validator included), once.
    fn into_agent_tool(self) -> Arc<dyn AgentTool>;
}

impl<T: TypedTool> IntoAgentTool for T {
    fn into_agent_tool(self) -> Arc<dyn AgentTool> {
        Arc::new(Typed::new(self))
    }
}

impl IntoAgentTool for Arc<dyn AgentTool> {
    fn into_agent_tool(self) -> Arc<dyn AgentTool> {
        self
    }
}

/// Turns a typed tool (four or five arguments) into an `Arc<dyn ToolDefinition>`.
pub trait IntoToolDefinition {
    /// Builds the JSON-level definition, once.
    fn into_tool_definition(self) -> Arc<dyn ToolDefinition>;
}

impl<T: TypedToolDefinition> IntoToolDefinition for T {
    fn into_tool_definition(self) -> Arc<dyn ToolDefinition> {
        Arc::new(Typed::new(self))
    }
}

impl IntoToolDefinition for Arc<dyn ToolDefinition> {
    fn into_tool_definition(self) -> Arc<dyn ToolDefinition> {
        self
    }
}

/// A plain four-argument tool used where a definition is expected: the context is
/// dropped (Pi's `createToolDefinitionFromAgentTool`).
impl IntoToolDefinition for Arc<dyn AgentTool> {
    fn into_tool_definition(self) -> Arc<dyn ToolDefinition> {
        Arc::new(AgentToolAsDefinition(self))
    }
}

struct AgentToolAsDefinition(Arc<dyn AgentTool>);

#[async_trait]
impl ToolDefinition for AgentToolAsDefinition {
    fn spec(&self) -> &ToolSpec {
        self.0.spec()
    }

    fn prepare_arguments<'a>(&self, arguments: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
        self.0.prepare_arguments(arguments)
    }

    async fn execute(
        &self,
        tool_call_id: &str,
        params: &Value,
        signal: AbortSignal,
        on_update: OnUpdate<Option<JsonDetails>>,
        _ctx: ExtensionContext,
    ) -> Result<JsonToolResult, ToolError> {
        self.0
            .execute(tool_call_id, params, signal, on_update)
            .await
    }
}

/// Lifts a five-argument definition into the four-argument contract (Pi's
/// `wrapToolDefinition(def, ctxFactory)`): `ctx_factory` builds a fresh context for every
/// execute call, exactly as Pi does.
pub fn wrap_tool_definition<F>(
    definition: Arc<dyn ToolDefinition>,
    ctx_factory: F,
) -> Arc<dyn AgentTool>
where
    F: Fn() -> ExtensionContext + Send + Sync + 'static,
{
    Arc::new(WrappedDefinition {
        definition,
        ctx_factory: Box::new(ctx_factory),
    })
}

struct WrappedDefinition {
    definition: Arc<dyn ToolDefinition>,
    ctx_factory: Box<dyn Fn() -> ExtensionContext + Send + Sync>,
}

#[async_trait]
impl AgentTool for WrappedDefinition {
    fn spec(&self) -> &ToolSpec {
        self.definition.spec()
    }

    fn prepare_arguments<'a>(&self, arguments: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
        self.definition.prepare_arguments(arguments)
    }

    async fn execute(
        &self,
        tool_call_id: &str,
        params: &Value,
        signal: AbortSignal,
        on_update: OnUpdate<Option<JsonDetails>>,
    ) -> Result<JsonToolResult, ToolError> {
        let ctx = (self.ctx_factory)();
        self.definition
            .execute(tool_call_id, params, signal, on_update, ctx)
            .await
    }
}
