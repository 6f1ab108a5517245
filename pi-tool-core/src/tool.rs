//! The tool contract: one typed trait that tools implement, one object-safe JSON-level
//! trait that hosts hold, and the adapters between them.
//!
//! ```text
//!  #[pi_tool] async fn ──► Tool ──(one generic adapter: deserialise params,──► AgentTool
//!  (4 or 5 arguments)       typed       serialise details, once per tool)      JSON level, Arc<dyn AgentTool>
//!                                                                                 │
//!                               wrap_tool_definition(tool, ctx_factory) ◄─────────┘
//!                               (Pi's 5-to-4 adapter: a fresh ExtensionContext per call)
//! ```
//!
//! Every call reaches a tool as one [`ToolInvocation`]: the call id, the params, the
//! abort signal, the progress sink and, where the host has one, the session's
//! [`ExtensionContext`]. Pi splits tools into `AgentTool` (four arguments) and
//! `ToolDefinition` (five, with the context); here both are an [`AgentTool`], and the
//! context is the invocation's `context`. A host with a session fills it (Pi's
//! `wrapToolDefinition(def, ctxFactory)` is [`wrap_tool_definition`]); a tool that takes
//! an `ExtensionContext` and is run where there is none gets
//! [`ExtensionContext::detached`]: no session, no UI, the process's working directory.

use std::borrow::Cow;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use crate::abort::AbortSignal;
use crate::bounds::{ToolDetails, ToolParams};
use crate::context::ExtensionContext;
use crate::details::JsonDetails;
use crate::error::ToolError;
use crate::mode::{ConcurrencyClass, TaskSupport, ToolExecutionMode};
use crate::result::{AgentToolResult, JsonToolResult};
use crate::schema::ToolSchema;
use crate::update::OnUpdate;

mod annotations;

pub use annotations::ToolAnnotations;

