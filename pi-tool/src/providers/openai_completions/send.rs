//! Sending the request: the `openai` SDK's failures (status errors, connection errors,
//! timeouts) with its texts, and pi-ai's `retryProviderRequest` around them (only when
//! `max_retries` asks for it; pi-ai's default is no retry).

use serde_json::Value;

use super::request::Prepared;
use crate::js::stringify;
use crate::model::StreamOptions;
use crate::providers::error_body::{format_provider_error, normalize_api_error};
use crate::providers::http::{Http, HttpError, HttpResponse, Timeouts};
use crate::providers::openai_sse::{ApiError, js_truthy};
use crate::providers::retry::{Attempt, RetryFailure, with_retries};
use pi_tool_core::AbortSignal;

/// The most of an error body that is read (the SDK reads it all; a cap keeps a hostile
/// server from filling memory).
const ERROR_BODY_LIMIT: usize = 4 << 20;

/// One failed attempt: the SDK's error, and the response headers that steer retries.
struct Failure {
    error: ApiError,
    headers: Vec<(&'static str, String)>,
}

impl RetryFailure for Failure {
    fn with_attempt<T>(&self, f: impl FnOnce(&Attempt<'_>) -> T) -> T {
        let header = |name: &str| self.header(name).map(str::to_owned);
        f(&Attempt {
            status: self.error.status,
            header: &header,
            message: &self.error.message,
        })
    }

    fn into_message(self) -> String {
        api_error_message(&self.error)
    }
}

impl Failure {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The display text of an SDK error: `formatProviderError(normalizeProviderError(e))`,
/// plus OpenRouter's `error.metadata.raw` when the text does not already hold it.
pub(super) fn api_error_message(error: &ApiError) -> String {
    let mut message = format_provider_error(&normalize_api_error(error), None);
    let raw = error
        .error
        .as_ref()
        .and_then(|e| e.get("metadata"))
        .and_then(|m| m.get("raw"))
        .filter(|raw| js_truthy(raw));
    if let Some(raw) = raw {
        let raw = js_string(raw);
        if !message.contains(&raw) {
            message.push('\n');
            message.push_str(&raw);
        }
    }
    message
}

/// JavaScript's `String(value)`.
fn js_string(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "null".to_owned(),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::Null => String::new(),
                other => js_string(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".to_owned(),
        other => stringify(other),
    }
}

/// Sends the request, retrying as pi-ai's `retryProviderRequest` does; returns a 2xx
/// response or the final error message.
pub(super) async fn send(
    http: &Http,
    prepared: &Prepared,
    options: &StreamOptions,
) -> Result<HttpResponse, String> {
    let signal = &options.signal;
    // The SDK's `new URL(...)` throws a TypeError before any request (never retried).
    if reqwest::Url::parse(&prepared.url).is_err() {
        return Err("Invalid URL".to_owned());
    }
    with_retries(options, || {
        attempt(http, prepared, signal, Timeouts::of(options))
    })
    .await
}

/// One request: a 2xx response, or the error the SDK throws for it.
async fn attempt(
    http: &Http,
    prepared: &Prepared,
    signal: &AbortSignal,
    timeouts: Timeouts,
) -> Result<HttpResponse, Failure> {
    let connection = |message: &str| Failure {
        error: ApiError::new(None, None, Some(message)),
        headers: Vec::new(),
    };
    let response = match http
        .post(
            &prepared.url,
            &prepared.headers,
            prepared.body.clone(),
            signal,
            timeouts,
        )
        .await
    {
        Ok(response) => response,
        Err(HttpError::Aborted) => return Err(connection("Request was aborted.")),
        Err(HttpError::Idle(_)) => return Err(connection("Request timed out.")),
        Err(HttpError::Connect(_) | HttpError::Terminated) => {
            return Err(connection("Connection error."));
        }
    };
    if (200..300).contains(&response.status) {
        return Ok(response);
    }
    let status = response.status;
    let headers: Vec<(&'static str, String)> = ["x-should-retry", "retry-after-ms", "retry-after"]
        .into_iter()
        .filter_map(|name| response.header(name).map(|v| (name, v.to_owned())))
        .collect();
    // The SDK's `response.text().catch(err => err.message)`.
    let text = match response.text(signal, ERROR_BODY_LIMIT).await {
        Ok(text) => text,
        Err(error) => error.to_string(),
    };
    Err(Failure {
        error: ApiError::from_response(status, &text),
        headers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::retry::{is_retryable, retry_delay};
    use serde_json::json;

    use std::time::Duration;
    fn failure(status: Option<u16>, headers: &[(&'static str, &str)]) -> Failure {
        Failure {
            error: ApiError::new(status, None, Some("boom")),
            headers: headers.iter().map(|(n, v)| (*n, (*v).to_owned())).collect(),
        }
    }

    #[test]
    fn retries_follow_the_sdk_policy() {
        let retryable = |f: Failure| f.with_attempt(is_retryable);
        assert!(retryable(failure(Some(429), &[])));
        assert!(retryable(failure(Some(503), &[])));
        assert!(retryable(failure(None, &[])));
        assert!(!retryable(failure(Some(400), &[])));
        assert!(retryable(failure(Some(400), &[("x-should-retry", "true")])));
        assert!(!retryable(failure(
            Some(500),
            &[("x-should-retry", "false")]
        )));
    }

    #[test]
    fn server_delays_are_honoured_and_capped() {
        let retry_delay = |f: &Failure, i: u32| f.with_attempt(|a| retry_delay(a, i));
        let f = failure(Some(429), &[("retry-after-ms", "1500")]);
        assert_eq!(retry_delay(&f, 0), Ok(Duration::from_millis(1500)));
        let f = failure(Some(429), &[("retry-after", "2")]);
        assert_eq!(retry_delay(&f, 0), Ok(Duration::from_secs(2)));
        let f = failure(Some(429), &[("retry-after", "120")]);
        assert_eq!(
            retry_delay(&f, 0),
            Err("Server requested 120s retry delay (max: 60s). 429 boom".to_owned())
        );
        let f = failure(
            Some(429),
            &[("retry-after", "Thu, 01 Jan 1970 00:00:00 GMT")],
        );
        assert_eq!(retry_delay(&f, 0), Ok(Duration::ZERO));
        let backoff = retry_delay(&failure(Some(500), &[]), 1).unwrap_or_default();
        assert!(backoff <= Duration::from_secs(1) && backoff >= Duration::from_millis(750));
    }

    #[test]
    fn openrouter_raw_metadata_is_appended_once() {
        let error = ApiError::from_response(
            400,
            r#"{"error":{"message":"Provider returned error","metadata":{"raw":"upstream said no"}}}"#,
        );
        assert_eq!(
            api_error_message(&error),
            r#"400: {"message":"Provider returned error","metadata":{"raw":"upstream said no"}}"#
        );
        let error = ApiError::new(
            None,
            Some(json!({"message": "Provider returned error", "metadata": {"raw": "detail"}})),
            None,
        );
        assert_eq!(api_error_message(&error), "Provider returned error\ndetail");
    }
}
