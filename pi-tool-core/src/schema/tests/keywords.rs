//! One or more tests per validation keyword, with TypeBox's exact messages and order.

use serde_json::{Value, json};

use super::{errors, obj, valid};

// ---------------------------------------------------------------- type

#[test]
fn type_single_and_array() {
    assert_eq!(
        errors(obj(json!({"a": {"type": "string"}})), json!({"a": []})),
        ["a: must be string"]
    );
    assert_eq!(
        errors(
            obj(json!({"a": {"type": ["string", "null"]}})),
            json!({"a": {}})
        ),
        ["a: must be either string or null"]
    );
    assert_eq!(
        errors(json!({"type": "object"}), json!([1])),
        ["root: must be object"]
    );
    assert_eq!(
        errors(json!({"type": "object"}), json!(null)),
        ["root: must be object"]
    );
    // Unknown type names accept anything; TypeBox's extended names accept no JSON value.
    valid(obj(json!({"a": {"type": "uint32"}})), json!({"a": []}));
    assert_eq!(
        errors(obj(json!({"a": {"type": "bigint"}})), json!({"a": []})),
        ["a: must be bigint"]
    );
}

#[test]
fn integer_accepts_integral_floats_and_normalises_them() {
    let s = obj(json!({"n": {"type": "integer"}, "f": {"type": "number"}}));
    let v = valid(
        s.clone(),
        serde_json::from_str(r#"{"n": 5.0, "f": 2.0}"#).unwrap_or_default(),
    );
    assert_eq!(v, json!({"n": 5, "f": 2}));
    assert!(v["n"].is_u64() && v["f"].is_u64());
    assert_eq!(errors(s, json!({"n": 5.5})), ["n: must be integer"]);
}

#[test]
fn type_failure_does_not_stop_other_keywords() {
    // TypeBox evaluates every keyword; `enum` still reports.
    assert_eq!(
        errors(
            obj(json!({"a": {"type": "string", "enum": ["x"]}})),
            json!({"a": []})
        ),
        [
            "a: must be string",
            "a: must be equal to one of the allowed values"
        ]
    );
}

// ---------------------------------------------------------------- objects

#[test]
fn required_lists_every_missing_name_at_the_first() {
    let s = json!({"type": "object", "required": ["a", "b", "c"], "properties": {"nested": {"type": "object", "required": ["x"]}}});
    assert_eq!(
        errors(s.clone(), json!({"b": 1})),
        ["a: must have required properties a, c"]
    );
    assert_eq!(
        errors(s, json!({"a": 1, "b": 1, "c": 1, "nested": {}})),
        ["nested.x: must have required properties x"]
    );
}

#[test]
fn errors_come_in_typebox_order() {
    let s = json!({
        "type": "object",
        "required": ["a", "zz"],
        "additionalProperties": false,
        "properties": {"a": {"type": "string", "minLength": 3, "pattern": "^x"}, "b": {"type": "number"}}
    });
    assert_eq!(
        errors(s, json!({"b": "no", "extra": 1, "a": "y"})),
        [
            "zz: must have required properties zz",
            "root: must not have additional properties",
            "a: must not have fewer than 3 characters",
            "a: must match pattern \"^x\"",
            "b: must be number",
        ]
    );
}

#[test]
fn additional_properties_schema_gives_one_line() {
    let s = json!({"type": "object", "properties": {"k": {}}, "additionalProperties": {"type": "number"}});
    assert_eq!(
        valid(s.clone(), json!({"k": "s", "a": "1"})),
        json!({"k": "s", "a": 1})
    );
    assert_eq!(
        errors(s, json!({"a": "x", "b": "y"})),
        ["root: must not have additional properties"]
    );
}

#[test]
fn pattern_properties_and_property_names() {
    let s = json!({
        "type": "object",
        "patternProperties": {"^n_": {"type": "number"}},
        "additionalProperties": false,
        "propertyNames": {"maxLength": 4}
    });
    valid(s.clone(), json!({"n_a": 1}));
    assert_eq!(
        errors(s.clone(), json!({"n_a": "x"})),
        ["n_a: must be number"]
    );
    assert_eq!(
        errors(s, json!({"n_abc": 1, "zz": 1})),
        [
            "root: must not have additional properties",
            "root: property names n_abc are invalid"
        ]
    );
}

#[test]
fn min_and_max_properties() {
    let s = json!({"type": "object", "minProperties": 1, "maxProperties": 2});
    assert_eq!(
        errors(s.clone(), json!({})),
        ["root: must not have fewer than 1 properties"]
    );
    assert_eq!(
        errors(s, json!({"a": 1, "b": 2, "c": 3})),
        ["root: must not have more than 2 properties"]
    );
}

#[test]
fn dependent_required_and_dependencies() {
    let s = json!({"type": "object", "dependentRequired": {"card": ["cvv", "exp"]}});
    valid(s.clone(), json!({"card": 1, "cvv": 1, "exp": 1}));
    assert_eq!(
        errors(s, json!({"card": 1})),
        [
            "root: must have properties cvv, exp when property card is present",
            "root: must have properties cvv, exp when property card is present",
        ]
    );
    let d = json!({"type": "object", "dependencies": {"a": ["b", "c"], "x": {"required": ["y"]}}});
    assert_eq!(
        errors(d, json!({"a": 1, "x": 1})),
        [
            "root: must have properties b, c when property a is present",
            "y: must have required properties y"
        ]
    );
}

#[test]
fn dependent_schemas() {
    let s = json!({"type": "object", "dependentSchemas": {"a": {"properties": {"b": {"type": "string"}}}}});
    valid(s.clone(), json!({"b": 1}));
    assert_eq!(errors(s, json!({"a": 1, "b": 1})), ["b: must be string"]);
}

#[test]
fn unevaluated_properties_with_all_of_as_schemars_flatten_emits() {
    // `#[serde(flatten)]` + `deny_unknown_fields`: properties, an allOf branch, and
    // `unevaluatedProperties: false`.
    let s = json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "allOf": [{"properties": {"b": {"type": "number"}}}],
        "anyOf": [{"properties": {"c": {"const": 1}}, "required": ["c"]}, {"properties": {"d": {}}}],
        "patternProperties": {"^x-": true},
        "unevaluatedProperties": false
    });
    valid(
        s.clone(),
        json!({"a": "s", "b": 1, "c": 1, "d": 2, "x-y": 0}),
    );
    assert_eq!(
        errors(s.clone(), json!({"a": "s", "z": 1})),
        ["root: must not have unevaluated properties"]
    );
    // A key evaluated only by a failing branch stays unevaluated.
    assert_eq!(
        errors(
            json!({"anyOf": [{"properties": {"a": {"type": "string"}}}], "unevaluatedProperties": false}),
            json!({"a": 1})
        ),
        [
            "a: must be string",
            "root: must match a schema in anyOf",
            "root: must not have unevaluated properties"
        ]
    );
}

