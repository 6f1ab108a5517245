//! The recording's normalisation (`conformance/providers/FORMAT.md` §2.1 and §2.3):
//! what the server received, and the events with their push-time snapshots.

use pi_tool::model::AssistantMessageEvent;
use serde_json::{Map, Value, json};

use super::server::RecordedRequest;

/// Request headers left out of the recording (transport; `x-stainless-*` too).
const TRANSPORT_HEADERS: &[&str] = &[
    "host",
    "connection",
    "content-length",
    "transfer-encoding",
    "accept-encoding",
    "accept-language",
    "sec-fetch-mode",
    "keep-alive",
];

/// pi-ai's scratch keys on streaming blocks, removed from snapshots.
const SCRATCH_BLOCK_KEYS: &[&str] = &[
    "index",
    "partialJson",
    "partialArgs",
    "streamIndex",
    "customInput",
];

const USER_AGENT_PLACEHOLDER: &str = "pi (<platform> <release>; <arch>)";

/// Headers whose repeats Node's `IncomingMessage.headers` drops (the first one wins);
/// other repeats are joined with `, ` (`cookie` with `; `).
const SINGLE_VALUED: &[&str] = &[
    "age",
    "authorization",
    "content-length",
    "content-type",
    "etag",
    "expires",
    "from",
    "host",
    "if-modified-since",
    "if-unmodified-since",
    "last-modified",
    "location",
    "max-forwards",
    "proxy-authorization",
    "referer",
    "retry-after",
    "server",
    "user-agent",
];

/// Pi's user agent on this machine, as Node builds it; pi-tool's providers send the same
/// (`pi_tool::providers::user_agent`), which the recordings compare.
pub fn pi_user_agent() -> String {
    pi_tool::providers::user_agent()
}

/// Replaces the server's port in a string.
fn unport(text: &str, port: u16) -> String {
    text.replace(&format!("127.0.0.1:{port}"), "127.0.0.1:<port>")
}

/// The recorded `request` (FORMAT.md §2.1).
pub fn request(req: &RecordedRequest, api_key: Option<&str>, port: u16) -> Value {
    let user_agent = pi_user_agent();
    // Node's req.headers: lower-cased names in first-seen order, repeats merged.
    let mut merged: Vec<(String, String)> = Vec::new();
    for (name, value) in &req.headers {
        let lname = name.to_ascii_lowercase();
        match merged.iter_mut().find(|(n, _)| *n == lname) {
            Some(_) if SINGLE_VALUED.contains(&lname.as_str()) => {}
            Some((_, existing)) => {
                existing.push_str(if lname == "cookie" { "; " } else { ", " });
                existing.push_str(value);
            }
            None => merged.push((lname, value.clone())),
        }
    }
    let mut headers = Map::new();
    for (name, mut value) in merged {
        if TRANSPORT_HEADERS.contains(&name.as_str()) || name.starts_with("x-stainless-") {
            continue;
        }
        if let Some(key) = api_key.filter(|k| !k.is_empty()) {
            value = value.replace(key, "<key>");
        }
        if value == user_agent {
            value = USER_AGENT_PLACEHOLDER.to_owned();
        }
        headers.insert(name, Value::String(unport(&value, port)));
    }
    let text = String::from_utf8_lossy(&req.body);
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str::<Value>(&text).unwrap_or_else(|_| json!({"<unparsed>": text}))
    };
    json!({
        "method": req.method,
        "path": req.target,
        "headers": headers,
        "body": body,
    })
}

