//! TypeBox's `Value.Convert` (`ToolSchema::with_typebox_convert`): the TypeBox column of
//! conformance/SEMANTICS.md §2.2, and what Pi's coercion then adds.

use serde_json::{Value, json};

use super::schema;

/// `{v: ty}` with `v` required, through the TypeBox regime: the value execute gets, or
/// the error lines.
fn converted(ty: Value, input: Value) -> Result<Value, String> {
    let s = json!({"type": "object", "properties": {"v": ty}, "required": ["v"]});
    let tool = schema(s).with_typebox_convert();
    assert!(tool.converts_like_typebox());
    tool.validate("t", &json!({"v": input}))
        .map(|v| v["v"].clone())
        .map_err(|e| {
            let text = e.message().to_owned();
            text.split("\n\nReceived arguments:\n")
                .next()
                .unwrap_or_default()
                .lines()
                .skip(1)
                .map(|l| l.trim_start_matches("  - ").to_owned())
                .collect::<Vec<_>>()
                .join("\n")
        })
}

#[test]
fn a_non_array_is_wrapped_where_the_schema_wants_an_array() {
    let strings = json!({"type": "array", "items": {"type": "string"}});
    assert_eq!(
        converted(strings.clone(), json!("solo")),
        Ok(json!(["solo"]))
    );
    // Items are converted after wrapping.
    assert_eq!(converted(strings.clone(), json!(5)), Ok(json!(["5"])));
    assert_eq!(
        converted(strings, json!([1, true])),
        Ok(json!(["1", "true"]))
    );
    // Pi's edit tool: a string for `edits` fails as its first item, not as the array.
    let edits = json!({"type": "array", "items": {
        "type": "object",
        "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
        "required": ["oldText", "newText"]
    }});
    assert_eq!(
        converted(edits.clone(), json!("not json")),
        Err("v.0: must be object".to_owned())
    );
    assert_eq!(
        converted(edits, json!({"oldText": "a", "newText": 1})),
        Ok(json!([{"oldText": "a", "newText": "1"}]))
    );
    // Without the regime (a plain JSON schema, as Pi treats one) the array is not made.
    let plain = schema(json!({"type": "object", "properties": {"v": {"type": "array"}}}));
    assert!(plain.validate("t", &json!({"v": "solo"})).is_err());
}

#[test]
fn numbers_convert_as_typebox_converts_them() {
    let n = json!({"type": "number"});
    for (input, out) in [
        (json!("24"), json!(24)),
        (json!("0x10"), json!(16)),
        (json!(""), json!(0)),
        (json!("  "), json!(0)),
        (json!("TRUE"), json!(1)),
        (json!("false"), json!(0)),
        (json!("12n"), json!(12)),
        (json!("-7n"), json!(-7)),
        (json!(true), json!(1)),
        (json!(null), json!(0)),
    ] {
        assert_eq!(converted(n.clone(), input.clone()), Ok(out), "{input}");
    }
    for input in [
        json!("abc"),
        json!("Infinity"),
        json!("012n"),
        json!("99999999999999999n"),
    ] {
        assert_eq!(
            converted(n.clone(), input.clone()),
            Err("v: must be number".to_owned()),
            "{input}"
        );
    }
    // Integers are truncated.
    let i = json!({"type": "integer"});
    assert_eq!(converted(i.clone(), json!(3.7)), Ok(json!(3)));
    assert_eq!(converted(i.clone(), json!("-3.7")), Ok(json!(-3)));
    assert_eq!(converted(i, json!(5)), Ok(json!(5)));
}

#[test]
fn booleans_strings_and_nulls_convert_as_typebox_converts_them() {
    let b = json!({"type": "boolean"});
    for (input, out) in [
        (json!("TRUE"), true),
        (json!("False"), false),
        (json!("1"), true),
        (json!("0"), false),
        (json!(1), true),
        (json!(0), false),
        (json!(null), false),
    ] {
        assert_eq!(
            converted(b.clone(), input.clone()),
            Ok(json!(out)),
            "{input}"
        );
    }
    assert_eq!(
        converted(b, json!("yes")),
        Err("v: must be boolean".to_owned())
    );
    let s = json!({"type": "string"});
    assert_eq!(converted(s.clone(), json!(null)), Ok(json!("null")));
    assert_eq!(converted(s.clone(), json!(2.5)), Ok(json!("2.5")));
    assert_eq!(converted(s.clone(), json!(false)), Ok(json!("false")));
    assert_eq!(
        converted(s, json!({"a": 1})),
        Err("v: must be string".to_owned())
    );
    let null = json!({"type": "null"});
    for input in [
        json!(""),
        json!("0"),
        json!("NULL"),
        json!("undefined"),
        json!(0),
        json!(false),
    ] {
        assert_eq!(
            converted(null.clone(), input.clone()),
            Ok(json!(null)),
            "{input}"
        );
    }
    assert!(converted(null, json!("x")).is_err());
}

#[test]
fn literals_unions_and_enums_keep_a_match_and_take_the_first_converted_one() {
    let lit = json!({"type": "number", "const": 1});
    assert_eq!(converted(lit.clone(), json!("1")), Ok(json!(1)));
    assert_eq!(converted(lit.clone(), json!(true)), Ok(json!(1)));
    assert!(converted(lit, json!("2")).is_err());
    let lit = json!({"type": "string", "const": "true"});
    assert_eq!(converted(lit, json!(true)), Ok(json!("true")));
    let union = json!({"anyOf": [{"type": "number"}, {"type": "string"}]});
    assert_eq!(converted(union.clone(), json!("7")), Ok(json!("7")));
    assert_eq!(converted(union.clone(), json!(null)), Ok(json!(0)));
    assert_eq!(converted(union, json!(false)), Ok(json!(0)));
    let e = json!({"enum": ["a", 2, true]});
    assert_eq!(converted(e.clone(), json!("2")), Ok(json!(2)));
    assert_eq!(converted(e.clone(), json!("TRUE")), Ok(json!(true)));
    assert_eq!(converted(e, json!("a")), Ok(json!("a")));
}

#[test]
fn objects_tuples_and_records_convert_inside_and_a_root_is_only_changed_in_place() {
    let tuple = json!({"type": "array", "items": [{"type": "number"}, {"type": "boolean"}]});
    assert_eq!(
        converted(tuple.clone(), json!(["1", "1", "x"])),
        Ok(json!([1, true, "x"]))
    );
    assert!(converted(tuple, json!("1")).is_err());
    // A pattern is wrapped in `^…$` as TypeBox wraps it.
    let record = json!({"type": "object", "patternProperties": {"n_.*": {"type": "number"}}});
    assert_eq!(
        converted(record, json!({"n_a": "3", "b": "3"})),
        Ok(json!({"n_a": 3, "b": "3"}))
    );
    // additionalProperties converts every key some entry does not match.
    let extra = json!({"type": "object", "properties": {"a": {"type": "string"}},
        "additionalProperties": {"type": "number"}});
    assert_eq!(
        converted(extra, json!({"a": 1, "b": "2"})),
        Ok(json!({"a": "1", "b": 2}))
    );
    // Optional properties absent stay absent; Pi's null removal runs first.
    let s =
        json!({"type": "object", "properties": {"o": {"type": "string"}, "r": {"type": "number"}}});
    let tool = schema(s).with_typebox_convert();
    assert_eq!(
        tool.validate("t", &json!({"o": null, "r": "4"})).unwrap(),
        json!({"r": 4})
    );
}
