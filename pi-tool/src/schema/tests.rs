//! Unit tests: one or more per keyword, per coercion rule, per null rule, and the limits.
//! The exact texts follow TypeBox 1.3's messages and Pi's path format.

use serde_json::{Value, json};

use super::{MAX_ARGUMENT_DEPTH, ToolSchema};
use crate::error::ToolErrorKind;

fn schema(s: Value) -> ToolSchema {
    let schema = ToolSchema::from_json(s);
    assert_eq!(schema.error(), None);
    schema
}

/// The error lines (`path: message`) for `args`, or a panic if they validate.
fn errors(s: Value, args: Value) -> Vec<String> {
    let e = schema(s).validate("t", &args).expect_err("should fail");
    assert_eq!(e.kind(), ToolErrorKind::InvalidArguments);
    let text = e.message();
    let body = text
        .strip_prefix("Validation failed for tool \"t\":\n")
        .and_then(|t| t.split("\n\nReceived arguments:\n").next())
        .unwrap_or_else(|| panic!("unexpected text: {text}"));
    body.lines()
        .map(|l| l.strip_prefix("  - ").unwrap_or(l).to_owned())
        .collect()
}

fn valid(s: Value, args: Value) -> Value {
    schema(s)
        .validate("t", &args)
        .unwrap_or_else(|e| panic!("should pass: {e}"))
}

fn obj(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

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
        assert!(error.contains(why), "{error}");
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
    assert!(schema.error().is_some_and(|e| e.contains("nests deeper")));
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

// ---------------------------------------------------------------- limits

/// Builds `levels` nested arrays around 0 without recursion.
fn nested(levels: usize) -> Value {
    let mut v = json!(0);
    for _ in 0..levels {
        v = Value::Array(vec![v]);
    }
    v
}

/// Drops a deep value without recursion (serde_json's `Drop` recurses).
fn dismantle(mut v: Value) {
    loop {
        v = match v {
            Value::Array(mut items) => match items.pop() {
                Some(inner) => inner,
                None => return,
            },
            _ => return,
        };
    }
}

#[test]
fn arguments_nested_past_the_limit_are_rejected_without_recursion() {
    let tool = schema(json!({"type": "object"}));
    // Built by hand: `json!` would serialise the interpolated value recursively.
    let mut map = serde_json::Map::new();
    map.insert("a".to_owned(), nested(100_000));
    let deep = Value::Object(map);
    let e = tool.validate("t", &deep).expect_err("too deep");
    assert_eq!(
        e.message(),
        "Validation failed for tool \"t\":\n  - root: must not nest deeper than 128 levels\n\nReceived arguments:\n(not shown: nested deeper than 128 levels)"
    );
    if let Value::Object(mut m) = deep
        && let Some(a) = m.shift_remove("a")
    {
        dismantle(a);
    }
    let just_over = Value::Array(vec![nested(MAX_ARGUMENT_DEPTH)]);
    assert!(tool.validate("t", &just_over).is_err());
    dismantle(just_over);
}

#[test]
fn everything_serde_json_parses_is_within_the_limit() {
    let tool = schema(json!({"type": "array", "items": {"$ref": "#"}}));
    let mut deepest = None;
    for levels in 1..=200 {
        let text = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        match serde_json::from_str::<Value>(&text) {
            Ok(v) => deepest = Some(v),
            Err(_) => break,
        }
    }
    // Deeper text never reaches us: serde_json refuses it.
    let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(serde_json::from_str::<Value>(&text).is_err());
    let deepest = deepest.unwrap_or_default();
    assert_eq!(tool.validate("t", &deepest).ok(), Some(deepest.clone()));
    // The failure path walks the same depth.
    let mut failing = json!(["x"]);
    for _ in 2..MAX_ARGUMENT_DEPTH {
        failing = Value::Array(vec![failing]);
    }
    let e = tool
        .validate("t", &failing)
        .expect_err("a string where an array is required");
    let path = vec!["0"; MAX_ARGUMENT_DEPTH - 1].join(".");
    assert!(
        e.message()
            .contains(&format!("  - {path}: must be array\n")),
        "{e}"
    );
}

// ---------------------------------------------------------------- the shortcut

fn slow(schema: &ToolSchema, args: &Value) -> Result<Value, String> {
    let compiled = schema.compiled.as_ref().map_err(Clone::clone)?;
    schema
        .validate_slow(compiled, "t", args)
        .map_err(|e| e.message().to_owned())
}

#[test]
fn shortcut_agrees_with_the_full_pipeline() {
    // Every scenario schema against every scenario's arguments, plus a few shapes of our own.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/scenarios");
    let mut schemas = vec![
        json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "null"}]}, "b": {"type": ["integer", "null"]}}}),
        json!({"type": "object", "additionalProperties": {"type": "array", "items": {"type": "number"}}}),
    ];
    let mut inputs = vec![
        json!({"a": null, "b": 2.0}),
        json!({"x": [1, "2"]}),
        json!({"b": "3"}),
    ];
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries.flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        let scenario: Value = serde_json::from_str(&text).unwrap_or_default();
        for tool in scenario["tools"].as_array().into_iter().flatten() {
            schemas.push(tool["parameters"].clone());
        }
        for turn in scenario["model"].as_array().into_iter().flatten() {
            for block in turn["content"].as_array().into_iter().flatten() {
                if block["type"] == "toolCall" {
                    inputs.push(block["arguments"].clone());
                }
            }
        }
    }
    assert!(
        schemas.len() > 20 && inputs.len() > 100,
        "{} {}",
        schemas.len(),
        inputs.len()
    );
    // Plus pseudo-random arguments built from the scenarios' keys and tricky scalars.
    let keys: Vec<String> = inputs
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|m| m.keys().cloned())
        .collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..300 {
        inputs.push(random_value(&mut rng, &keys, 3));
    }
    let mut compared = 0;
    for s in &schemas {
        let tool = ToolSchema::from_json(s.clone());
        for args in &inputs {
            let fast = tool.validate("t", args).map_err(|e| e.message().to_owned());
            assert_eq!(fast, slow(&tool, args), "schema {s}\nargs {args}");
            // What validation returns validates again, unchanged.
            if let Ok(v) = &fast {
                assert_eq!(
                    tool.validate("t", v).ok().as_ref(),
                    Some(v),
                    "schema {s}\nargs {args}"
                );
            }
            compared += 1;
        }
    }
    assert!(compared > 10_000);
}

