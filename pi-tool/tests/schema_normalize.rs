//! N0–N6 on real schemars output: snapshots of the catalogue plus rule-by-rule checks.

mod common;

use common::catalogue::{self, *};
use common::snapshot;
use pi_tool::JsonSchema;
use pi_tool::schema::ToolSchema;
use pi_tool::schema::{SchemaError, normalize};
use serde_json::{Value, json};

fn norm<T: JsonSchema>() -> Value {
    normalize(pi_tool::schema::generate::<T>())
        .map(|n| n.schema)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn catalogue_snapshots() {
    let mut mismatches = Vec::new();
    for (name, raw) in catalogue::object_cases() {
        mismatches.extend(snapshot::check("raw", name, &raw));
        match normalize(raw) {
            Ok(n) => {
                let shown = json!({
                    "schema": n.schema,
                    "root_description": n.root_description,
                    "warnings": n.warnings,
                });
                mismatches.extend(snapshot::check("normalized", name, &shown));
            }
            Err(e) => mismatches.push(format!("{name}: unexpected error {e}")),
        }
    }
    snapshot::assert_all(mismatches);
}

#[test]
fn catalogue_has_at_least_25_object_types() {
    assert!(catalogue::object_cases().len() >= 25);
}

/// Invariants every normalised schema keeps, whatever the type.
#[test]
fn normalised_schemas_keep_the_invariants() {
    for (name, raw) in catalogue::object_cases() {
        let n = normalize(raw).unwrap_or_else(|e| panic!("{name}: {e}"));
        let root = n.schema.as_object().expect("object root");
        assert_eq!(root.get("type"), Some(&json!("object")), "{name}");
        assert!(
            root.get("properties").is_some_and(Value::is_object),
            "{name}"
        );
        for key in ["$schema", "title", "description", "oneOf", "anyOf"] {
            assert!(!root.contains_key(key), "{name}: root keeps {key}");
        }
        let mut problems = Vec::new();
        walk(&n.schema, "", &mut |path, node| {
            if let Some(f) = node.get("format").and_then(Value::as_str)
                && [
                    "int32", "uint32", "int64", "uint64", "uint8", "double", "float", "uint", "int",
                ]
                .contains(&f)
            {
                problems.push(format!("{path}: numeric format {f}"));
            }
            if let Some(Value::String(r)) = node.get("$ref") {
                let defs = root.get("$defs").and_then(Value::as_object);
                let ok = r == "#"
                    || r.strip_prefix("#/$defs/")
                        .is_some_and(|d| defs.is_some_and(|defs| defs.contains_key(d)));
                if !ok {
                    problems.push(format!("{path}: dangling $ref {r}"));
                }
            }
        });
        assert!(problems.is_empty(), "{name}: {problems:?}");
    }
}

fn walk(v: &Value, path: &str, f: &mut impl FnMut(&str, &serde_json::Map<String, Value>)) {
    match v {
        Value::Object(m) => {
            f(path, m);
            for (k, child) in m {
                if matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                    continue;
                }
                walk(child, &format!("{path}/{k}"), f);
            }
        }
        Value::Array(list) => {
            for (i, child) in list.iter().enumerate() {
                walk(child, &format!("{path}/{i}"), f);
            }
        }
        _ => {}
    }
}

#[test]
fn n0_root_metadata_is_removed_and_description_returned() {
    let n = normalize(pi_tool::schema::generate::<Validations>()).unwrap();
    assert_eq!(
        n.root_description.as_deref(),
        Some("Search the web.\n\nSecond paragraph of the doc.")
    );
    let root = n.schema.as_object().unwrap();
    assert!(!root.contains_key("title") && !root.contains_key("$schema"));
    // Nested titles are not root metadata.
    assert_eq!(n.schema["properties"]["titled"]["title"], json!("My Title"));
}

#[test]
fn n1_boolean_schemas_become_objects_but_additional_properties_true_stays() {
    let s = norm::<JsonValues>();
    assert_eq!(s["properties"]["value"], json!({"description": "Anything"}));
    assert_eq!(s["properties"]["list"]["items"], json!({}));
    let s = norm::<Maps>();
    assert_eq!(s["properties"]["free"]["additionalProperties"], json!(true));
}

