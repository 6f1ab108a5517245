//! The shortcut for values that already validate equals Pi's full pipeline.

use serde_json::{Value, json};

use super::{errors, obj, schema};
use crate::schema::ToolSchema;

// ---------------------------------------------------------------- the shortcut

fn slow(schema: &ToolSchema, args: &Value) -> Result<Value, String> {
    let compiled = schema.compiled.as_ref().map_err(ToString::to_string)?;
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
