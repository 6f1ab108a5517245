//! Serde errors after validation read like Pi's validation errors, with the field's path.

use pi_tool::schema::deserialize_params;
use pi_tool::{ToolErrorKind, json};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Search {
    query: String,
    limit: u32,
    filters: Vec<Filter>,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Filter {
    from: u8,
}

#[test]
fn serde_errors_name_the_field() {
    let args = json!({"query": "x", "limit": 5_000_000_000u64, "filters": []});
    let e = deserialize_params::<Search>("search", &args).expect_err("u32 overflow");
    assert_eq!(e.kind(), ToolErrorKind::InvalidArguments);
    assert_eq!(
        e.message(),
        "Validation failed for tool \"search\":\n  - limit: invalid value: integer `5000000000`, expected u32\n\nReceived arguments:\n{\n  \"query\": \"x\",\n  \"limit\": 5000000000,\n  \"filters\": []\n}"
    );
}

#[test]
fn nested_paths_use_dots_and_indices() {
    let args = json!({"query": "x", "limit": 1, "filters": [{"from": 1}, {"from": 300}]});
    let e = deserialize_params::<Search>("search", &args).expect_err("u8 overflow");
    assert!(
        e.message()
            .contains("\n  - filters.1.from: invalid value: integer `300`, expected u8\n"),
        "{e}"
    );
}

#[test]
fn missing_fields_are_reported_at_their_object() {
    let e = deserialize_params::<Search>("search", &json!({"query": "x"})).expect_err("missing");
    assert!(
        e.message().contains("\n  - root: missing field `limit`\n"),
        "{e}"
    );
}

#[test]
fn valid_arguments_deserialise() {
    let s: Search = deserialize_params(
        "search",
        &json!({"query": "x", "limit": 3, "filters": [{"from": 2}]}),
    )
    .expect("valid");
    assert_eq!(s.limit, 3);
}
