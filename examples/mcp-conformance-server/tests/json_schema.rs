//! `json_schema_2020_12_tool`, the tool of the suite's `json-schema-2020-12` scenario: it
//! is listed with its schema as declared (the suite's fixture, keyword for keyword),
//! while its calls are validated against pi-tool's normalised schema.

use mcp_conformance_server::{server, tools};
use pi_tool::json;
use pi_tool::testing::call_tool;

/// The suite's `inputSchema` for `json_schema_2020_12_tool`, as written in its source.
fn suite_schema() -> serde_json::Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

#[test]
fn the_tool_is_listed_with_the_suites_schema_as_written() {
    let server = server();
    let listed = server.listed_tools();
    let tool = listed
        .iter()
        .find(|t| t.name == "json_schema_2020_12_tool")
        .expect("listed");
    assert_eq!(
        tool.description.as_deref(),
        Some("Tool with JSON Schema 2020-12 features")
    );
    // serde_json's maps compare without order, as the suite does. schemars titles the
    // root with the type's name: one keyword more than the suite's, which it ignores.
    let mut listed = (*tool.input_schema).clone();
    assert_eq!(
        listed.remove("title"),
        Some(json!("JsonSchema202012Params"))
    );
    assert_eq!(serde_json::Value::Object(listed), suite_schema());
    assert!(
        server.schema_report().is_empty(),
        "{:?}",
        server.schema_report()
    );
}

#[test]
fn the_normalised_schema_compiles_and_validates_calls() {
    let pack = tools();
    let tool = pack
        .get("json_schema_2020_12_tool")
        .expect("in the pack")
        .clone();
    assert!(tool.spec().parameters.error().is_none());
    let mut declared = tool.spec().parameters.declared().clone();
    declared.as_object_mut().and_then(|d| d.remove("title"));
    assert_eq!(declared, suite_schema());
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let ok = runtime.block_on(async {
        call_tool(
            tool.clone(),
        json!({"name": "Ada", "contactMethod": "phone", "phone": "555", "address": {"city": "Oslo"}}),
        )
        .await
    });
    assert_eq!(ok.text(), "ok");
    // Asks for a phone call without a phone: `then` requires `phone`, `anyOf` one of
    // `phone`/`email`; an unknown property breaks `additionalProperties: false`.
    let bad = runtime.block_on(async {
        call_tool(tool.clone(), json!({"contactMethod": "phone", "fax": "1"})).await
    });
    assert!(bad.is_error(), "{}", bad.text());
    let text = bad.error_text();
    assert!(
        text.starts_with("Validation failed for tool \"json_schema_2020_12_tool\""),
        "{text}"
    );
    assert!(text.contains("additional properties"), "{text}");
}
