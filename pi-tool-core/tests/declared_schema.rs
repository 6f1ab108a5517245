//! `ToolSchema::declared`: the schema as declared, next to the normalised one calls are
//! validated against; and `$ref`s that are not local are never fetched.

use std::net::TcpListener;

use pi_tool_core::json;
use pi_tool_core::profiles::mcp_declared;
use pi_tool_core::schema::{ToolSchema, normalize};

#[derive(schemars::JsonSchema, serde::Deserialize)]
#[allow(dead_code)]
struct Trip {
    from: Place,
    to: Place,
}

#[derive(schemars::JsonSchema, serde::Deserialize)]
#[allow(dead_code)]
struct Place {
    city: String,
}

#[test]
fn a_generated_schema_keeps_its_defs_as_declared_and_validates_on_the_normalised_one() {
    let schema = ToolSchema::for_type::<Trip>();
    let declared = schema.declared();
    assert_eq!(
        declared["properties"]["from"],
        json!({"$ref": "#/$defs/Place"})
    );
    assert_eq!(
        declared["$defs"]["Place"]["properties"]["city"],
        json!({"type": "string"})
    );
    // The normalised one inlines the definition.
    assert!(schema.json().get("$defs").is_none());
    assert_eq!(
        schema.json()["properties"]["from"]["properties"]["city"],
        json!({"type": "string"})
    );
    assert!(schema.error().is_none());
    assert!(
        schema
            .validate("trip", &json!({"from": {"city": "Oslo"}, "to": {}}))
            .is_err()
    );
}

#[test]
fn a_plain_json_schema_is_its_own_declared_one() {
    let json =
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
    let schema = ToolSchema::from_json(json.clone());
    assert_eq!(schema.declared(), &json);
    // with_declared changes nothing about validation.
    let declared =
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"});
    let schema = schema.with_declared(declared.clone());
    assert_eq!(schema.declared(), &declared);
    assert_eq!(schema.json(), &json);
    assert!(schema.validate("t", &json!({})).is_err());
}

/// A schema whose `$ref` points at the network: nothing fetches it (a listener on that
/// address gets no connection), nothing panics: normalisation keeps it with a warning,
/// and the validator refuses it as it refuses any `$ref` that does not resolve in the
/// document (every call then fails with that error).
#[test]
fn a_network_ref_is_never_fetched() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("non-blocking");
    let port = listener.local_addr().expect("address").port();
    for reference in [
        "https://example.invalid/x.json".to_owned(),
        format!("http://127.0.0.1:{port}/x.json"),
    ] {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"profile": {"$ref": reference}}
        });
        let normalized = normalize(schema.clone()).expect("kept as is");
        assert_eq!(
            normalized.schema["properties"]["profile"]["$ref"],
            json!(reference)
        );
        assert!(
            normalized
                .warnings
                .iter()
                .any(|w| w.contains(&reference) && w.contains("not a local definition")),
            "{:?}",
            normalized.warnings
        );
        let compiled = ToolSchema::from_json(schema.clone());
        let error = compiled.error().expect("a network $ref does not compile");
        assert!(error.to_string().contains("does not resolve"), "{error}");
        // The MCP listing as declared keeps it as written, unresolved.
        let listed = mcp_declared(&schema);
        assert_eq!(listed.schema, schema);
        assert!(listed.errors.is_empty());
    }
    assert!(
        listener.accept().is_err(),
        "something connected to the $ref's address"
    );
}