/// xorshift64: deterministic pseudo-random numbers without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn random_value(rng: &mut Rng, keys: &[String], depth: usize) -> Value {
    const SCALARS: &[&str] = &[
        "null",
        "true",
        "false",
        "0",
        "1",
        "-1",
        "2.5",
        "3.0",
        "1e21",
        r#""""#,
        r#"" ""#,
        r#""true""#,
        r#""1""#,
        r#""0x10""#,
        r#""3.7""#,
        r#""abc""#,
        r#""2024-01-31""#,
        r#""a@b.co""#,
        r#""fast""#,
        r#""celsius""#,
        r#""kelvin""#,
        r#""😀e\u0301""#,
        "[]",
        "{}",
    ];
    match rng.next(if depth == 0 { 1 } else { 4 }) {
        0 => serde_json::from_str(SCALARS[rng.next(SCALARS.len())]).unwrap_or_default(),
        1 => Value::Array(
            (0..rng.next(4))
                .map(|_| random_value(rng, keys, depth - 1))
                .collect(),
        ),
        _ => {
            let mut map = serde_json::Map::new();
            for _ in 0..rng.next(5) {
                let key = if keys.is_empty() {
                    "k".to_owned()
                } else {
                    keys[rng.next(keys.len())].clone()
                };
                map.insert(key, random_value(rng, keys, depth - 1));
            }
            Value::Object(map)
        }
    }
}

#[test]
fn schemas_where_pi_reads_more_than_the_validator_take_the_full_pipeline() {
    // Pi coerces a key matched by `patternProperties` with `additionalProperties`, and the
    // pattern's schema then rejects the coerced value.
    let s = json!({
        "type": "object",
        "patternProperties": {"^n": {"type": "string"}},
        "additionalProperties": {"type": "number"}
    });
    let tool = schema(s.clone());
    assert!(!tool.compiled.as_ref().is_ok_and(|c| c.pi_transparent));
    assert_eq!(errors(s, json!({"n1": "5"})), ["n1: must be string"]);
    let prefix =
        json!({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "number"}});
    assert!(
        !schema(prefix.clone())
            .compiled
            .as_ref()
            .is_ok_and(|c| c.pi_transparent)
    );
    // Pi coerces every item with `items`, also those validated by `prefixItems`.
    assert_eq!(errors(prefix, json!(["7", "8"])), ["0: must be string"]);
    assert!(
        schema(obj(json!({"a": {"type": "string"}})))
            .compiled
            .as_ref()
            .is_ok_and(|c| c.pi_transparent)
    );
}

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