#[test]
fn unevaluated_items() {
    let s =
        json!({"type": "array", "prefixItems": [{"type": "number"}], "unevaluatedItems": false});
    valid(s.clone(), json!([1]));
    assert_eq!(
        errors(s, json!([1, 2])),
        ["root: must not have unevaluated items"]
    );
}

// ---------------------------------------------------------------- arrays

#[test]
fn items_prefix_items_and_counts() {
    let s = json!({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "number"}, "minItems": 2, "maxItems": 3});
    valid(s.clone(), json!(["a", 1, 2]));
    assert_eq!(
        errors(s.clone(), json!(["a"])),
        ["root: must not have fewer than 2 items"]
    );
    assert_eq!(
        errors(s, json!([1, "b", 2, 3])),
        [
            "1: must be number",
            "root: must not have more than 3 items",
            "0: must be string"
        ]
    );
    let nested =
        obj(json!({"list": {"type": "array", "items": {"type": "object", "required": ["id"]}}}));
    assert_eq!(
        errors(nested, json!({"list": [{"id": 1}, {}]})),
        ["list.1.id: must have required properties id"]
    );
}

#[test]
fn positional_items_and_additional_items() {
    let s = json!({"type": "array", "items": [{"type": "string"}, {"type": "number"}], "additionalItems": false});
    valid(s.clone(), json!(["a", 1]));
    assert_eq!(
        errors(s, json!(["a", 1, true, false])),
        ["2: schema is false"]
    );
}