#[test]
fn n2_documented_unit_enum_becomes_one_string_enum_with_variant_docs() {
    let s = norm::<Enums>();
    assert_eq!(
        s["properties"]["unit"],
        json!({
            "description": "The unit to use\ncelsius: Degrees Celsius; fahrenheit: Degrees Fahrenheit",
            "type": "string",
            "enum": ["celsius", "fahrenheit"]
        })
    );
    let documented = &s["properties"]["documented"];
    assert_eq!(documented["type"], json!("string"));
    let values = documented["enum"].as_array().unwrap();
    for v in ["first_one", "second_one", "THIRD"] {
        assert!(values.contains(&json!(v)), "{documented}");
    }
    let doc = documented["description"].as_str().unwrap();
    assert!(doc.starts_with("Unit enum doc\n"), "{doc}");
    assert!(doc.contains("first_one: first variant") && doc.contains("THIRD: the third"));
}

#[test]
fn n3_numeric_formats_go_and_exact_bounds_are_added() {
    let s = norm::<Ints>();
    let p = &s["properties"];
    assert_eq!(
        p["c"],
        json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64})
    );
    assert_eq!(
        p["g"],
        json!({"type": "integer", "minimum": -2147483648i64, "maximum": 2147483647})
    );
    assert_eq!(p["a"]["maximum"], json!(255));
    // 64-bit and wider: no bound beyond 2^53 (see the module docs).
    assert_eq!(p["d"], json!({"type": "integer", "minimum": 0}));
    assert_eq!(p["h"], json!({"type": "integer"}));
    assert_eq!(p["j"], json!({"type": "number"}));
    assert_eq!(p["l"]["minimum"], json!(1));
    assert_eq!(p["l"]["maximum"], json!(4294967295u64));
    // A user bound looser than the type is tightened; a tighter one is kept.
    assert_eq!(p["loose"]["maximum"], json!(4294967295u64));
    assert_eq!(p["loose"]["minimum"], json!(10));
    assert_eq!(p["narrow"]["minimum"], json!(-5));
    assert_eq!(p["narrow"]["maximum"], json!(2147483647));
}

#[test]
fn n4_refs_are_inlined_and_siblings_win() {
    let s = norm::<Nested>();
    assert!(s.get("$defs").is_none());
    let ship = &s["properties"]["ship_to"];
    assert_eq!(ship["description"], json!("Shipping address"));
    assert_eq!(ship["type"], json!("object"));
    assert_eq!(ship["required"], json!(["street", "city"]));
    // Option<Struct>: the null branch stays beside the inlined struct.
    let maybe = &s["properties"]["maybe"]["anyOf"];
    assert_eq!(maybe[0]["description"], json!("An inner struct"));
    assert_eq!(maybe[1], json!({"type": "null"}));
}