/// What every tool says about itself: the fields Pi's `AgentTool` and `ToolDefinition`
/// share. Built once per tool; hosts read it on every call without cost.
#[derive(Debug, Clone)]
#[non_exhaustive]
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
    /// the host's ([`CallPolicy::argument_limits`](crate::CallPolicy)) when set.
    pub argument_limits: Option<crate::schema::ArgumentLimits>,
    /// The declared effects (MCP's annotations): what approval, scheduling and MCP
    /// clients read. Nothing declared by default.
    pub annotations: ToolAnnotations,
    /// The schema of a structured result (a tool returning [`Json<T>`](crate::Json)),
    /// published as MCP's `outputSchema`; `None` for text results.
    pub output_schema: Option<Arc<crate::schema::OutputSchema>>,
    /// Whether the tool may or must run as an MCP task (`#[pi_tool(task_support =
    /// "...")]`); `None`: not declared, a plain call. Only MCP servers read it.
    pub task_support: Option<TaskSupport>,
    /// The tools this tool may call through its context
    /// ([`ExtensionContext::call_tool`]; `#[pi_tool(reaches = ["read", "grep"])]`, Pi
    /// 1.2's `reachesTools`). Empty: it makes no nested calls. A host checks, when it
    /// mounts the tool, that it has every one of them, and refuses a nested call to any
    /// other; a UI can show the reach before approving the tool.
    #[doc(alias = "reachesTools")]
    pub reaches: Vec<String>,
    /// The concurrency class of its calls and their weight
    /// (`#[pi_tool(concurrency = ("browser", 2))]`); `None`: no class, its calls take only
    /// from a host's total.
    pub concurrency: Option<ConcurrencyClass>,
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
            annotations: ToolAnnotations::NONE,
            output_schema: None,
            task_support: None,
            reaches: Vec::new(),
            concurrency: None,
        }
    }

    /// The spec of a typed tool, from its constants and its params type's schema.
    pub fn of<T: Tool>() -> Self {
        // The constants are gathered here and copied by one function for every tool type.
        Self::from_constants(
            [T::NAME, T::LABEL, T::DESCRIPTION],
            <T::Params as ToolParams>::__tool_schema(),
            (T::EXECUTION_MODE, T::TIMEOUT, T::TASK_SUPPORT),
            (T::PROMPT_SNIPPET, T::PROMPT_GUIDELINES),
            T::ANNOTATIONS,
            T::output_schema(),
            (T::REACHES, T::CONCURRENCY),
        )
    }

    #[inline(never)]
    fn from_constants(
        [name, label, description]: [&'static str; 3],
        parameters: Arc<ToolSchema>,
        (execution_mode, timeout, task_support): (
            Option<ToolExecutionMode>,
            Option<Duration>,
            Option<TaskSupport>,
        ),
        (prompt_snippet, prompt_guidelines): (Option<&'static str>, &'static [&'static str]),
        annotations: ToolAnnotations,
        output_schema: Option<Arc<crate::schema::OutputSchema>>,
        (reaches, concurrency): (&'static [&'static str], Option<ConcurrencyClass>),
    ) -> Self {
        ToolSpec {
            name: name.to_owned(),
            label: label.to_owned(),
            description: description.to_owned(),
            parameters,
            execution_mode,
            timeout,
            prompt_snippet: prompt_snippet.map(str::to_owned),
            prompt_guidelines: prompt_guidelines.iter().map(|s| (*s).to_owned()).collect(),
            argument_limits: None,
            annotations,
            output_schema,
            task_support,
            reaches: reaches.iter().map(|s| (*s).to_owned()).collect(),
            concurrency,
        }
    }

    /// Sets the UI label.
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Sets the execution mode.
    #[must_use]
    pub fn execution_mode(mut self, mode: ToolExecutionMode) -> Self {
        self.execution_mode = Some(mode);
        self
    }

    /// Sets the per-call timeout.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the system-prompt snippet.
    #[must_use]
    pub fn prompt_snippet(mut self, snippet: impl Into<String>) -> Self {
        self.prompt_snippet = Some(snippet.into());
        self
    }

    /// Sets the declared effects.
    #[must_use]
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Sets whether the tool may or must run as an MCP task.
    #[must_use]
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = Some(support);
        self
    }

    /// Sets the output schema (what [`Json<T>`](crate::Json) results look like).
    #[must_use]
    pub fn output_schema(mut self, schema: Arc<crate::schema::OutputSchema>) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Sets the tools this tool may call through its context (Pi's `reachesTools`).
    #[must_use]
    #[doc(alias = "reachesTools")]
    pub fn reaches<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.reaches = names.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the concurrency class of its calls.
    #[must_use]
    pub fn concurrency(mut self, class: ConcurrencyClass) -> Self {
        self.concurrency = Some(class);
        self
    }

    /// Adds a system-prompt guideline.
    #[must_use]
    pub fn prompt_guideline(mut self, line: impl Into<String>) -> Self {
        self.prompt_guidelines.push(line.into());
        self
    }
}

/// One call of a tool, as it reaches `execute`: Pi's `(toolCallId, params, signal,
/// onUpdate, ctx)` in one value.
///
/// [`AgentTool`] receives the JSON form (the defaults: `P = &Value`,
/// `D = Option<JsonDetails>`); a typed [`Tool`] receives its own params and details types.
#[derive(Debug)]
#[non_exhaustive]
pub struct ToolInvocation<'a, P = &'a Value, D = Option<JsonDetails>> {
    /// The id the model gave the call (Pi's `toolCallId`).
    pub id: &'a str,
    /// The arguments: validated JSON, or the typed params deserialised from it.
    pub params: P,
    /// Aborted when the run is aborted, or when the call overruns its timeout.
    pub signal: AbortSignal,
    /// Where progress updates go (Pi's `onUpdate`).
    pub on_update: OnUpdate<D>,
    /// The session's context (Pi's fifth argument, `ctx`), when the host has a session.
    pub context: Option<ExtensionContext>,
}

impl<'a, P, D> ToolInvocation<'a, P, D> {
    /// A call with no context: what a host without a session passes.
    pub fn new(id: &'a str, params: P, signal: AbortSignal, on_update: OnUpdate<D>) -> Self {
        ToolInvocation {
            id,
            params,
            signal,
            on_update,
            context: None,
        }
    }

    /// The same call with `context`.
    #[must_use]
    pub fn with_context(mut self, context: ExtensionContext) -> Self {
        self.context = Some(context);
        self
    }

    /// The same call with other params.
    pub fn map_params<Q>(self, params: Q) -> ToolInvocation<'a, Q, D> {
        ToolInvocation {
            id: self.id,
            params,
            signal: self.signal,
            on_update: self.on_update,
            context: self.context,
        }
    }

    /// The session's context, or [`ExtensionContext::detached`] where there is none.
    pub fn context_or_detached(&mut self) -> ExtensionContext {
        self.context
            .take()
            .unwrap_or_else(ExtensionContext::detached)
    }
}