#[test]
fn unique_items_uses_javascript_equality() {
    let s = json!({"type": "array", "uniqueItems": true});
    valid(s.clone(), json!([1, "1", {"a": 1}, {"a": 2}]));
    assert_eq!(
        errors(s.clone(), json!([1, 1.0])),
        ["root: must not have duplicate items"]
    );
    assert_eq!(
        errors(s.clone(), json!([{"a": 1, "b": 2}, {"b": 2, "a": 1}])),
        ["root: must not have duplicate items"]
    );
    let many: Vec<Value> = (0..1000).map(|i| json!({"i": i})).collect();
    valid(s.clone(), Value::Array(many.clone()));
    let mut dup = many;
    dup.push(json!({"i": 500}));
    assert_eq!(
        errors(s, Value::Array(dup)),
        ["root: must not have duplicate items"]
    );
}

#[test]
fn contains_min_and_max_contains() {
    let s = json!({"type": "array", "contains": {"type": "string"}});
    valid(s.clone(), json!([1, "a"]));
    assert_eq!(
        errors(s, json!([1, 2])),
        ["root: must contain at least 1 valid item"]
    );
    let m = json!({"type": "array", "contains": {"type": "string"}, "minContains": 2, "maxContains": 3});
    valid(m.clone(), json!(["a", "b"]));
    assert_eq!(
        errors(m.clone(), json!(["a"])),
        ["root: must contain at least 1 valid item"]
    );
    assert_eq!(
        errors(m, json!(["a", "b", "c", "d"])),
        ["root: must contain at least 1 valid item"]
    );
    valid(
        json!({"contains": {"type": "string"}, "minContains": 0}),
        json!([]),
    );
}

// ---------------------------------------------------------------- strings

#[test]
fn lengths_count_like_typebox() {
    let s = obj(json!({"a": {"type": "string", "minLength": 2, "maxLength": 3}}));
    valid(s.clone(), json!({"a": "😀😀"}));
    valid(s.clone(), json!({"a": "e\u{301}e\u{301}"}));
    assert_eq!(
        errors(s.clone(), json!({"a": "😀"})),
        ["a: must not have fewer than 2 characters"]
    );
    assert_eq!(
        errors(s, json!({"a": "abcd"})),
        ["a: must not have more than 3 characters"]
    );
}

#[test]
fn pattern_is_unanchored_search() {
    let s = obj(json!({"a": {"type": "string", "pattern": "b+"}}));
    valid(s.clone(), json!({"a": "abbc"}));
    assert_eq!(
        errors(s, json!({"a": "ac"})),
        ["a: must match pattern \"b+\""]
    );
}

#[test]
fn formats_are_enforced_and_unknown_ones_ignored() {
    let s = obj(json!({
        "e": {"type": "string", "format": "email"},
        "d": {"type": "string", "format": "date-time"},
        "i": {"type": "string", "format": "ipv4"},
        "u": {"type": "integer", "format": "uint32"}
    }));
    valid(
        s.clone(),
        json!({"e": "a@b.co", "d": "2024-01-31T10:00:00Z", "i": "10.0.0.1", "u": 5}),
    );
    assert_eq!(
        errors(s, json!({"e": "x", "d": "2024-01-31", "i": "1.2.3"})),
        [
            "e: must match format \"email\"",
            "d: must match format \"date-time\"",
            "i: must match format \"ipv4\""
        ]
    );
}

#[test]
fn string_keywords_apply_only_to_strings() {
    // Without `type`, a number passes `minLength`.
    valid(obj(json!({"a": {"minLength": 3}})), json!({"a": 1}));
}

