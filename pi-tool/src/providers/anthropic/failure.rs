//! Failed requests: the Anthropic SDK's `APIError` text for an HTTP error (the retry
//! policy is the providers' shared `retry` module).

use serde_json::Value;

use crate::js::stringify;

/// JavaScript truthiness of a parsed JSON value.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// The SDK's message for a non-2xx response whose body read as `body`:
/// `APIError.makeMessage(status, safeJSON(body), body-if-not-JSON)`. The SDK keeps the
/// whole parsed body as `error`, so a body `{"type":"error","error":{...}}` without a
/// top-level `message` is written out whole.
pub(super) fn http_error_message(status: u16, body: &str) -> String {
    let body = body.strip_prefix('\u{feff}').unwrap_or(body);
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let error = parsed.filter(truthy);
    let msg = match &error {
        Some(error) => match error.get("message").filter(|m| truthy(m)) {
            Some(Value::String(text)) => text.clone(),
            Some(other) => stringify(other),
            None => stringify(error),
        },
        None => body.to_owned(),
    };
    match (status, msg.is_empty()) {
        (0, false) => msg,
        (0, true) => "(no status code or body)".to_owned(),
        (_, false) => format!("{status} {msg}"),
        (_, true) => format!("{status} status code (no body)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_errors_read_as_the_sdk_writes_them() {
        let body = r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"r1"}"#;
        assert_eq!(http_error_message(500, body), format!("500 {body}"));
        assert_eq!(
            http_error_message(400, r#"{"message": "bad", "x": 1.0}"#),
            "400 bad"
        );
        assert_eq!(
            http_error_message(502, "<html>\r\n</html>"),
            "502 <html>\r\n</html>"
        );
        assert_eq!(http_error_message(503, ""), "503 status code (no body)");
        assert_eq!(http_error_message(500, "null"), "500 null");
        assert_eq!(
            http_error_message(500, r#"{"a": 1.50, "b": [1e21]}"#),
            r#"500 {"a":1.5,"b":[1e+21]}"#
        );
    }
}