/// The JSON-level tool hosts hold as `Arc<dyn AgentTool>` (Pi's `AgentTool`, and its
/// `ToolDefinition`: the context comes with the [`ToolInvocation`]). Object safe.
///
/// `params` has already passed [`AgentTool::prepare_arguments`] and the schema; a typed
/// tool still deserialises it, because hooks may change it without re-validation (as in Pi).
///
/// Arguments are borrowed all the way: the transcript keeps the model's arguments anyway,
/// and a tool cannot change what it borrows, so the copy Pi makes per call
/// (`structuredClone`) is made only where something does change them (a coercion, a
/// `prepare_arguments` shim, a `before_tool_call` hook). That is why `prepare_arguments`
/// and `check_arguments` speak `Cow`: a call whose arguments nothing changes copies
/// nothing (`bench/README.md`, dispatch, has the measurement).
#[doc(alias = "ToolDefinition")]
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
    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError>;

    /// The protocol name.
    fn name(&self) -> &str {
        &self.spec().name
    }
}

impl dyn AgentTool {
    /// Prepares and validates raw model arguments: the tool's `prepare_arguments`, then
    /// Pi's null normalisation, coercion and validation against the tool's
    /// [`ToolSchema`](crate::schema::ToolSchema): the value `execute` would receive
    /// (borrowed when no step changed it), or Pi's validation error text.
    ///
    /// Not a trait method, so no tool can replace it: every host's call path runs it
    /// ([`CallPolicy::check`](crate::CallPolicy::check), which adds the argument limits
    /// and contains a panic in `prepare_arguments`), and the arguments a tool executes
    /// with are validated against exactly the schema the model saw.
    pub fn check_arguments<'a>(&self, arguments: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
        validate_prepared(self.spec(), self.prepare_arguments(arguments)?)
    }
}

/// A typed tool: its metadata as constants (so that packs check names at compile time)
/// and an `execute` over its own params and details types. `#[pi_tool]` implements it;
/// [`IntoAgentTool`] turns it into the `Arc<dyn AgentTool>` hosts hold, once.
///
/// A tool that needs the session's [`ExtensionContext`] (Pi's five-argument
/// `ToolDefinition`) reads it from [`ToolInvocation::context`].
pub trait Tool: Send + Sync + 'static {
    /// The arguments, deserialised from the model's JSON: any `Deserialize + JsonSchema +
    /// Send + 'static` type ([`ToolParams`](crate::bounds::ToolParams) says why the bound is
    /// that trait).
    type Params: ToolParams;
    /// The details of results and progress updates: any `Serialize + Send + 'static` type
    /// ([`ToolDetails`](crate::bounds::ToolDetails)).
    type Details: ToolDetails;
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
    /// The declared effects (`#[pi_tool(read_only, ...)]`); nothing declared by default.
    const ANNOTATIONS: ToolAnnotations = ToolAnnotations::NONE;
    /// Whether the tool may or must run as an MCP task (`#[pi_tool(task_support =
    /// "...")]`); not declared by default.
    const TASK_SUPPORT: Option<TaskSupport> = None;
    /// The tools this tool may call through its context (`#[pi_tool(reaches = [...])]`,
    /// Pi's `reachesTools`); none by default.
    const REACHES: &'static [&'static str] = &[];
    /// The concurrency class of its calls (`#[pi_tool(concurrency = "browser")]`); none
    /// by default.
    const CONCURRENCY: Option<ConcurrencyClass> = None;

    /// The schema of the tool's structured result, if it returns [`Json<T>`](crate::Json):
    /// `#[pi_tool]` generates `Some(OutputSchema::for_type::<T>())`. Read once, when the
    /// tool becomes an [`AgentTool`].
    fn output_schema() -> Option<Arc<crate::schema::OutputSchema>>
    where
        Self: Sized,
    {
        None
    }

    /// See [`AgentTool::prepare_arguments`].
    fn prepare_arguments<'a>(&self, arguments: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
        Ok(Cow::Borrowed(arguments))
    }

    /// Runs the call with typed params and typed progress.
    fn execute(
        &self,
        call: ToolInvocation<'_, Self::Params, Self::Details>,
    ) -> impl Future<Output = Result<AgentToolResult<Self::Details>, ToolError>> + Send;
}

/// The one adapter from a typed tool to the JSON level. Built once per tool: it holds
/// the spec (and so the schema and validator).
struct Typed<T> {
    tool: T,
    spec: ToolSpec,
}

