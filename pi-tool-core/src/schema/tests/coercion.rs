//! Pi's coercion rules (`coercePrimitiveByType`, unions, nesting) and null removal.

use serde_json::{Value, json};

use super::{errors, schema, valid};

// ---------------------------------------------------------------- coercion (Pi's rules)

fn coerced(ty: Value, input: Value) -> Result<Value, Vec<String>> {
    let s = json!({"type": "object", "properties": {"v": ty}, "required": ["v"]});
    let tool = schema(s);
    match tool.validate("t", &json!({"v": input})) {
        Ok(v) => Ok(v["v"].clone()),
        Err(_) => Err(errors(tool.json().clone(), json!({"v": input}))),
    }
}

#[test]
fn coerces_numbers() {
    let n = json!({"type": "number"});
    for (input, out) in [
        (json!("24"), json!(24)),
        (json!(" 24 "), json!(24)),
        (json!("0x10"), json!(16)),
        (json!("1e3"), json!(1000)),
        (json!("-2.5"), json!(-2.5)),
        (json!(true), json!(1)),
        (json!(false), json!(0)),
        (json!(null), json!(0)),
    ] {
        assert_eq!(coerced(n.clone(), input.clone()), Ok(out), "{input}");
    }
    for input in [
        json!(""),
        json!("  "),
        json!("abc"),
        json!("Infinity"),
        json!("1e999"),
        json!([1]),
    ] {
        assert_eq!(
            coerced(n.clone(), input.clone()),
            Err(vec!["v: must be number".to_owned()]),
            "{input}"
        );
    }
}

#[test]
fn coerces_integers_only_when_integral() {
    let i = json!({"type": "integer"});
    assert_eq!(coerced(i.clone(), json!("3")), Ok(json!(3)));
    assert_eq!(coerced(i.clone(), json!("3.0")), Ok(json!(3)));
    assert_eq!(coerced(i.clone(), json!(true)), Ok(json!(1)));
    assert_eq!(coerced(i.clone(), json!(null)), Ok(json!(0)));
    assert_eq!(
        coerced(i.clone(), json!("3.7")),
        Err(vec!["v: must be integer".to_owned()])
    );
    assert_eq!(
        coerced(i, json!(3.7)),
        Err(vec!["v: must be integer".to_owned()])
    );
}

#[test]
fn coerces_booleans_strictly() {
    let b = json!({"type": "boolean"});
    for (input, out) in [
        (json!("true"), true),
        (json!("false"), false),
        (json!(1), true),
        (json!(0), false),
        (json!(null), false),
    ] {
        assert_eq!(coerced(b.clone(), input), Ok(json!(out)));
    }
    for input in [json!("TRUE"), json!("1"), json!(2), json!("yes"), json!([])] {
        assert_eq!(
            coerced(b.clone(), input),
            Err(vec!["v: must be boolean".to_owned()])
        );
    }
}

#[test]
fn coerces_strings() {
    let s = json!({"type": "string"});
    for (input, out) in [
        (json!(42), "42"),
        (json!(3.5), "3.5"),
        (json!(1e21), "1e+21"),
        (json!(false), "false"),
        (json!(null), ""),
    ] {
        assert_eq!(coerced(s.clone(), input), Ok(json!(out)));
    }
    assert_eq!(
        coerced(s, json!({"a": 1})),
        Err(vec!["v: must be string".to_owned()])
    );
}

#[test]
fn coerces_to_null() {
    let n = json!({"type": "null"});
    for input in [json!(""), json!(0), json!(false), json!(null)] {
        assert_eq!(coerced(n.clone(), input), Ok(Value::Null));
    }
    assert_eq!(
        coerced(n, json!("x")),
        Err(vec!["v: must be null".to_owned()])
    );
}

#[test]
fn type_arrays_keep_matching_values_and_take_the_first_change() {
    let t = json!({"type": ["number", "string"]});
    assert_eq!(coerced(t.clone(), json!("5")), Ok(json!("5")));
    assert_eq!(coerced(t, json!(true)), Ok(json!(1)));
    assert_eq!(
        coerced(json!({"type": ["boolean", "number"]}), json!("1")),
        Ok(json!(1))
    );
}

