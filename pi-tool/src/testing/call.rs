//! One tool, one call, everything captured: [`call`], [`call_json`], [`call_tool`].

use std::fmt;
use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::schema::ArgumentLimits;
use pi_tool_core::AbortSignal;
use pi_tool_core::JsonDetails;
use pi_tool_core::OnUpdate;
use pi_tool_core::ToolError;
use pi_tool_core::call_contained;
use pi_tool_core::{AgentTool, IntoAgentTool, Tool, ToolInvocation};
use pi_tool_core::{AgentToolResult, JsonToolResult};

/// Calls a typed tool with typed params, through the real call path.
///
/// The params are serialised to JSON and go where a model's arguments go:
/// `prepare_arguments`, validation against the tool's schema, serde, `execute`, with
/// panics and the tool's timeout contained ([`call_contained`]). Await the returned
/// [`Call`] (after setting a [`signal`](Call::signal) or a [`timeout`](Call::timeout), if
/// the test needs one) to get the [`ToolRun`]: the progress updates, then the result or
/// the error.
///
/// The params type needs `Serialize` as well as the `Deserialize` that
/// `#[pi_tool::params]` derives: add `#[derive(serde::Serialize)]` to it, or call the tool
/// with JSON arguments ([`call_json`]). Without it, the error is one line on the params
/// that says so ([`CallParams`]).
///
/// Why the bound stays: the typed params become the JSON a model would send, so the call
/// checks what a model's call is checked for (the tool's `prepare_arguments`, coercion,
/// validation against the schema the model sees) and reads the arguments back with serde.
/// A typed call that handed the value straight to `execute` would need no `Serialize`,
/// but it would pass values the schema refuses (a number past its `maximum`, a string
/// outside its `enum` or `pattern`) that no model's call can bring. And
/// `#[pi_tool::params]` does not derive `Serialize` itself: a field read with
/// `#[serde(deserialize_with = ...)]` or of a type that is only `Deserialize` would make
/// that derive fail in crates that never call this.
pub fn call<T>(tool: T, params: T::Params) -> Call<T::Details>
where
    T: IntoAgentTool + Tool,
    T::Params: CallParams,
{
    let arguments = params.__arguments().map_err(|e| e.to_string());
    Call::new(tool.into_agent_tool(), arguments)
}

/// Params [`call`] can write as a model's JSON arguments: every `Serialize` type is one.
#[diagnostic::on_unimplemented(
    message = "`testing::call` sends `{Self}` to the tool as JSON arguments, and it is not `Serialize`",
    label = "the tool's params: written as JSON, then checked and read as a model's arguments",
    note = "add `#[derive(serde::Serialize)]` to `{Self}` (beside `#[pi_tool::params]`), or call the tool with JSON arguments: `testing::call_json(tool, json!(...))`"
)]
pub trait CallParams {
    /// The params as JSON arguments.
    #[doc(hidden)]
    fn __arguments(&self) -> Result<Value, serde_json::Error>;
}

#[diagnostic::do_not_recommend]
impl<P: Serialize> CallParams for P {
    fn __arguments(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(self)
    }
}

/// Calls a typed tool with raw JSON arguments, as a model would send them: to test what
/// the model reads when it gets them wrong (Pi's validation text), or coercion.
pub fn call_json<T>(tool: T, arguments: Value) -> Call<T::Details>
where
    T: IntoAgentTool + Tool,
{
    Call::new(tool.into_agent_tool(), Ok(arguments))
}

/// Calls a JSON-level tool (`Arc<dyn AgentTool>`, from a pack or built at run time) with
/// raw JSON arguments; details are read as JSON values.
pub fn call_tool(tool: Arc<dyn AgentTool>, arguments: Value) -> Call<Value> {
    Call::new(tool, Ok(arguments))
}

/// A tool call about to run: set its options, then `.await` it for the [`ToolRun`].
#[must_use = "a Call does nothing until it is awaited"]
pub struct Call<D> {
    tool: Arc<dyn AgentTool>,
    arguments: Result<Value, String>,
    call_id: String,
    signal: AbortSignal,
    timeout: Option<Duration>,
    _details: PhantomData<fn() -> D>,
}

