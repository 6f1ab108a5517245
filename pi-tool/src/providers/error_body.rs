//! pi-ai's `utils/error-body.js`: how a provider's failure becomes the display text of
//! the final message's `errorMessage`.
//!
//! An SDK error carries the HTTP status and the parsed body next to its message; when
//! the message does not already contain the body, pi-ai shows `<status>: <body>` so a
//! proxy's or gateway's explanation is not lost behind `403 status code (no body)`.

use serde_json::Value;

use super::openai_sse::ApiError;
use crate::js::{js_trim, stringify};

/// pi-ai's `MAX_PROVIDER_ERROR_BODY_CHARS`: the body is cut after this many UTF-16 units.
pub(crate) const MAX_PROVIDER_ERROR_BODY_CHARS: usize = 4000;

/// `normalizeProviderError`'s result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NormalizedError {
    /// The HTTP status, when the error had one.
    pub(crate) status: Option<u16>,
    /// The body text (trimmed, truncated), when there was a usable one.
    pub(crate) body: Option<String>,
    /// The error's own message.
    pub(crate) message: String,
    /// Whether `message` already contains `body` (or there is no body).
    pub(crate) message_carries_body: bool,
}

/// `normalizeProviderError` for the `openai` SDK's `APIError`: the status is `status`,
/// the body is `JSON.stringify(error.error)` when that is a non-empty plain object.
pub(crate) fn normalize_api_error(error: &ApiError) -> NormalizedError {
    let body = match &error.error {
        Some(Value::Object(map)) if !map.is_empty() => {
            let text = stringify(&Value::Object(map.clone()));
            let trimmed = js_trim(&text);
            (!trimmed.is_empty())
                .then(|| truncate_error_text(trimmed, MAX_PROVIDER_ERROR_BODY_CHARS))
        }
        _ => None,
    };
    let message_carries_body = body
        .as_deref()
        .is_none_or(|body| error.message.contains(body));
    NormalizedError {
        status: error.status,
        body,
        message: error.message.clone(),
        message_carries_body,
    }
}

/// `formatProviderError(norm, prefix)`: the message as it is when it carries the body or
/// nothing was extracted, else `<status>: <body>` (`<prefix> (<status>): ...` with a
/// prefix).
pub(crate) fn format_provider_error(norm: &NormalizedError, prefix: Option<&str>) -> String {
    match (norm.message_carries_body, norm.status, norm.body.as_deref()) {
        (false, Some(status), Some(body)) => match prefix {
            Some(prefix) => format!("{prefix} ({status}): {body}"),
            None => format!("{status}: {body}"),
        },
        (_, status, _) => match (prefix, status) {
            (Some(prefix), Some(status)) => format!("{prefix} ({status}): {}", norm.message),
            _ => norm.message.clone(),
        },
    }
}

/// `truncateErrorText`: at most `max_chars` UTF-16 units, then a note of how many were
/// cut. A surrogate pair split at the cut becomes U+FFFD (JavaScript keeps half a pair).
pub(crate) fn truncate_error_text(text: &str, max_chars: usize) -> String {
    let units: usize = text.chars().map(char::len_utf16).sum();
    if units <= max_chars {
        return text.to_owned();
    }
    let mut kept = String::new();
    let mut used = 0;
    for c in text.chars() {
        let width = c.len_utf16();
        if used + width > max_chars {
            if used < max_chars {
                kept.push('\u{FFFD}');
            }
            break;
        }
        kept.push(c);
        used += width;
    }
    format!("{kept}... [truncated {} chars]", units - max_chars)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_http_error_with_a_json_body_shows_status_and_body() {
        let error = ApiError::from_response(
            401,
            r#"{"error":{"message":"Incorrect API key","type":"invalid_request_error","param":null}}"#,
        );
        let norm = normalize_api_error(&error);
        assert_eq!(
            format_provider_error(&norm, None),
            r#"401: {"message":"Incorrect API key","type":"invalid_request_error","param":null}"#
        );
        assert_eq!(
            format_provider_error(&norm, Some("OpenAI")),
            r#"OpenAI (401): {"message":"Incorrect API key","type":"invalid_request_error","param":null}"#
        );
    }

    #[test]
    fn without_a_body_object_the_sdk_message_stays() {
        let error = ApiError::from_response(502, "Bad Gateway");
        assert_eq!(
            format_provider_error(&normalize_api_error(&error), None),
            "502 Bad Gateway"
        );
        let error = ApiError::from_response(400, r#"{"error":"plain"}"#);
        assert_eq!(
            format_provider_error(&normalize_api_error(&error), None),
            "400 \"plain\""
        );
        let error = ApiError::from_response(400, r#"{"error":{}}"#);
        assert_eq!(
            format_provider_error(&normalize_api_error(&error), None),
            "400 {}"
        );
        // A stream's error has no status: its message is shown as is.
        let error = ApiError::new(None, Some(json!({"message": "overloaded"})), None);
        assert_eq!(
            format_provider_error(&normalize_api_error(&error), None),
            "overloaded"
        );
    }

    #[test]
    fn long_bodies_are_truncated_in_utf16_units() {
        assert_eq!(
            truncate_error_text("abcdef", 4),
            "abcd... [truncated 2 chars]"
        );
        assert_eq!(truncate_error_text("abcd", 4), "abcd");
        assert_eq!(
            truncate_error_text("a\u{1F600}b", 2),
            "a\u{FFFD}... [truncated 2 chars]"
        );
        let big = format!(r#"{{"error":{{"message":"{}"}}}}"#, "x".repeat(5000));
        let norm = normalize_api_error(&ApiError::from_response(500, &big));
        let body = norm.body.unwrap_or_default();
        assert!(body.ends_with("... [truncated 1014 chars]"), "{body}");
        assert!(!norm.message_carries_body);
    }
}
