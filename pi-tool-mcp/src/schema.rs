//! The `inputSchema` a tool is listed with: the parameter schema in the `mcp` profile.
//!
//! MCP hosts forward `inputSchema` unchanged to Anthropic, OpenAI or Gemini, so the
//! listing uses the portable profile, while calls are still validated against the
//! tool's own (canonical) schema by [`AgentTool::check_arguments`](pi_tool::AgentTool).

use pi_tool::{ToolSpec, Value};
use rmcp::model::JsonObject;

/// The listed schema of `spec`. MCP requires an object; a tool whose schema is not one
/// (its calls then fail with the schema's error) is listed as taking any object.
pub(crate) fn mcp_input_schema(spec: &ToolSpec) -> JsonObject {
    // SWITCH TO THE `mcp` PROFILE HERE: this is the only place the listed schema is made.
    // Until `pi_tool::profiles` lands, the canonical schema is listed as generated.
    let schema: &Value = spec.parameters.json();
    match schema {
        Value::Object(object) => object.clone(),
        _ => {
            let mut any = JsonObject::new();
            any.insert("type".to_owned(), Value::String("object".to_owned()));
            any
        }
    }
}