// ---------------------------------------------------------------- numbers

#[test]
fn number_bounds() {
    let s = obj(json!({
        "a": {"type": "number", "minimum": 1, "maximum": 10},
        "b": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1.5}
    }));
    valid(s.clone(), json!({"a": 1, "b": 1.25}));
    assert_eq!(
        errors(s.clone(), json!({"a": 0.5, "b": 0})),
        ["a: must be >= 1", "b: must be > 0"]
    );
    assert_eq!(
        errors(s, json!({"a": 11, "b": 1.5})),
        ["a: must be <= 10", "b: must be < 1.5"]
    );
}

#[test]
fn multiple_of_has_typebox_tolerance() {
    let s = obj(
        json!({"a": {"type": "number", "multipleOf": 0.1}, "b": {"type": "integer", "multipleOf": 3}}),
    );
    valid(s.clone(), json!({"a": 0.3, "b": 9}));
    assert_eq!(
        errors(s.clone(), json!({"a": 0.35})),
        ["a: must be multiple of 0.1"]
    );
    assert_eq!(errors(s, json!({"b": 4})), ["b: must be multiple of 3"]);
}

#[test]
fn big_limits_print_like_javascript() {
    let s = obj(json!({"a": {"type": "number", "maximum": 1e21}}));
    assert_eq!(errors(s, json!({"a": 1e22})), ["a: must be <= 1e+21"]);
}

// ---------------------------------------------------------------- in-place applicators

#[test]
fn const_and_enum_use_deep_equality() {
    let s = obj(json!({"c": {"const": {"x": [1, 2]}}, "e": {"enum": ["a", 1, null, [1]]}}));
    valid(s.clone(), json!({"c": {"x": [1.0, 2]}, "e": [1]}));
    valid(s.clone(), json!({"e": null}));
    assert_eq!(
        errors(s, json!({"c": {"x": [2, 1]}, "e": "A"})),
        [
            "c: must be equal to constant",
            "e: must be equal to one of the allowed values"
        ]
    );
}

#[test]
fn any_of_one_of_all_of() {
    // (A plain `{"type": "string"}` branch would coerce 1 to "1" and pass.)
    let any = obj(
        json!({"a": {"anyOf": [{"type": "string", "minLength": 3}, {"type": "number", "minimum": 5}]}}),
    );
    assert_eq!(
        errors(any, json!({"a": 1})),
        [
            "a: must be string",
            "a: must be >= 5",
            "a: must match a schema in anyOf"
        ]
    );
    let one = obj(json!({"a": {"oneOf": [{"type": "number"}, {"minimum": 0}]}}));
    valid(one.clone(), json!({"a": -1}));
    assert_eq!(
        errors(one, json!({"a": 1})),
        ["a: must match exactly one schema in oneOf"]
    );
    let all = obj(json!({"a": {"allOf": [{"type": "number"}, {"minimum": 3}, {"maximum": 1}]}}));
    assert_eq!(
        errors(all, json!({"a": 2})),
        ["a: must be >= 3", "a: must be <= 1"]
    );
}

#[test]
fn not_and_if_then_else() {
    assert_eq!(
        errors(
            obj(json!({"a": {"not": {"type": "string"}}})),
            json!({"a": "x"})
        ),
        ["a: must not be valid"]
    );
    let s = obj(json!({"a": {
        "if": {"type": "string"},
        "then": {"minLength": 2},
        "else": {"type": "number", "minimum": 10}
    }}));
    valid(s.clone(), json!({"a": "ab"}));
    valid(s.clone(), json!({"a": 12}));
    // A failing `then` reports only the `if` line; a failing `else` keeps its own errors.
    assert_eq!(
        errors(s.clone(), json!({"a": "x"})),
        ["a: must match \"then\" schema"]
    );
    assert_eq!(
        errors(s, json!({"a": 3})),
        ["a: must be >= 10", "a: must match \"else\" schema"]
    );
}