#[async_trait]
impl<T: Tool> AgentTool for Typed<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare_arguments<'a>(&self, arguments: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
        self.tool.prepare_arguments(arguments)
    }

    // Written out rather than `async fn`: an async block here would be one state machine
    // per tool, with the params' deserialisation inlined into its poll, and was two thirds
    // of a 200-tool crate's optimised code. The params are read before the future is
    // built; the future that remains (the tool's, mapped to JSON by a function compiled
    // once per details type) is the call's one allocation. Mapped, not an async block: a
    // block would hold the tool's future twice over (as its capture and as its awaited
    // value), and boxing it copies all of it.
    fn execute<'life0, 'life1, 'async_trait>(
        &'life0 self,
        call: ToolInvocation<'life1>,
    ) -> Pin<Box<dyn Future<Output = Result<JsonToolResult, ToolError>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        Self: 'async_trait,
    {
        let params = match <T::Params as ToolParams>::__from_arguments(&self.spec.name, call.params)
        {
            Ok(params) => params,
            Err(error) => return failed(error),
        };
        let call = ToolInvocation {
            id: call.id,
            params,
            signal: call.signal,
            on_update: OnUpdate::from_json_with(call.on_update, T::Details::__to_json),
            context: call.context,
        };
        self.tool
            .execute_boxed(call, self.spec.output_schema.is_some())
    }
}

/// Boxes a typed tool's future, mapped to JSON: the call's one allocation.
///
/// A trait implemented for every `T: Tool`, not a method of `Typed<T>`, for build time:
/// rustc puts a generic method into the codegen unit of its impl's self type. Here that is
/// the tool's own type, whose module an edit to the tool rebuilds anyway. As a method of
/// `Typed<T>`, the one item per tool that names the tool's future type put all tools'
/// adapters in one unit, and an edit to any tool rebuilt all of them
/// (`bench/compile-time/README.md`).
trait ExecuteBoxed: Tool {
    fn execute_boxed<'a>(
        &'a self,
        call: ToolInvocation<'a, Self::Params, Self::Details>,
        structured: bool,
    ) -> Pin<Box<dyn Future<Output = Result<JsonToolResult, ToolError>> + Send + 'a>>;
}

impl<T: Tool> ExecuteBoxed for T {
    // Optimised builds copy an `#[inline]` function into its caller's unit, so it is
    // inlined there; unoptimised ones place it by the rule above.
    #[inline]
    fn execute_boxed<'a>(
        &'a self,
        call: ToolInvocation<'a, T::Params, T::Details>,
        structured: bool,
    ) -> Pin<Box<dyn Future<Output = Result<JsonToolResult, ToolError>> + Send + 'a>> {
        // The same checked, mapped future the macro builds: one poll function for both.
        Box::pin(crate::bounds::tool_future_must_be_send(
            self.execute(call),
            move |result| into_json_result(result, structured),
        ))
    }
}

#[inline(never)]
fn validate_prepared<'a>(
    spec: &ToolSpec,
    prepared: Cow<'a, Value>,
) -> Result<Cow<'a, Value>, ToolError> {
    spec.parameters.validate_cow(&spec.name, prepared)
}

#[inline(never)]
fn failed<'a>(
    error: ToolError,
) -> Pin<Box<dyn Future<Output = Result<JsonToolResult, ToolError>> + Send + 'a>> {
    Box::pin(std::future::ready(Err(error)))
}

/// The tool's result as JSON. `structured`: the tool returns `Json<T>`, whose text block
/// is the details' JSON, written here from the one serialisation of the details. Not
/// inlined, so that it is compiled once per details type, not once per tool.
#[inline(never)]
fn into_json_result<D: ToolDetails>(
    result: Result<AgentToolResult<D>, ToolError>,
    structured: bool,
) -> Result<JsonToolResult, ToolError> {
    let mut result = result?.into_json_with(D::__to_json)?;
    if structured {
        crate::result::render_text(&mut result);
    }
    Ok(result)
}

/// Turns a tool into the `Arc<dyn AgentTool>` hosts hold: a typed [`Tool`] (its schema
/// and validator are built here, once), or an `Arc<dyn AgentTool>` as it is.
pub trait IntoAgentTool {
    /// Builds the JSON-level tool.
    fn into_agent_tool(self) -> Arc<dyn AgentTool>;
}

impl<T: Tool> IntoAgentTool for T {
    fn into_agent_tool(self) -> Arc<dyn AgentTool> {
        Arc::new(Typed {
            spec: ToolSpec::of::<T>(),
            tool: self,
        })
    }
}

impl IntoAgentTool for Arc<dyn AgentTool> {
    fn into_agent_tool(self) -> Arc<dyn AgentTool> {
        self
    }
}

/// Binds a context factory to a tool (Pi's `wrapToolDefinition(def, ctxFactory)`):
/// `ctx_factory` builds a fresh context for every execute call, exactly as Pi does, in
/// place of whatever context the host passed.
pub fn wrap_tool_definition<F>(tool: Arc<dyn AgentTool>, ctx_factory: F) -> Arc<dyn AgentTool>
where
    F: Fn() -> ExtensionContext + Send + Sync + 'static,
{
    Arc::new(WithContext {
        tool,
        ctx_factory: Box::new(ctx_factory),
    })
}

