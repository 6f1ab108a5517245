//! Schemas as schemars 1.x generates them for typical params types: `$defs`/`$ref`,
//! `Option`, unit and tagged enums, maps, validation attributes, `flatten` with
//! `deny_unknown_fields` (`unevaluatedProperties`), recursion. Validate, then deserialise.

use std::collections::HashMap;

use pi_tool::schema::{ToolSchema, deserialize_params};
use pi_tool::{JsonSchema, Value, json};
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct SearchArgs {
    #[schemars(length(min = 1, max = 80))]
    query: String,
    #[schemars(range(min = 1, max = 50))]
    limit: u32,
    site: Option<String>,
    mode: Mode,
    filters: Vec<Filter>,
    #[serde(default)]
    tags: HashMap<String, String>,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Fast,
    Deep,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Filter {
    Date { from: String },
    Lang { code: String },
}

fn check(schema: &ToolSchema, args: Value) -> Result<Value, String> {
    schema
        .validate("search", &args)
        .map_err(|e| e.message().to_owned())
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("  - ")).collect()
}

#[test]
fn a_typical_schemars_schema_compiles_and_validates() {
    let schema = ToolSchema::for_type::<SearchArgs>();
    assert_eq!(schema.error(), None, "{}", schema.json());
    let good = json!({
        "query": "rust", "limit": "24", "site": null, "mode": "fast",
        "filters": [{"kind": "date", "from": "2024"}, {"kind": "lang", "code": "en"}],
        "tags": {"a": "b"}
    });
    let v = check(&schema, good).expect("valid after coercion");
    assert_eq!(v["limit"], json!(24));
    let parsed: SearchArgs = deserialize_params("search", &v).expect("serde accepts it");
    assert_eq!(parsed.limit, 24);
    assert_eq!(parsed.site, None);

    let bad =
        json!({"query": "", "limit": 0, "mode": "slow", "filters": [{"kind": "geo"}], "extra": 1});
    let text = check(&schema, bad).expect_err("invalid");
    let got = lines(&text);
    assert!(
        got.contains(&"  - root: must not have additional properties"),
        "{text}"
    );
    assert!(
        got.contains(&"  - query: must not have fewer than 1 characters"),
        "{text}"
    );
    assert!(got.contains(&"  - limit: must be >= 1"), "{text}");
    assert!(got.iter().any(|l| l.starts_with("  - mode: ")), "{text}");
    assert!(got.iter().any(|l| l.starts_with("  - filters.0")), "{text}");

    // 5.0 for a u32 passes the schema and becomes 5 for serde.
    let float = json!({"query": "q", "limit": 5.0, "mode": "deep", "filters": []});
    let v = check(&schema, float).expect("integral float");
    let parsed: SearchArgs = deserialize_params("search", &v).expect("serde accepts 5");
    assert_eq!(parsed.limit, 5);
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Outer {
    name: String,
    #[serde(flatten)]
    paging: Paging,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Paging {
    page: Option<u32>,
    per_page: Option<u32>,
}

#[test]
fn flatten_with_deny_unknown_fields() {
    let schema = ToolSchema::for_type::<Outer>();
    assert_eq!(schema.error(), None, "{}", schema.json());
    check(&schema, json!({"name": "x", "page": 2})).expect("flattened field is known");
    let text = check(&schema, json!({"name": "x", "other": 1})).expect_err("unknown field");
    assert!(
        text.contains("must not have additional properties")
            || text.contains("must not have unevaluated properties"),
        "{text}\n{}",
        schema.json()
    );
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Tree {
    label: String,
    children: Vec<Tree>,
}

#[test]
fn recursive_types() {
    let schema = ToolSchema::for_type::<Tree>();
    assert_eq!(schema.error(), None, "{}", schema.json());
    check(
        &schema,
        json!({"label": "a", "children": [{"label": "b", "children": []}]}),
    )
    .expect("valid tree");
    let text = check(&schema, json!({"label": "a", "children": [{"label": 1}]}))
        .expect_err("missing children");
    assert!(
        text.contains("  - children.0.children: must have required properties children"),
        "{text}"
    );
}

/// A map with integer keys (`HashMap<u32, _>`, `BTreeMap<i64, _>`): integer keys pass and
/// are read; a key that is not one is refused with a text that says what the keys are
/// (issue 22).
#[test]
fn integer_keyed_maps_refuse_other_keys_saying_what_keys_are() {
    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Sheet {
        rows: HashMap<u32, String>,
        offsets: std::collections::BTreeMap<i64, f64>,
    }
    let schema = ToolSchema::for_type::<Sheet>();
    assert_eq!(schema.error(), None, "{}", schema.json());
    let good = json!({"rows": {"1": "a", "20": "b"}, "offsets": {"-3": 1.5}});
    check(&schema, good.clone()).expect("integer keys");
    let sheet: Sheet = deserialize_params("search", &good).expect("read");
    assert_eq!(sheet.rows[&20], "b");
    let e = check(
        &schema,
        json!({"rows": {"abc": "a", "-1": "b"}, "offsets": {"x": 1}}),
    )
    .expect_err("not integers");
    assert_eq!(
        lines(&e),
        [
            "  - rows: property names abc, -1 are not integers 0 or greater: the keys of this map are integers 0 or greater",
            "  - offsets: property name x is not an integer: the keys of this map are integers",
        ]
    );
}