impl<D> fmt::Debug for Call<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("tool", &self.tool.name())
            .field("arguments", &self.arguments)
            .field("call_id", &self.call_id)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl<D> Call<D> {
    fn new(tool: Arc<dyn AgentTool>, arguments: Result<Value, String>) -> Self {
        let timeout = tool.spec().timeout;
        Call {
            tool,
            arguments,
            call_id: "test-call".to_owned(),
            signal: AbortSignal::never(),
            timeout,
            _details: PhantomData,
        }
    }

    /// The abort signal the tool gets (default: never aborted).
    pub fn signal(mut self, signal: AbortSignal) -> Self {
        self.signal = signal;
        self
    }

    /// Ends the call with Pi's timeout error after `timeout` (default: the tool's own
    /// timeout, as hosts use it).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The tool call id the tool sees (default `test-call`).
    pub fn call_id(mut self, id: impl Into<String>) -> Self {
        self.call_id = id.into();
        self
    }

    async fn run(self) -> ToolRun<D> {
        let arguments = match self.arguments {
            Ok(arguments) => arguments,
            // The test's own params type cannot be written as JSON: a bug in the test.
            Err(error) => panic!(
                "testing::call: the params of `{}` do not serialise to JSON: {error}",
                self.tool.name()
            ),
        };
        let updates = Arc::new(Mutex::new(Vec::new()));
        let sink = updates.clone();
        let on_update = OnUpdate::new(move |update: JsonToolResult| {
            sink.lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .push(update);
        });
        let call = ToolInvocation::new(&self.call_id, &arguments, self.signal, on_update.clone());
        // A host's default limits (RunPolicy's), unless the tool sets its own.
        let outcome = call_contained(&*self.tool, call, &ArgumentLimits::new(), self.timeout).await;
        // The call has settled: later updates are dropped, as the runtime does.
        on_update.close();
        let updates = std::mem::take(
            &mut *updates
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        ToolRun {
            tool: self.tool.name().to_owned(),
            arguments,
            updates,
            outcome,
            _details: PhantomData,
        }
    }
}

impl<D: Send + 'static> IntoFuture for Call<D> {
    type Output = ToolRun<D>;
    type IntoFuture = Pin<Box<dyn Future<Output = ToolRun<D>> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

/// What one call did: the progress updates it sent, then its result or its error.
///
/// The typed accessors ([`result`](Self::result), [`updates`](Self::updates)) read the
/// details back into the tool's details type, so they need it to be `Deserialize`; the
/// `json_*` accessors work for any tool. Accessors that expect an outcome
/// ([`result`](Self::result), [`error`](Self::error)) panic with the other one, as an
/// assertion does.
pub struct ToolRun<D = Value> {
    tool: String,
    arguments: Value,
    updates: Vec<JsonToolResult>,
    outcome: Result<JsonToolResult, ToolError>,
    _details: PhantomData<fn() -> D>,
}

impl<D> fmt::Debug for ToolRun<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRun")
            .field("tool", &self.tool)
            .field("arguments", &self.arguments)
            .field("updates", &self.updates)
            .field("outcome", &self.outcome)
            .finish()
    }
}

impl<D> ToolRun<D> {
    /// The tool's name.
    pub fn tool_name(&self) -> &str {
        &self.tool
    }

    /// The JSON arguments the call was made with.
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// The result, or the error: nothing panics.
    pub fn outcome(&self) -> Result<&JsonToolResult, &ToolError> {
        self.outcome.as_ref()
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        self.outcome.is_err()
    }

    /// The result at JSON level. Panics, with the error, if the call failed.
    pub fn json_result(&self) -> &JsonToolResult {
        match &self.outcome {
            Ok(result) => result,
            Err(error) => panic!(
                "`{}` failed instead of returning a result: {}\n(arguments: {})",
                self.tool,
                error.message(),
                self.arguments
            ),
        }
    }

    /// The text blocks of the result, joined by newlines. Panics if the call failed.
    pub fn text(&self) -> String {
        self.json_result().text_content()
    }

    /// The error. Panics, with the result, if the call succeeded.
    pub fn error(&self) -> &ToolError {
        match &self.outcome {
            Err(error) => error,
            Ok(result) => panic!(
                "`{}` returned a result instead of failing: {}\n(arguments: {})",
                self.tool,
                result.to_json(),
                self.arguments
            ),
        }
    }

    /// The error's text (what the model reads). Panics if the call succeeded.
    pub fn error_text(&self) -> &str {
        self.error().message()
    }

    /// The progress updates at JSON level, in order.
    pub fn json_updates(&self) -> &[JsonToolResult] {
        &self.updates
    }

    /// The text of each progress update, in order.
    pub fn update_texts(&self) -> Vec<String> {
        self.updates.iter().map(|u| u.text_content()).collect()
    }
}

impl<D: DeserializeOwned> ToolRun<D> {
    /// The result with its details read back as the tool's details type. Panics if the
    /// call failed or the details do not read back.
    pub fn result(&self) -> AgentToolResult<D> {
        typed(&self.tool, "result", self.json_result())
    }

    /// The progress updates with typed details, in order.
    pub fn updates(&self) -> Vec<AgentToolResult<D>> {
        self.updates
            .iter()
            .map(|u| typed(&self.tool, "update", u))
            .collect()
    }
}

fn typed<D: DeserializeOwned>(
    tool: &str,
    what: &str,
    result: &JsonToolResult,
) -> AgentToolResult<D> {
    let details = result
        .details
        .as_ref()
        .map_or(&Value::Null, JsonDetails::as_value);
    match D::deserialize(details) {
        Ok(details) => result.clone().map_details(|_| details),
        Err(error) => panic!(
            "the details of `{tool}`'s {what} do not read back as {}: {error}\n(details: {details})",
            std::any::type_name::<D>()
        ),
    }
}
