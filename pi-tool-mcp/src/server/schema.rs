//! The `inputSchema` a tool is listed with: the parameter schema in the `mcp` profile.
//!
//! MCP hosts forward `inputSchema` unchanged to Anthropic, OpenAI or Gemini, so the
//! listing uses pi-tool's portable `mcp` profile (`pi_tool_core::profiles::Profile::Mcp`),
//! while calls are still validated against the tool's own canonical schema by
//! [`AgentTool::check_arguments`](pi_tool_core::AgentTool).

use pi_tool_core::profiles::Profile;
use pi_tool_core::{ToolSpec, Value};
use rmcp::model::JsonObject;

/// The listed schema of `spec`, and what the profile reported about it (`tool "x":
/// warning: …` / `error: …`; an error means some hosts will reject the tool). MCP
/// requires an object; a tool whose schema is not one (its calls then fail with the
/// schema's error) is listed as taking any object. With `declared`
/// ([`PackServer::list_declared_schemas`](crate::PackServer::list_declared_schemas)) the
/// listing is the schema as declared ([`ToolSchema::declared`](pi_tool_core::schema::ToolSchema::declared)),
/// with only MCP's own rules applied ([`pi_tool_core::profiles::mcp_declared`]).
pub(crate) fn mcp_input_schema(spec: &ToolSpec, declared: bool) -> (JsonObject, Vec<String>) {
    let outcome = if declared {
        pi_tool_core::profiles::mcp_declared(spec.parameters.declared())
    } else {
        Profile::Mcp.apply(spec.parameters.json())
    };
    let name = &spec.name;
    let report = outcome
        .errors
        .iter()
        .map(|e| format!("tool \"{name}\": error: {e}"))
        .chain(
            outcome
                .warnings
                .iter()
                .map(|w| format!("tool \"{name}\": warning: {w}")),
        )
        .collect();
    let schema = match outcome.schema {
        Value::Object(object) => object,
        _ => {
            let mut any = JsonObject::new();
            any.insert("type".to_owned(), Value::String("object".to_owned()));
            any
        }
    };
    (schema, report)
}
