use std::path::PathBuf;
use std::time::Instant;

use serde_json::{Value, json};

use super::*;
use crate::js::stringify;

fn corpus() -> Value {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/partial_json/corpus.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn as_str(value: &Value) -> &str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"))
}

/// `ok:<JSON.stringify(value)>` or `err:<message>`, as the generator writes results.
fn outcome(result: Result<Value, String>) -> String {
    match result {
        Ok(value) => format!("ok:{}", stringify(&value)),
        Err(message) => format!("err:{message}"),
    }
}

/// Every prefix of every corpus document, and every error text, reads as pi-ai read it
/// under Node 22: parseStreamingJson, parseJsonWithRepair and JSON.parse.
#[test]
fn corpus_replays_exactly() {
    let corpus = corpus();
    let mut failures = Vec::new();
    let mut checked = 0;
    for document in corpus["documents"].as_array().into_iter().flatten() {
        let text = as_str(&document["text"]);
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        let mut previous = [String::new(), String::new(), String::new()];
        for (n, expected) in document["prefixes"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let end = chars.get(n + 1).map_or(text.len(), |&(i, _)| i);
            let prefix = &text[..end];
            let j = outcome(json_parse(prefix));
            let actual = [
                stringify(&parse_streaming_json(prefix)),
                outcome(parse_json_with_repair(prefix)),
                j.clone(),
            ];
            for (k, name) in ["parseStreamingJson", "parseJsonWithRepair", "JSON.parse"]
                .iter()
                .enumerate()
            {
                let raw = as_str(&expected[k]);
                let want = match raw {
                    "=" => previous[k].clone(),
                    "j" if k == 1 => {
                        let raw_j = as_str(&expected[2]);
                        if raw_j == "=" {
                            previous[2].clone()
                        } else {
                            raw_j.to_owned()
                        }
                    }
                    other => other.to_owned(),
                };
                if actual[k] != want {
                    failures.push(format!(
                        "{name}({prefix:?}):\n   ours: {}\n   node: {want}",
                        actual[k]
                    ));
                }
                previous[k] = want;
                checked += 1;
            }
        }
    }
    for case in corpus["errors"].as_array().into_iter().flatten() {
        let text = as_str(&case["text"]);
        let actual = [
            stringify(&parse_streaming_json(text)),
            outcome(parse_json_with_repair(text)),
            outcome(json_parse(text)),
        ];
        for (k, (name, key)) in [
            ("parseStreamingJson", "s"),
            ("parseJsonWithRepair", "r"),
            ("JSON.parse", "j"),
        ]
        .iter()
        .enumerate()
        {
            let want = as_str(&case[*key]);
            if actual[k] != want {
                failures.push(format!(
                    "{name}({text:?}):\n   ours: {}\n   node: {want}",
                    actual[k]
                ));
            }
            checked += 1;
        }
    }
    assert!(
        checked > 3500,
        "the corpus is missing or truncated ({checked} results)"
    );
    assert!(
        failures.is_empty(),
        "{} of {checked} results differ from pi-ai's:\n{}",
        failures.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn partial_json_quirks() {
    let cases: &[(&str, Value)] = &[
        ("", json!({})),
        ("   ", json!({})),
        ("{\"pa", json!({})),
        ("{\"a\": 1.", json!({})),
        ("{\"a\": tr", json!({"a": true})),
        ("{\"a\": \"b", json!({"a": "b"})),
        ("{\"a\": \"b\\", json!({"a": "b"})),
        ("[1, 2", json!([1, 2])),
        ("nu", json!({})),
        ("null", Value::Null),
        ("1e", json!(1)),
        ("{\"a\": 1e400}", json!({"a": null})),
        ("{\"__proto__\": 1, \"b\": ", json!({})),
        // A null prototype removes the setter: the next __proto__ is a property.
        (
            "{\"__proto__\": null, \"__proto__\": 2, \"b\": ",
            json!({"__proto__": 2}),
        ),
        (
            "{\"b\": 1, \"2\": 2, \"1\": 1",
            json!({"1": 1, "2": 2, "b": 1}),
        ),
    ];
    for (text, expected) in cases {
        let actual = parse_streaming_json(text);
        assert_eq!(stringify(&actual), stringify(expected), "{text:?}");
    }
}

#[test]
fn numbers_are_javascript_doubles() {
    let value = json_parse("[12345678901234567890, 9007199254740993, -0, 1.0, 1e2, 0.1, 1e400]")
        .unwrap_or_default();
    assert_eq!(
        stringify(&value),
        "[12345678901234567000,9007199254740992,0,1,100,0.1,null]"
    );
    // Integral doubles are integers, so they deserialise into integer types.
    assert_eq!(value[3].as_u64(), Some(1));
    assert_eq!(value[4].as_u64(), Some(100));
    assert_eq!(value[0].as_u64(), Some(12_345_678_901_234_567_168));
}

#[test]
fn lone_surrogate_escapes_become_replacement_characters() {
    assert_eq!(json_parse(r#""a\ud800b""#), Ok(json!("a\u{fffd}b")));
    assert_eq!(json_parse(r#""\udc00""#), Ok(json!("\u{fffd}")));
    assert_eq!(
        json_parse(r#""\ud800\ud800\udc00""#),
        Ok(json!("\u{fffd}\u{10000}"))
    );
    assert_eq!(json_parse(r#""\ud83d\ude00""#), Ok(json!("\u{1F600}")));
}

/// How deep a value nests (iteratively: the values tested here are built to be deep).
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut todo = vec![(value, 0)];
    while let Some((v, d)) = todo.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(items) => todo.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(map) => todo.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    deepest
}

#[test]
fn deep_nesting_is_bounded_not_a_stack_overflow() {
    let depth_limit = v8::MAX_DEPTH;
    let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(json_parse(&nested(depth_limit)).is_ok());
    let deep = nested(200_000);
    assert_eq!(
        json_parse(&deep),
        Err("JSON nested deeper than 128 levels".to_owned())
    );
    assert_eq!(
        parse_json_with_repair(&format!("{{\"a\": {deep}}}")),
        Err("JSON nested deeper than 128 levels".to_owned())
    );
    // The partial reading stops where JavaScript's stack would run out, at the limit,
    // and the values it returns drop, clone and print like any other, on a small stack
    // (512 KiB: a debug build's `Clone` of a 128-deep object takes about 260 KiB).
    let small_stack = std::thread::Builder::new().stack_size(512 << 10);
    let checked = small_stack.spawn(move || {
        for text in [deep.clone(), format!("{}1", "[{\"a\":".repeat(200_000))] {
            let value = parse_streaming_json(&text);
            assert!(depth(&value) <= depth_limit, "{} levels", depth(&value));
            let copy = value.clone();
            assert!(!stringify(&copy).is_empty());
            assert_eq!(copy, value);
            drop(value);
        }
    });
    assert!(
        checked
            .and_then(|t| t.join().map_err(|_| std::io::Error::other("panicked")))
            .is_ok()
    );
}

#[test]
fn repair_borrows_when_nothing_changes() {
    assert!(matches!(repair_json(r#"{"a": "b\n"}"#), Cow::Borrowed(_)));
    assert_eq!(
        repair_json("{\"a\": \"b\nc\\d\"}"),
        "{\"a\": \"b\\nc\\\\d\"}"
    );
    assert_eq!(repair_json("\"\u{1}\\"), "\"\\u0001\\\\");
    // Outside strings nothing is touched.
    assert_eq!(repair_json("\n{\"a\":\t1}"), "\n{\"a\":\t1}");
}

#[test]
fn streaming_arguments_read_every_delta_while_small() {
    let text = r#"{"path": "a.txt", "content": "hello\nworld", "n": [1, 2.5]}"#;
    let mut args = StreamingArguments::default();
    for (i, c) in text.char_indices() {
        let partial = args.push(&c.to_string());
        let prefix = &text[..i + c.len_utf8()];
        assert_eq!(*partial, parse_streaming_json(prefix), "{prefix:?}");
    }
    assert_eq!(args.text(), text);
    assert_eq!(args.finish(), parse_streaming_json(text));
}

fn stream_big_arguments(total: usize, delta: usize) -> StreamingArguments {
    let mut args = StreamingArguments::default();
    args.push(r#"{"path": "big.txt", "content": ""#);
    let chunk: String = "lorem ipsum \\n dolor "
        .chars()
        .cycle()
        .take(delta)
        .collect();
    let mut last = args.push("");
    while args.text().len() < total {
        last = args.push(&chunk);
    }
    assert!(last.get("content").is_some_and(Value::is_string));
    args.push("\"}");
    args
}

#[test]
fn streaming_arguments_cost_is_linear() {
    let small = stream_big_arguments(1 << 20, 64);
    let large = stream_big_arguments(10 << 20, 64);
    // Everything up to the threshold is read per delta (at most 1024 readings of it
    // here), then readings at sizes growing by 1/2: about 3 times the final size.
    let bound = |len: usize| 1024 * REPARSE_EVERY_DELTA_UP_TO + 4 * len;
    assert!(
        small.work <= bound(small.text().len()),
        "{} bytes read",
        small.work
    );
    assert!(
        large.work <= bound(large.text().len()),
        "{} bytes read",
        large.work
    );
    let per_byte_small = small.work as f64 / small.text().len() as f64;
    let per_byte_large = large.work as f64 / large.text().len() as f64;
    assert!(
        per_byte_large <= per_byte_small * 1.5,
        "reading work per byte grew from {per_byte_small:.1} to {per_byte_large:.1}"
    );
    let finished = large.finish();
    assert_eq!(finished["path"], "big.txt");
}

#[test]
fn streaming_time_per_byte_is_flat() {
    let time = |total: usize| {
        let start = Instant::now();
        let args = stream_big_arguments(total, 200);
        let value = args.finish();
        assert!(value["content"].is_string());
        start.elapsed().as_secs_f64() / total as f64
    };
    // Warm up, then compare 1 MB with 8 MB; quadratic cost would be 8x per byte.
    time(1 << 18);
    let small = time(1 << 20);
    let large = time(8 << 20);
    assert!(
        large <= small * 3.0,
        "time per byte grew from {:.2} ns to {:.2} ns",
        small * 1e9,
        large * 1e9
    );
}

// `JSON.parse` as the providers use it (SSE `data:` lines, stored signatures).
/// What the SSE reader reports for a bad `data:` line: Node 22's texts.
#[test]
fn messages_are_node_22s() {
    let cases = [
        ("", "Unexpected end of JSON input"),
        (
            "{not json}",
            "Expected property name or '}' in JSON at position 1 (line 1 column 2)",
        ),
        ("[1,]", "Unexpected token ']', \"[1,]\" is not valid JSON"),
        (
            "\"\u{1F600}\" x",
            "Unexpected non-whitespace character after JSON at position 5 (line 1 column 6)",
        ),
    ];
    for (text, message) in cases {
        assert_eq!(json_parse(text), Err(message.to_owned()), "{text:?}");
    }
    assert_eq!(json_parse("{\"a\":1.0}"), Ok(serde_json::json!({"a": 1})));
}

#[test]
fn hostile_nesting_is_refused_not_a_stack_overflow() {
    let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    assert_eq!(
        json_parse(&deep),
        Err("JSON nested deeper than 128 levels".to_owned())
    );
    let fine = format!("{}{}", "[".repeat(128), "]".repeat(128));
    assert!(json_parse(&fine).is_ok());
    // Brackets inside strings do not count.
    let quoted = format!("[\"{}\\\"\"]", "[".repeat(5000));
    assert!(json_parse(&quoted).is_ok());
}