struct WithContext {
    tool: Arc<dyn AgentTool>,
    ctx_factory: Box<dyn Fn() -> ExtensionContext + Send + Sync>,
}

#[async_trait]
impl AgentTool for WithContext {
    fn spec(&self) -> &ToolSpec {
        self.tool.spec()
    }

    fn prepare_arguments<'a>(&self, arguments: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
        self.tool.prepare_arguments(arguments)
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let mut context = (self.ctx_factory)();
        // The fresh context is the factory's; where nested calls go is the host's.
        if let Some(scope) = call.context.as_ref().and_then(ExtensionContext::call_scope) {
            context = context.with_call_scope(scope.clone());
        }
        self.tool.execute(call.with_context(context)).await
    }
}

/// A listener of a [`DynamicToolset`], which the toolset keeps and calls after each
/// change of its tools for as long as the [`ToolsetSubscription`] made with it lives.
/// Drop the subscription to stop listening; the toolset then forgets the listener.
#[derive(Clone)]
pub struct ToolsetListener(std::sync::Weak<dyn Fn() + Send + Sync>);

impl ToolsetListener {
    /// A listener that calls `on_change`, and the subscription that keeps it listening.
    pub fn new(on_change: impl Fn() + Send + Sync + 'static) -> (Self, ToolsetSubscription) {
        let on_change: Arc<dyn Fn() + Send + Sync> = Arc::new(on_change);
        (
            ToolsetListener(Arc::downgrade(&on_change)),
            ToolsetSubscription {
                _on_change: on_change,
            },
        )
    }

    /// Tells the listener the tools changed; `false` once its subscription was dropped
    /// (nothing was called: the toolset may forget it).
    #[doc(alias = "call")]
    pub fn notify(&self) -> bool {
        match self.0.upgrade() {
            Some(on_change) => {
                on_change();
                true
            }
            None => false,
        }
    }

    /// Whether its subscription was dropped.
    pub fn is_closed(&self) -> bool {
        self.0.strong_count() == 0
    }
}

impl fmt::Debug for ToolsetListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolsetListener")
            .field("closed", &self.is_closed())
            .finish()
    }
}

/// Keeps a [`ToolsetListener`] listening; dropping it unsubscribes.
#[must_use = "the listener stops listening when its subscription is dropped"]
pub struct ToolsetSubscription {
    _on_change: Arc<dyn Fn() + Send + Sync>,
}

impl fmt::Debug for ToolsetSubscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ToolsetSubscription")
    }
}

/// Tools that can change while they are in use: an MCP server's (pi-tool-mcp's
/// `McpToolset`, whose server may say its list changed), or any host's own.
///
/// A session takes one as a source of tools next to its custom tools and extensions
/// (`AgentSessionBuilder::toolset` in pi-tool): its tools are registered under their
/// names, the allowlist and `exclude_tools` name them, `all_tools` reports them with the
/// source path `<SOURCE>` ([`source_name`](Self::source_name)), and after each change
/// the session registers the current tools as Pi registers a tool at run time (a new one
/// becomes active; one that is gone leaves the registry and the active tools).
pub trait DynamicToolset: Send + Sync + 'static {
    /// Who offers the tools, as the session reports it (`mcp:weather`).
    fn source_name(&self) -> String;

    /// The tools offered now.
    fn current_tools(&self) -> Vec<Arc<dyn AgentTool>>;

    /// Calls `listener` ([`ToolsetListener::notify`]) after each change of
    /// [`current_tools`](Self::current_tools), until its subscription is dropped.
    fn on_change(&self, listener: ToolsetListener);
}

impl ExtensionContext {
    /// The typed form of [`call_tool`](Self::call_tool) for a `#[pi_tool]` tool:
    /// `ctx.call(GetWeather, params)` calls `GetWeather::NAME` with `params` serialised
    /// to JSON, through the same path (the tool value only names the tool; the host runs
    /// its own instance).
    #[doc(alias = "executeTool")]
    pub async fn call<T: Tool>(
        &self,
        _tool: T,
        params: impl serde::Serialize,
    ) -> Result<JsonToolResult, ToolError> {
        let arguments = serde_json::to_value(params).map_err(|error| {
            ToolError::with_kind(
                crate::error::ToolErrorKind::InvalidArguments,
                format!(
                    "Nested call to {}: its params do not serialise to JSON: {error}",
                    T::NAME
                ),
            )
        })?;
        self.call_tool(T::NAME, arguments).await
    }
}
