//! Structured output: a tool returns `Json<T>`, a typed value that every host shows in
//! its own way.
//!
//! * The model reads the value's JSON text (one text block), so a model that reads only
//!   text sees the whole value.
//! * The agent loop keeps the typed value as the result's details (`Details = T`).
//! * MCP gets `structuredContent` and the tool's `outputSchema`
//!   ([`OutputSchema`](crate::schema::OutputSchema), generated once per tool); a type
//!   whose schema root is not an object travels wrapped as `{"result": value}`.

use serde::Serialize;

use super::{AgentToolResult, IntoToolResult};

/// A structured tool result: `async fn f(p: P) -> Result<Json<Forecast>, ToolError>`,
/// with `Forecast: Serialize + JsonSchema`.
///
/// ```
/// use pi_tool::{Json, JsonSchema, ToolError, pi_tool};
/// use serde::Serialize;
///
/// #[derive(Serialize, JsonSchema)]
/// #[schemars(crate = "pi_tool::schemars")]
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

impl<T: Serialize + Send + 'static> IntoToolResult for Json<T> {
    type Details = T;

    fn into_tool_result(self) -> AgentToolResult<T> {
        // A value serde cannot write as JSON (a map with non-string keys) fails again,
        // with serde's message, when the details are serialised for the host; the text
        // here only has to be honest until then.
        let text = serde_json::to_string(&self.0)
            .unwrap_or_else(|error| format!("(the result cannot be written as JSON: {error})"));
        AgentToolResult::text(text, self.0)
    }
}