#[test]
fn n4_internally_tagged_newtype_variant_keeps_its_tag() {
    let s = norm::<TaggedFields>();
    let variants = s["properties"]["shape"]["oneOf"].as_array().unwrap();
    let wrapped = variants
        .iter()
        .find(|v| v["properties"]["type"]["const"] == json!("wrapped"))
        .expect("wrapped variant");
    let keys: Vec<&String> = wrapped["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["type", "x", "y"]);
    assert_eq!(wrapped["required"], json!(["type", "x", "y"]));
    assert!(wrapped.get("$ref").is_none());
}

#[test]
fn n4_recursive_definitions_stay_and_the_rest_is_inlined() {
    let s = norm::<Tree>();
    let defs = s["$defs"].as_object().unwrap();
    assert_eq!(defs.keys().collect::<Vec<_>>(), ["Node"]);
    // Node's non-recursive field type (Inner) is inlined inside the kept definition.
    assert_eq!(defs["Node"]["properties"]["meta"]["type"], json!("object"));
    assert_eq!(s["properties"]["root"], json!({"$ref": "#/$defs/Node"}));

    let s = norm::<Recursive>();
    assert_eq!(s["properties"]["children"]["items"], json!({"$ref": "#"}));

    let s = norm::<Mutual>();
    let defs = s["$defs"].as_object().unwrap();
    assert_eq!(defs.keys().collect::<Vec<_>>(), ["A", "B"]);
}

#[test]
fn n4_unknown_local_ref_is_an_error() {
    let err = normalize(json!({
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/Missing"}},
        "$defs": {"Other": {"type": "string"}}
    }))
    .unwrap_err();
    assert_eq!(
        err,
        SchemaError::UnresolvedRef {
            reference: "#/$defs/Missing".into()
        }
    );
}

#[test]
fn n4_sibling_properties_come_first_and_required_is_a_union() {
    let n = normalize(json!({
        "type": "object",
        "properties": {"v": {
            "description": "field doc",
            "properties": {"tag": {"const": "t"}},
            "$ref": "#/$defs/D",
            "required": ["tag"]
        }},
        "$defs": {"D": {
            "description": "type doc",
            "type": "object",
            "properties": {"a": {"type": "string"}, "tag": {"type": "integer"}},
            "required": ["a", "tag"]
        }}
    }))
    .unwrap();
    assert_eq!(
        n.schema["properties"]["v"],
        json!({
            "description": "field doc",
            "properties": {"tag": {"const": "t"}, "a": {"type": "string"}},
            "type": "object",
            "required": ["tag", "a"]
        })
    );
}

#[test]
fn n5_root_internally_tagged_enum_becomes_one_object() {
    let n = normalize(pi_tool::schema::generate::<RootInternal>()).unwrap();
    let s = &n.schema;
    assert_eq!(s["type"], json!("object"));
    assert_eq!(s["required"], json!(["kind"]));
    assert_eq!(
        s["properties"]["kind"],
        json!({
            "description": "text: Search by text; date: Search by date; id: Search by id",
            "type": "string",
            "enum": ["text", "date", "id"]
        })
    );
    assert_eq!(
        s["properties"]["query"]["description"],
        json!("only when kind is text")
    );
    assert_eq!(
        s["properties"]["limit"]["description"],
        json!("only when kind is text or id")
    );
    assert_eq!(n.root_description.as_deref(), Some("Pick a shape."));
    assert!(
        n.warnings.iter().any(|w| w.contains("merged")),
        "{:?}",
        n.warnings
    );
}

#[test]
fn n5_flattened_enum_keeps_own_fields_first() {
    let s = norm::<FlatEnum>();
    let keys: Vec<&String> = s["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["own", "type", "radius", "w", "h", "x", "y"]);
    assert_eq!(s["required"], json!(["own", "type"]));
    let s = norm::<FlatEnumDeny>();
    assert_eq!(s["additionalProperties"], json!(false));
    assert!(s.get("unevaluatedProperties").is_none());
}

#[test]
fn n6_non_object_roots_are_errors_that_say_what_they_are() {
    for (name, raw, found) in catalogue::non_object_cases() {
        match normalize(raw) {
            Err(SchemaError::RootNotObject { found: got }) => assert_eq!(got, found, "{name}"),
            other => panic!("{name}: expected RootNotObject, got {other:?}"),
        }
    }
}

#[test]
fn n6_empty_struct_gets_properties() {
    assert_eq!(norm::<Empty>(), json!({"type": "object", "properties": {}}));
}

#[test]
fn for_type_reports_non_object_params_without_panicking() {
    let schema = ToolSchema::for_type::<Newtype>();
    let error = schema.error().expect("unusable schema");
    assert!(
        matches!(
            error,
            pi_tool::schema::ToolSchemaError::Params {
                error: pi_tool::schema::SchemaError::RootNotObject { .. },
                ..
            }
        ),
        "{error:?}"
    );
    let error = error.to_string();
    assert!(error.contains("Newtype"), "{error}");
    assert!(error.contains("use a struct with named fields"), "{error}");
    assert!(error.contains("a string"), "{error}");
}

#[test]
fn for_type_exposes_the_root_description() {
    let schema = ToolSchema::for_type::<Validations>();
    assert!(schema.error().is_none());
    assert_eq!(
        schema.root_description(),
        Some("Search the web.\n\nSecond paragraph of the doc.")
    );
    assert!(schema.json().get("description").is_none());
}

#[test]
fn normalisation_is_idempotent() {
    for (name, raw) in catalogue::object_cases() {
        let once = normalize(raw).unwrap().schema;
        let twice = normalize(once.clone()).unwrap().schema;
        assert_eq!(once, twice, "{name}");
    }
}

#[test]
fn absurdly_deep_schemas_are_an_error_not_a_crash() {
    let mut deep = json!({"type": "string"});
    for _ in 0..400 {
        deep = json!({"type": "object", "properties": {"a": deep}});
    }
    assert_eq!(normalize(deep.clone()), Err(SchemaError::TooDeep));
    for p in pi_tool::profiles::Profile::ALL {
        let o = p.apply(&deep);
        assert!(!o.is_ok(), "{p}");
    }
}
