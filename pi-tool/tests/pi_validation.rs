//! Pi's recorded behaviour, replayed against our argument pipeline.
//!
//! For every tool call in the repo's `conformance/scenarios/*.json` (Pi 0.85.0 recordings in
//! `conformance/expected/`):
//! * a call Pi rejected with `Validation failed for tool …` must give exactly that text;
//! * a call that passed validation must give exactly the arguments Pi handed on (recorded by
//!   `harness:before_tool_call` before any hook mutation, else by `harness:execute`).
//!
//! The scenario's `prepareArguments` ops (FORMAT.md §3.6) are applied first, as Pi does.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pi_tool::Value;
use pi_tool::schema::ToolSchema;

/// The scenarios whose calls exercise validation and coercion; each must exist and contribute.
const REQUIRED: &[&str] = &[
    "03a-validation-failures",
    "03c-coercion-plain-json-schema",
    "13-prepareArguments",
    "20-validation-nested-paths",
    "22-validation-enum-const-union",
    "23-validation-string-number-constraints",
    "25-validation-non-object-arguments",
    "26-validation-permissive-and-empty-schemas",
    "27-coercion-numbers-integers",
    "28-coercion-booleans",
    "29-coercion-strings",
    "32-coercion-optional-nulls",
];

fn conformance() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance")
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// FORMAT.md §3.6 argument ops on a shallow copy; `Err` when an op throws.
fn prepare(ops: &[Value], raw: &Value) -> Result<Value, String> {
    let Value::Object(map) = raw else {
        return Ok(raw.clone());
    };
    let mut obj = map.clone();
    for op in ops {
        let key = op["key"].as_str().unwrap_or_default().to_owned();
        match op["op"].as_str() {
            Some("set") => {
                obj.insert(key, op["value"].clone());
            }
            Some("delete") => {
                obj.shift_remove(&key);
            }
            Some("rename") => {
                let from = op["from"].as_str().unwrap_or_default();
                if let Some(v) = obj.shift_remove(from) {
                    obj.insert(op["to"].as_str().unwrap_or_default().to_owned(), v);
                }
            }
            Some("default") => {
                obj.entry(key).or_insert_with(|| op["value"].clone());
            }
            Some("map") => {
                if let Some(Value::String(s)) = obj.get(&key)
                    && let Some(new) = op["map"].get(s.as_str())
                {
                    let new = new.clone();
                    obj.insert(key, new);
                }
            }
            Some("throwIfPresent") => {
                if obj.contains_key(&key) {
                    return Err(op["message"].as_str().unwrap_or_default().to_owned());
                }
            }
            other => panic!("unknown op {other:?}"),
        }
    }
    Ok(Value::Object(obj))
}

#[derive(Default)]
struct Tally {
    failures_checked: usize,
    values_checked: usize,
}

