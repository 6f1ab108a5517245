//! Deep arguments and deep schemas: clear errors, never a stack overflow.

use serde_json::{Value, json};

use super::schema;
use crate::schema::MAX_ARGUMENT_DEPTH;

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
