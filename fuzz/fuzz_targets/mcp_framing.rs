//! pi-tool-mcp's stdio framing (`server/serve/io/framing.rs`; the streamable-HTTP framing answers a
//! body with the same check): the line reader with its message limit, and the check
//! that decides whether a line goes to rmcp or is answered here.
//!
//! Input: `[limit, capacity, max, seed]` then the client's bytes, cut into reads at
//! points drawn from `max` and `seed`, read through a buffer of `capacity` bytes with a
//! message limit of `limit * 4` bytes (small, so the oversized path is reached). Each
//! whole line of the input, and the input itself as one line, also goes through the
//! check (amplifiable, see `input::expand`).
//!
//! Must hold: no panic, no hang; the reader returns exactly the input's lines (`\n`
//! separated, a trailing `\r` dropped), each within the limit whole and each over it as
//! its first bytes with its length, whatever the cuts and buffer size; every answer is a
//! JSON-RPC 2.0 error response with one of the framing's codes, and carries the
//! request's id whenever the line is a request with a readable id.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_tool::Value;
use pi_tool_fuzz::input::{cut, expand};
use pi_tool_mcp::__fuzz::{self, Line, Verdict};

fuzz_target!(|data: &[u8]| {
    let [limit, capacity, max, seed, rest @ ..] = data else {
        return;
    };
    let limit = *limit as usize * 4;
    let lines = __fuzz::read_lines(
        &cut(rest, *max as usize, *seed as u32),
        *capacity as usize,
        limit,
    );
    assert_eq!(lines, expected_lines(rest, limit), "lines of {rest:?}");
    for line in &lines {
        match line {
            Line::Complete(line) => check(line),
            Line::Oversized { prefix, length } => {
                check_answer(&__fuzz::oversized_answer(prefix, limit, *length), None)
            }
        }
    }
    expand(rest).run(check);
});

/// The input's lines as the framing must deliver them.
fn expected_lines(input: &[u8], limit: usize) -> Vec<Line> {
    let mut parts: Vec<&[u8]> = input.split(|b| *b == b'\n').collect();
    // The split after a final newline is no line.
    if parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    parts
        .into_iter()
        .map(|raw| {
            let line = raw.strip_suffix(b"\r").unwrap_or(raw);
            if line.len() <= limit {
                Line::Complete(line.to_vec())
            } else {
                Line::Oversized {
                    prefix: raw[..raw.len().min(__fuzz::ID_SCAN_PREFIX)].to_vec(),
                    length: raw.len(),
                }
            }
        })
        .collect()
}

fn check(line: &[u8]) {
    let verdict = __fuzz::check_line(line);
    let parsed = serde_json::from_slice::<Value>(line).ok();
    match verdict {
        Verdict::Skip | Verdict::Forward => {}
        Verdict::Answer(answer) => {
            // A request whose id is readable: a string or an integer id.
            let id = parsed
                .as_ref()
                .and_then(Value::as_object)
                .filter(|o| {
                    o.contains_key("method")
                        && !o.contains_key("result")
                        && !o.contains_key("error")
                })
                .and_then(|o| o.get("id"))
                .filter(|id| id.is_string() || id.is_i64() || id.is_u64());
            check_answer(&answer, id);
        }
    }
}

fn check_answer(answer: &Value, id: Option<&Value>) {
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    let code = answer["error"]["code"].as_i64();
    assert!(
        matches!(code, Some(-32700 | -32600 | -32602)),
        "unexpected code in {answer}"
    );
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{answer}"
    );
    let got = &answer["id"];
    assert!(
        got.is_null() || got.is_string() || got.is_i64() || got.is_u64(),
        "{answer}"
    );
    if let Some(id) = id {
        assert_eq!(got, id, "the answer lost the request's id: {answer}");
    }
}
