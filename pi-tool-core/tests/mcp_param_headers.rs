//! `x-mcp-header` (MCP 2026-07-28, SEP-2243): a parameter declared with
//! `#[schemars(extend("x-mcp-header" = "Region"))]` keeps the declaration through the
//! schema pipeline into the `mcp` profile (and only there), and a declaration MCP
//! clients would refuse is an error of the profile, left out of the listed schema.

use pi_tool_core::profiles::Profile;
use pi_tool_core::schema::ToolSchema;
use pi_tool_core::{Tool, ToolError, ToolSpec, json, pi_tool};

#[pi_tool_core::params]
pub struct Query {
    /// The region to query.
    #[schemars(extend("x-mcp-header" = "Region"))]
    pub region: String,
    /// How many rows.
    #[schemars(extend("x-mcp-header" = "Limit"))]
    pub limit: u32,
    /// The query text.
    pub text: String,
}

/// Runs a query in a region.
#[pi_tool]
pub async fn run_query(params: Query) -> Result<String, ToolError> {
    Ok(format!("{} in {}", params.text, params.region))
}

#[test]
fn a_declared_header_reaches_the_mcp_profile_and_no_provider() {
    let spec = ToolSpec::of::<RunQuery>();
    let outcome = Profile::Mcp.apply(spec.parameters.json());
    assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
    assert_eq!(
        outcome.schema["properties"]["region"]["x-mcp-header"],
        json!("Region")
    );
    assert_eq!(
        outcome.schema["properties"]["limit"]["x-mcp-header"],
        json!("Limit")
    );
    for provider in [Profile::Anthropic, Profile::OpenAi, Profile::Gemini] {
        let schema = provider.apply(spec.parameters.json()).schema;
        assert!(
            !schema.to_string().contains("x-mcp-header"),
            "{provider}: {schema}"
        );
    }
    assert_eq!(RunQuery::NAME, "run_query");
}

/// The `mcp` profile's errors for `properties`, and whether the listed schema kept each
/// declaration.
fn errors_of(properties: pi_tool_core::Value) -> (Vec<String>, pi_tool_core::Value) {
    let schema = ToolSchema::from_json(json!({"type": "object", "properties": properties}));
    let outcome = Profile::Mcp.apply(schema.json());
    (
        outcome.errors.iter().map(ToString::to_string).collect(),
        outcome.schema,
    )
}

#[test]
fn a_bad_declaration_is_an_error_and_is_left_out() {
    let (errors, schema) = errors_of(json!({"r": {"type": "string", "x-mcp-header": "Re gion"}}));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("`r` (/properties/r)") && errors[0].contains("not an HTTP header name"),
        "{errors:?}"
    );
    assert!(
        schema["properties"]["r"].get("x-mcp-header").is_none(),
        "{schema}"
    );

    let (errors, _) = errors_of(json!({"r": {"type": "string", "x-mcp-header": ""}}));
    assert!(errors[0].contains("empty `x-mcp-header`"), "{errors:?}");

    let (errors, _) = errors_of(json!({"r": {"type": "string", "x-mcp-header": 7}}));
    assert!(errors[0].contains("must be a string"), "{errors:?}");

    for ty in [json!("number"), json!("array"), json!(["string", "null"])] {
        let (errors, _) = errors_of(json!({"r": {"type": ty, "x-mcp-header": "R"}}));
        assert_eq!(errors.len(), 1, "{ty}: {errors:?}");
        assert!(
            errors[0].contains("only `string`, `integer` and `boolean`"),
            "{errors:?}"
        );
    }
    for ty in ["string", "integer", "boolean"] {
        let (errors, _) = errors_of(json!({"r": {"type": ty, "x-mcp-header": "R"}}));
        assert!(errors.is_empty(), "{ty}: {errors:?}");
    }

    let (errors, schema) = errors_of(json!({
        "a": {"type": "string", "x-mcp-header": "Region"},
        "b": {"type": "string", "x-mcp-header": "region"}
    }));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("`b`") && errors[0].contains("`a` (/properties/a) declares already"),
        "{errors:?}"
    );
    assert_eq!(schema["properties"]["a"]["x-mcp-header"], json!("Region"));
    assert!(
        schema["properties"]["b"].get("x-mcp-header").is_none(),
        "{schema}"
    );

    let (errors, _) = errors_of(json!({
        "tags": {"type": "array", "items": {"type": "string", "x-mcp-header": "Tag"}}
    }));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("through `properties` alone"),
        "{errors:?}"
    );

    // Nested objects reached through `properties` alone may declare headers.
    let (errors, _) = errors_of(json!({
        "where": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}
        }}
    }));
    assert!(errors.is_empty(), "{errors:?}");
}