#[test]
fn refs_defs_and_root_recursion() {
    let tree = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}},
        "required": ["name"]
    });
    valid(
        tree.clone(),
        json!({"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}),
    );
    assert_eq!(
        errors(
            tree,
            json!({"name": "a", "children": [{"name": "b", "children": [{}]}]})
        ),
        ["children.0.children.0.name: must have required properties name"]
    );
    let defs = json!({
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/Point"}, "q": {"$ref": "#/definitions/Q%20R"}},
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}},
        "definitions": {"Q R": {"enum": [1]}}
    });
    valid(defs.clone(), json!({"p": {"x": 1}, "q": 1}));
    assert_eq!(
        errors(defs, json!({"p": {"x": "1x"}, "q": 2})),
        [
            "p.x: must be number",
            "q: must be equal to one of the allowed values"
        ]
    );
}

#[test]
fn boolean_schemas() {
    valid(json!(true), json!("anything"));
    assert_eq!(errors(json!(false), json!({})), ["root: schema is false"]);
    assert_eq!(
        errors(obj(json!({"a": false})), json!({"a": 1})),
        ["a: schema is false"]
    );
}

#[test]
fn at_most_eight_errors() {
    let props: serde_json::Map<String, Value> = (0..12)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let args: serde_json::Map<String, Value> =
        (0..12).map(|i| (format!("p{i}"), json!([]))).collect();
    let lines = errors(obj(Value::Object(props)), Value::Object(args));
    assert_eq!(lines.len(), 8);
    assert_eq!(lines[7], "p7: must be string");
}

#[test]
fn ill_typed_keywords_are_ignored_like_typebox() {
    valid(
        obj(json!({"a": {"type": "string", "minLength": "5", "required": "x"}})),
        json!({"a": "b"}),
    );
}

/// A map schemars generates for integer keys (`HashMap<u32, V>`, `HashMap<i64, V>`): a key
/// that is not an integer is refused with a text that says what the keys are, not
/// TypeBox's "must not have additional properties" (issue 22). Any other pattern, an
/// `additionalProperties` schema or declared properties keep TypeBox's text.
#[test]
fn integer_keyed_maps_say_what_the_keys_are() {
    let unsigned = json!({
        "type": "object",
        "patternProperties": {r"^\d+$": {"type": "string"}},
        "additionalProperties": false
    });
    valid(unsigned.clone(), json!({"1": "a", "20": "b"}));
    assert_eq!(
        errors(unsigned.clone(), json!({"1": "a", "abc": "b"})),
        [
            "root: property name abc is not an integer 0 or greater: the keys of this map are integers 0 or greater"
        ]
    );
    assert_eq!(
        errors(unsigned.clone(), json!({"-1": "a", "x": "b"})),
        [
            "root: property names -1, x are not integers 0 or greater: the keys of this map are integers 0 or greater"
        ]
    );
    // A value of an integer key is still checked against the value schema.
    assert_eq!(errors(unsigned, json!({"1": 2})), ["1: must be string"]);
    let signed = json!({
        "type": "object",
        "patternProperties": {r"^-?\d+$": {"type": "string"}},
        "additionalProperties": false
    });
    valid(signed.clone(), json!({"-1": "a"}));
    assert_eq!(
        errors(signed, json!({"1.5": "a"})),
        ["root: property name 1.5 is not an integer: the keys of this map are integers"]
    );
    // TypeBox's own integer record pattern, and other shapes, keep TypeBox's text.
    for s in [
        json!({"type": "object", "patternProperties": {"^-?(?:0|[1-9][0-9]*)$": {}}, "additionalProperties": false}),
        json!({"type": "object", "patternProperties": {r"^\d+$": {}}, "properties": {"k": {}}, "additionalProperties": false}),
        json!({"type": "object", "patternProperties": {r"^\d+$": {}}, "additionalProperties": {"type": "number"}}),
    ] {
        assert_eq!(
            errors(s, json!({"abc": "x"})),
            ["root: must not have additional properties"]
        );
    }
}
