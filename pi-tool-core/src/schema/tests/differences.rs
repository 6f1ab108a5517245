//! Deliberate differences from Pi (docs/differences-from-pi.md), one test each.

use serde_json::{Value, json};

use super::{errors, obj, schema, valid};
use crate::schema::ToolSchema;

// ---------------------------------------------------------------- deliberate differences
// Each is listed in docs/differences-from-pi.md.

#[test]
fn difference_a_coerced_root_that_still_fails_is_reported() {
    // Pi returns the uncoerced "5" without validating it; we report the error.
    let s = json!({"type": "number", "minimum": 10});
    assert_eq!(valid(s.clone(), json!("12")), json!(12));
    assert_eq!(errors(s, json!("5")), ["root: must be >= 10"]);
}

#[test]
fn difference_inherited_javascript_names_are_not_properties() {
    // TypeBox's `"toString" in {}` is true in JavaScript; an object has no such key here.
    assert_eq!(
        errors(
            json!({"type": "object", "required": ["toString"]}),
            json!({})
        ),
        ["toString: must have required properties toString"]
    );
}

#[test]
fn difference_union_branches_see_the_whole_schema() {
    // Pi compiles the branch on its own, where `#/$defs/S` does not resolve, so the branch
    // never accepts and the coerced copy is dropped ("v.b: must be number"); here the branch
    // resolves its `$ref` and the coerced copy is taken.
    let s = json!({
        "type": "object",
        "properties": {"v": {"anyOf": [{
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/S"}, "b": {"type": "number"}}
        }]}},
        "$defs": {"S": {"type": "string"}}
    });
    assert_eq!(
        valid(s, json!({"v": {"a": "x", "b": "5"}})),
        json!({"v": {"a": "x", "b": 5}})
    );
}

#[test]
fn difference_some_formats_are_not_checked() {
    for f in [
        "url",
        "iri",
        "iri-reference",
        "idn-email",
        "idn-hostname",
        "json-pointer-uri-fragment",
    ] {
        valid(
            obj(json!({"a": {"type": "string", "format": f}})),
            json!({"a": "not valid at all"}),
        );
    }
}

#[test]
fn difference_regex_dialect() {
    // Look-around does not compile (the schema is unusable); `\d` matches other digits.
    assert!(
        ToolSchema::from_json(json!({"pattern": "(?!x)"}))
            .error()
            .is_some()
    );
    valid(
        obj(json!({"a": {"type": "string", "pattern": "^\\d$"}})),
        json!({"a": "٣"}),
    );
}

#[test]
fn additional_properties_false_counts_keys_when_every_property_is_required() {
    // TypeBox's compiled check (what Pi uses to accept or reject) counts keys in this case,
    // so a required name missing from `properties` is accepted…
    let s = json!({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a", "z"], "additionalProperties": false});
    valid(s, json!({"a": 1, "z": 2}));
    // …and duplicate required names reject a value TypeBox's error walk finds nothing wrong
    // with: Pi then says "Unknown validation error".
    let d = json!({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a", "a"], "additionalProperties": false});
    let e = schema(d)
        .validate("t", &json!({"a": 1}))
        .expect_err("count differs");
    assert_eq!(
        e.message(),
        "Validation failed for tool \"t\":\nUnknown validation error\n\nReceived arguments:\n{\n  \"a\": 1\n}"
    );
}

#[test]
fn many_properties_and_many_keys_stay_fast() {
    let props: serde_json::Map<String, Value> = (0..200)
        .map(|i| (format!("p{i}"), json!({"type": "number"})))
        .collect();
    let s = json!({"type": "object", "properties": props, "additionalProperties": false});
    let mut args: serde_json::Map<String, Value> =
        (0..200).map(|i| (format!("p{i}"), json!(i))).collect();
    valid(s.clone(), Value::Object(args.clone()));
    for i in 0..50_000 {
        args.insert(format!("x{i}"), json!(i));
    }
    let started = std::time::Instant::now();
    assert_eq!(
        errors(s, Value::Object(args)),
        ["root: must not have additional properties"]
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}