fn replay(id: &str) -> Tally {
    let dir = conformance();
    let scenario = read(&dir.join("scenarios").join(format!("{id}.json")));
    let expected = read(&dir.join("expected").join(format!("{id}.json")));
    let tools = scenario["tools"].as_array().cloned().unwrap_or_default();
    // The first tool with a name wins (Pi's `tools.find`).
    let mut schemas: HashMap<String, (ToolSchema, Vec<Value>)> = HashMap::new();
    for tool in &tools {
        let name = tool["name"].as_str().unwrap_or_default().to_owned();
        schemas.entry(name).or_insert_with(|| {
            let schema = ToolSchema::from_json(tool["parameters"].clone());
            assert_eq!(schema.error(), None, "{id}: schema of {}", tool["name"]);
            let ops = tool["prepareArguments"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            (schema, ops)
        });
    }
    // The model's calls in order, per id: the expected events are canonical JSON (sorted
    // keys), so the key order of the arguments (which `Received arguments` shows) comes from
    // the scenario.
    let mut calls: HashMap<String, std::collections::VecDeque<Value>> = HashMap::new();
    for turn in scenario["model"].as_array().into_iter().flatten() {
        for block in turn["content"].as_array().into_iter().flatten() {
            if block["type"] == "toolCall" {
                let call_id = block["id"].as_str().unwrap_or_default().to_owned();
                calls
                    .entry(call_id)
                    .or_default()
                    .push_back(block["arguments"].clone());
            }
        }
    }
    let mut tally = Tally::default();
    // The raw arguments of the latest start of each call id, and whether its value was
    // already compared (before_tool_call comes before execute).
    let mut started: HashMap<String, (String, Value, bool)> = HashMap::new();
    for event in expected["events"].as_array().into_iter().flatten() {
        let call_id = event["toolCallId"].as_str().unwrap_or_default().to_owned();
        match event["type"].as_str() {
            Some("tool_execution_start") => {
                let name = event["toolName"].as_str().unwrap_or_default().to_owned();
                let raw = calls
                    .get_mut(&call_id)
                    .and_then(std::collections::VecDeque::pop_front)
                    .unwrap_or_else(|| panic!("{id}/{call_id}: started but never called"));
                assert_eq!(
                    raw, event["args"],
                    "{id}/{call_id}: start args are the raw arguments"
                );
                started.insert(call_id, (name, raw, false));
            }
            Some(kind @ ("harness:before_tool_call" | "harness:execute")) => {
                let Some((name, raw, compared)) = started.get_mut(&call_id) else {
                    continue;
                };
                if *compared {
                    continue;
                }
                let Some((schema, ops)) = schemas.get(name.as_str()) else {
                    continue;
                };
                let prepared = prepare(ops, raw).expect("prepare succeeded in Pi");
                let got = schema
                    .validate(name, &prepared)
                    .unwrap_or_else(|e| panic!("{id}/{call_id}: Pi accepted, we rejected:\n{e}"));
                assert_eq!(
                    got, event["args"],
                    "{id}/{call_id} ({kind}): validated arguments differ"
                );
                *compared = true;
                tally.values_checked += 1;
            }
            Some("tool_execution_end") => {
                let text = event["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default();
                if !text.starts_with("Validation failed for tool") {
                    continue;
                }
                let Some((name, raw, _)) = started.get(&call_id) else {
                    panic!("{id}/{call_id}: end without start");
                };
                let (schema, ops) = &schemas[name.as_str()];
                let prepared = prepare(ops, raw).expect("prepare succeeded in Pi");
                match schema.validate(name, &prepared) {
                    Ok(v) => {
                        panic!("{id}/{call_id}: Pi rejected, we accepted {v}\nPi said:\n{text}")
                    }
                    Err(e) => assert_eq!(e.message(), text, "{id}/{call_id}: error text differs"),
                }
                tally.failures_checked += 1;
            }
            _ => {}
        }
    }
    tally
}

#[test]
fn every_scenario_call_validates_exactly_as_in_pi() {
    let dir = conformance().join("scenarios");
    let mut ids: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".json").map(str::to_owned)
        })
        .collect();
    ids.sort();
    for required in REQUIRED {
        assert!(
            ids.iter().any(|i| i == required),
            "scenario {required} is missing"
        );
    }
    let mut total = Tally::default();
    for id in &ids {
        let t = replay(id);
        if REQUIRED.contains(&id.as_str()) {
            assert!(
                t.failures_checked + t.values_checked > 0,
                "{id}: no call was checked"
            );
        }
        total.failures_checked += t.failures_checked;
        total.values_checked += t.values_checked;
    }
    // Exact counts, so that a scenario whose calls silently stop matching is noticed (update
    // them when scenarios are added).
    assert_eq!(total.failures_checked, 61, "validation failures checked");
    assert_eq!(total.values_checked, 117, "validated values checked");
    eprintln!(
        "checked {} validation failures and {} validated values across {} scenarios",
        total.failures_checked,
        total.values_checked,
        ids.len()
    );
}
