//! `PackServer::list_declared_schemas`: `tools/list` shows each tool's schema as declared
//! (`$schema`, `$defs`/`$ref`, `allOf`, `if`/`then`/`else` as written) instead of the
//! portable `mcp` profile, with `x-mcp-header` still checked; the default is unchanged.

use std::sync::Arc;

use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::schema::{ToolSchema, normalize};
use pi_tool::{AgentTool, JsonToolResult, ToolError, ToolInvocation, ToolSpec, async_trait, json};
use pi_tool_mcp::PackServer;
use serde_json::Value;

/// Says ok.
struct Says(ToolSpec);

#[async_trait]
impl AgentTool for Says {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn execute(&self, _call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        Ok(JsonToolResult::text("ok", None))
    }
}

fn declared() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"region": {"$anchor": "regionDef", "type": "string"}},
        "properties": {
            "region": {"$ref": "#/$defs/region"},
            "zone": {"type": "string", "x-mcp-header": "Zone"},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"required": ["phone"]},
        "then": {"required": ["zone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

fn tool(name: &str, schema: Value) -> Arc<dyn AgentTool> {
    let normalized = normalize(schema.clone()).unwrap().schema;
    let schema = ToolSchema::from_json(normalized).with_declared(schema);
    assert!(schema.error().is_none(), "{:?}", schema.error());
    Arc::new(Says(ToolSpec::new(name, "Says ok.", Arc::new(schema)))) as Arc<dyn AgentTool>
}

fn server(schema: Value) -> PackServer {
    let mut pack = ToolPack::new();
    pack.push(ToolOwner::new("declared-test"), tool("ok", schema))
        .unwrap();
    PackServer::new(pack)
}

fn listed(server: &PackServer, index: usize) -> Value {
    Value::Object((*server.listed_tools()[index].input_schema).clone())
}

#[test]
fn by_default_the_listing_is_the_portable_one() {
    let server = server(declared());
    let listed = listed(&server, 0);
    assert!(listed.get("$defs").is_none(), "{listed}");
    assert!(listed.get("$schema").is_none(), "{listed}");
    // The definition is inlined.
    assert!(
        listed["properties"]["region"].get("$ref").is_none(),
        "{listed}"
    );
    assert_eq!(listed["properties"]["region"]["type"], json!("string"));
    assert_eq!(listed["properties"]["zone"]["x-mcp-header"], json!("Zone"));
}

#[test]
fn declared_schemas_are_listed_as_written() {
    let server = server(declared()).list_declared_schemas();
    assert_eq!(listed(&server, 0), declared());
    assert!(
        server.schema_report().is_empty(),
        "{:?}",
        server.schema_report()
    );
    // A tool added while serving is listed the same way.
    server
        .served_tools()
        .add(tool("later", declared()))
        .unwrap();
    assert_eq!(listed(&server, 1), declared());
}

#[test]
fn declared_schemas_still_have_their_param_headers_checked() {
    let mut schema = declared();
    schema["properties"]["zone"]["x-mcp-header"] = json!("Bad Zone");
    let server = server(schema).list_declared_schemas();
    let listed = listed(&server, 0);
    // Left out, and reported, as in the portable listing.
    assert!(
        listed["properties"]["zone"].get("x-mcp-header").is_none(),
        "{listed}"
    );
    assert_eq!(listed["$defs"], declared()["$defs"]);
    let report = server.schema_report();
    assert!(
        report.len() == 1
            && report[0].starts_with("tool \"ok\": error: ")
            && report[0].contains("x-mcp-header"),
        "{report:?}"
    );
}

#[test]
fn a_tool_without_parameters_is_listed_as_by_default() {
    let empty = json!({"type": "object", "properties": {}});
    let plain = server(empty.clone());
    let declared = server(empty).list_declared_schemas();
    assert_eq!(listed(&declared, 0), listed(&plain, 0));
}
