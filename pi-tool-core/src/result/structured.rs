//! Structured output: a tool returns `Json<T>`, a typed value that every host shows in
//! its own way.
//!
//! * The model reads the value's JSON text (one text block), so a model that reads only
//!   text sees the whole value.
//! * The agent loop keeps the typed value as the result's details (`Details = T`).
//! * MCP gets `structuredContent` and the tool's `outputSchema`
//!   ([`OutputSchema`](crate::schema::OutputSchema), generated once per tool); a type
//!   whose schema root is not an object travels wrapped as `{"result": value}`.

use super::{AgentToolResult, IntoToolResult};

/// A structured tool result: `async fn f(p: P) -> Result<Json<Forecast>, ToolError>`,
/// with `Forecast: Serialize + JsonSchema`.
///
/// ```
/// use pi_tool_core::{Json, JsonSchema, ToolError, pi_tool};
/// use serde::Serialize;
///
/// #[derive(Serialize, JsonSchema)]
/// #[schemars(crate = "pi_tool_core::schemars")]
/// struct Forecast {
///     city: String,
///     celsius: i32,
/// }
///
/// /// The demo forecast for Paris.
/// #[pi_tool(read_only)]
/// async fn get_forecast() -> Result<Json<Forecast>, ToolError> {
///     Ok(Json(Forecast { city: "Paris".into(), celsius: 18 }))
/// }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Json<T>(pub T);

impl<T> Json<T> {
    /// The value.
    pub fn into_inner(self) -> T {
        self.0
    }
}

/// No `Serialize` bound here: `Tool::Details = T` requires it, so a `T` without it is one
/// compile error, on the user's `T`. The text block is written by the adapter to the JSON
/// level (`IntoAgentTool`), from the details it serialises anyway: one serialisation per
/// call, and the text is exactly the details' JSON.
impl<T: Send + 'static> IntoToolResult for Json<T> {
    type Details = T;

    fn into_tool_result(self) -> AgentToolResult<T> {
        AgentToolResult {
            content: Vec::new(),
            details: self.0,
            usage: None,
            terminate: None,
            added_tool_names: None,
        }
    }
}

/// Gives a structured result its text block: the details' compact JSON. Only for a tool
/// with an output schema whose result has no content yet (what `Json<T>` returns).
pub(crate) fn render_text(result: &mut super::JsonToolResult) {
    if result.content.is_empty()
        && let Some(details) = &result.details
    {
        result
            .content
            .push(crate::content::Content::text(details.to_json_string()));
    }
}