#[test]
fn unions_keep_accepted_values_else_take_the_first_coercible_member() {
    let u = json!({"anyOf": [{"type": "boolean"}, {"type": "number"}]});
    assert_eq!(coerced(u.clone(), json!(5)), Ok(json!(5)));
    assert_eq!(coerced(u.clone(), json!("true")), Ok(json!(true)));
    assert_eq!(coerced(u, json!("7")), Ok(json!(7)));
    let o = json!({"oneOf": [{"type": "integer"}, {"type": "string", "maxLength": 1}]});
    assert_eq!(coerced(o, json!("9")), Ok(json!("9")));
}

#[test]
fn all_of_members_coerce_in_sequence() {
    assert_eq!(
        coerced(
            json!({"allOf": [{"type": "string"}, {"maxLength": 2}]}),
            json!(12)
        ),
        Ok(json!("12"))
    );
}

#[test]
fn nested_objects_arrays_and_maps_coerce() {
    let s = json!({"type": "object", "properties": {
        "o": {"type": "object", "properties": {"n": {"type": "number"}}, "additionalProperties": {"type": "boolean"}},
        "a": {"type": "array", "items": {"type": "string"}},
        "t": {"type": "array", "items": [{"type": "number"}, {"type": "boolean"}]}
    }});
    assert_eq!(
        valid(
            s,
            json!({"o": {"n": "1", "x": "true"}, "a": [1, true], "t": ["2", 1, "z"]})
        ),
        json!({"o": {"n": 1, "x": true}, "a": ["1", "true"], "t": [2, true, "z"]})
    );
}

#[test]
fn properties_are_not_coerced_without_type_object() {
    // Pi coerces properties only when `type` names `object`.
    let s = json!({"properties": {"n": {"type": "number"}}});
    assert_eq!(errors(s, json!({"n": "1"})), ["n: must be number"]);
}

#[test]
fn refs_are_not_followed_by_coercion() {
    let s = json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/N"}}, "$defs": {"N": {"type": "number"}}});
    assert_eq!(errors(s, json!({"p": "1"})), ["p: must be number"]);
}

#[test]
fn received_arguments_are_the_prepared_ones_before_coercion() {
    let tool = schema(
        json!({"type": "object", "properties": {"n": {"type": "number"}, "b": {"type": "boolean"}}}),
    );
    let e = tool
        .validate("t", &json!({"n": "1", "b": "yes", "x": 2.0}))
        .expect_err("b fails");
    assert_eq!(
        e.message(),
        "Validation failed for tool \"t\":\n  - b: must be boolean\n\nReceived arguments:\n{\n  \"n\": \"1\",\n  \"b\": \"yes\",\n  \"x\": 2\n}"
    );
}

#[test]
fn the_callers_value_is_never_changed() {
    let tool = schema(
        json!({"type": "object", "properties": {"n": {"type": "number"}, "o": {"type": "string"}}}),
    );
    let args = json!({"n": "1", "o": null});
    assert_eq!(tool.validate("t", &args).ok(), Some(json!({"n": 1})));
    assert_eq!(args, json!({"n": "1", "o": null}));
}

// ---------------------------------------------------------------- optional nulls

#[test]
fn optional_nulls_are_dropped_when_the_schema_rejects_null() {
    let s = json!({"type": "object", "required": ["r"], "properties": {
        "r": {"type": "string"},
        "o": {"type": "number"},
        "nullable": {"type": ["string", "null"]},
        "any": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "reference": {"$ref": "#/$defs/S"},
        "list": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}}}}
    }, "$defs": {"S": {"type": "string"}}});
    assert_eq!(
        valid(
            s.clone(),
            json!({"r": null, "o": null, "nullable": null, "any": null, "list": [{"x": null}]})
        ),
        json!({"r": "", "nullable": null, "any": null, "list": [{}]})
    );
    // A `$ref` property keeps its null (and then fails).
    assert_eq!(
        errors(s, json!({"r": "a", "reference": null})),
        ["reference: must be string"]
    );
}
