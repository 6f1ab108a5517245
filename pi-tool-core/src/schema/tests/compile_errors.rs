//! Schemas that cannot be used say why, and every call fails with that reason.

use serde_json::{Value, json};

use super::errors;
use crate::error::ToolErrorKind;
use crate::schema::ToolSchema;

// ---------------------------------------------------------------- compile errors

#[test]
fn unusable_schemas_say_why_and_fail_every_call() {
    let cases = [
        (json!("string"), "must be a JSON object or a boolean"),
        (
            json!({"type": "string", "pattern": "("}),
            "invalid regular expression",
        ),
        (
            json!({"patternProperties": {"(?=x)": {}}}),
            "invalid regular expression",
        ),
        (
            json!({"properties": {"a": {"$ref": "#/$defs/Nope"}}}),
            "does not resolve",
        ),
        (
            json!({"$ref": "https://example.com/s.json"}),
            "only local references",
        ),
    ];
    for (s, why) in cases {
        let schema = ToolSchema::from_json(s.clone());
        let error = schema.error().unwrap_or_else(|| panic!("{s} compiled"));
        assert!(error.to_string().contains(why), "{error}");
        let e = schema
            .validate("t", &json!({}))
            .expect_err("unusable schema");
        assert_eq!(e.kind(), ToolErrorKind::InvalidArguments);
        assert!(
            e.message()
                .starts_with("Tool \"t\" has an unusable parameters schema: "),
            "{e}"
        );
    }
}

#[test]
fn deeply_nested_schemas_are_refused() {
    let mut s = json!({"type": "string"});
    for _ in 0..100_000 {
        let mut map = serde_json::Map::new();
        map.insert("items".to_owned(), s);
        s = Value::Object(map);
    }
    let schema = ToolSchema::from_json(s);
    assert!(
        schema
            .error()
            .is_some_and(|e| e.to_string().contains("nests deeper"))
    );
    // The schema keeps its JSON; take it apart without recursion.
    let ToolSchema { json, .. } = schema;
    let mut json = json;
    loop {
        json = match json {
            Value::Object(mut m) => match m.shift_remove("items") {
                Some(inner) => inner,
                None => break,
            },
            _ => break,
        };
    }
}

#[test]
fn self_referencing_applicators_stop_instead_of_overflowing() {
    let s = json!({"allOf": [{"$ref": "#"}]});
    let lines = errors(s, json!(1));
    assert!(
        lines
            .iter()
            .any(|l| l.contains("must not nest schema evaluation deeper")),
        "{lines:?}"
    );
}
