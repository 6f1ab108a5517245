//! The `weather-mcp` binary answers malformed lines on stdio, each exactly once and with
//! the request's id where it is readable (issue 11: rmcp dropped these lines, or
//! answered -32601 or id `null`). Hand-written JSON-RPC, as in `stdio.rs`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use pi_tool::{Value, json};

#[test]
fn weather_mcp_answers_every_malformed_line_once() {
    let mut server = Command::new(env!("CARGO_BIN_EXE_weather-mcp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("weather-mcp starts");
    let mut stdin = server.stdin.take().expect("piped stdin");
    let mut stdout = BufReader::new(server.stdout.take().expect("piped stdout"));
    let mut send = |line: &str| writeln!(stdin, "{line}").expect("the server reads stdin");
    let call = |id: u64, params: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#)
    };
    send(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"malformed-test","version":"0"}}}"#,
    );
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let big = format!(r#"{{"city":"{}"}}"#, "x".repeat(20 * 1024 * 1024));
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    // (line, the id and code of its answer)
    let cases = [
        (
            call(1, r#"{"name":"get_weather","arguments":{"city":1e400}}"#),
            json!(1),
            -32700,
        ),
        (
            call(2, r#"{"name":"get_weather","arguments":{"city":"\ud800"}}"#),
            json!(2),
            -32700,
        ),
        (
            call(3, &format!(r#"{{"name":"get_weather","arguments":{big}}}"#)),
            json!(3),
            -32700,
        ),
        (deep, Value::Null, -32700),
        (
            call(4, r#"{"name":"get_weather","arguments":["Tokyo"]}"#),
            json!(4),
            -32602,
        ),
        (
            call(5, r#"{"name":"get_weather","arguments":"Tokyo"}"#),
            json!(5),
            -32602,
        ),
        (
            call(6, r#"{"arguments":{"city":"Tokyo"}}"#),
            json!(6),
            -32602,
        ),
        (call(7, r#"{"name":7}"#), json!(7), -32602),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call"}"#.to_owned(),
            json!(8),
            -32602,
        ),
        (call(9, r#""get_weather""#), json!(9), -32602),
        (call(10, r#"["get_weather"]"#), json!(10), -32602),
    ];
    for (line, _, _) in &cases {
        send(line);
    }
    send(&call(
        11,
        r#"{"name":"get_weather","arguments":{"city":"Tokyo"}}"#,
    ));
    let mut answers = Vec::new();
    // initialize's answer, one per case, and the call's.
    while answers.len() < cases.len() + 2 {
        let mut line = String::new();
        let read = stdout
            .read_line(&mut line)
            .expect("the server writes stdout");
        assert!(read > 0, "the server closed stdout early; got {answers:?}");
        answers.push(line.parse::<Value>().expect("each answer is JSON"));
    }
    drop(stdin);
    let status = server.wait().expect("the server exits when stdin closes");
    assert!(status.success(), "{status}");
    for (line, id, code) in &cases {
        let answer = answers
            .iter()
            .find(|answer| answer["id"] == *id && answer.get("error").is_some())
            .unwrap_or_else(|| panic!("no answer with id {id} to {:.80}", line));
        assert_eq!(answer["error"]["code"], json!(code), "{answer}");
    }
    let result = answers
        .iter()
        .find(|answer| answer["id"] == json!(11))
        .unwrap();
    assert_eq!(
        result["result"]["content"][0]["text"],
        json!("Tokyo: 24 degrees celsius"),
        "{result}"
    );
}