/// `normaliseValue`: timestamps, the port in strings (recursively).
fn value(v: &Value, port: u16, key: Option<&str>) -> Value {
    match v {
        Value::String(s) => Value::String(unport(s, port)),
        Value::Number(_) if key == Some("timestamp") => Value::String("<timestamp>".to_owned()),
        Value::Array(items) => Value::Array(items.iter().map(|i| value(i, port, None)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), value(v, port, Some(k))))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn strip_scratch(block: &Value) -> Value {
    match block {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !SCRATCH_BLOCK_KEYS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `normaliseMessage`: scratch keys out of the content blocks, then `value`.
pub fn message(m: &Value, port: u16) -> Value {
    let mut copy = m.clone();
    if let Some(Value::Array(content)) = copy.get_mut("content") {
        for block in content.iter_mut() {
            *block = strip_scratch(block);
        }
    }
    value(&copy, port, None)
}

/// One event, serialised with its snapshot, normalised (`normaliseEvent`).
pub fn event(e: &AssistantMessageEvent, port: u16) -> Result<Value, String> {
    let raw = serde_json::to_value(e).map_err(|err| format!("event {}: {err}", e.name()))?;
    let Value::Object(map) = raw else {
        return Err(format!("event {} is not an object", e.name()));
    };
    Ok(Value::Object(
        map.iter()
            .map(|(k, v)| {
                let n = match k.as_str() {
                    "partial" | "message" | "error" => message(v, port),
                    "toolCall" => value(&strip_scratch(v), port, None),
                    _ => value(v, port, Some(k)),
                };
                (k.clone(), n)
            })
            .collect(),
    ))
}

/// The terminal event's message (`done`'s `message`, `error`'s `error`), normalised.
pub fn final_message(events: &[Value]) -> Value {
    let Some(last) = events.last() else {
        return Value::Null;
    };
    match last.get("type").and_then(Value::as_str) {
        Some("done") => last.get("message").cloned().unwrap_or(Value::Null),
        Some("error") => last.get("error").cloned().unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_headers_are_filtered_and_substituted() {
        let ua = pi_user_agent();
        let req = RecordedRequest {
            method: "POST".into(),
            target: "/v1/messages?beta=true".into(),
            headers: vec![
                ("Host".into(), "127.0.0.1:4242".into()),
                ("X-Api-Key".into(), "sk-1".into()),
                ("authorization".into(), "Bearer sk-1".into()),
                ("authorization".into(), "Bearer other".into()),
                ("User-Agent".into(), ua),
                ("x-stainless-os".into(), "Linux".into()),
                ("accept".into(), "a".into()),
                ("Accept".into(), "b".into()),
                ("referer".into(), "http://127.0.0.1:4242/x".into()),
                ("content-length".into(), "2".into()),
            ],
            body: b"{\"b\":1,\"a\":0.5}".to_vec(),
        };
        let v = request(&req, Some("sk-1"), 4242);
        assert_eq!(
            v,
            json!({
                "method": "POST",
                "path": "/v1/messages?beta=true",
                "headers": {
                    "x-api-key": "<key>",
                    "authorization": "Bearer <key>",
                    "user-agent": "pi (<platform> <release>; <arch>)",
                    "accept": "a, b",
                    "referer": "http://127.0.0.1:<port>/x",
                },
                "body": {"a": 0.5, "b": 1},
            })
        );
        let empty = RecordedRequest {
            body: Vec::new(),
            ..req.clone()
        };
        assert_eq!(request(&empty, None, 1)["body"], Value::Null);
        let text = RecordedRequest {
            body: b"not json".to_vec(),
            ..req
        };
        assert_eq!(
            request(&text, None, 1)["body"],
            json!({"<unparsed>": "not json"})
        );
    }

    #[test]
    fn snapshots_lose_timestamps_scratch_keys_and_the_port() {
        let m = json!({"role": "assistant", "timestamp": 5,
            "content": [{"type": "toolCall", "id": "a", "index": 0, "partialJson": "{",
                         "arguments": {"timestamp": 1, "url": "http://127.0.0.1:99/"}}],
            "errorMessage": "connect 127.0.0.1:99 refused"});
        assert_eq!(
            message(&m, 99),
            json!({"role": "assistant", "timestamp": "<timestamp>",
                "content": [{"type": "toolCall", "id": "a",
                             "arguments": {"timestamp": "<timestamp>", "url": "http://127.0.0.1:<port>/"}}],
                "errorMessage": "connect 127.0.0.1:<port> refused"})
        );
    }
}
