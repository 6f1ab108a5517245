//! Sending the request as pi-ai does: the `openai` SDK with `maxRetries: 0` inside
//! pi-ai's `retryProviderRequest` (retries only when `max_retries` asks, on 408, 409,
//! 429, 5xx and connection failures, honouring `x-should-retry`, `retry-after-ms` and
//! `retry-after`), and each failure as the text pi-ai shows.

use super::request::Request;
use crate::model::StreamOptions;
use crate::providers::error_body::{format_provider_error, normalize_api_error};
use crate::providers::http::{Http, HttpError, HttpResponse, Timeouts};
use crate::providers::openai_sse::ApiError;
use crate::providers::retry::{Attempt, RetryFailure, with_retries};
use pi_tool_core::AbortSignal;

/// An error body is read up to this size (the SDK reads it all; pi-ai shows 4000
/// characters of it).
const ERROR_BODY_LIMIT: usize = 1 << 20;
/// The prefix of `formatOpenAIResponsesError`.
const ERROR_PREFIX: &str = "OpenAI API error";

/// A failed attempt, as the SDK would have thrown it.
enum Failure {
    /// A non-2xx response: its `APIError` and the headers the retry policy reads.
    Status {
        error: ApiError,
        should_retry: Option<String>,
        retry_after_ms: Option<String>,
        retry_after: Option<String>,
    },
    /// No response (`APIConnectionError` / `APIConnectionTimeoutError`): retryable.
    Connection(&'static str),
    /// The signal aborted.
    Aborted,
}

/// Sends the request; a 2xx response is returned with its body unread. Err is the
/// final message's `errorMessage`.
pub(super) async fn send(
    http: &Http,
    request: &Request,
    options: &StreamOptions,
) -> Result<HttpResponse, String> {
    with_retries(options, || attempt(http, request, options)).await
}

async fn attempt(
    http: &Http,
    request: &Request,
    options: &StreamOptions,
) -> Result<HttpResponse, Failure> {
    let signal: &AbortSignal = &options.signal;
    let response = http
        .post(
            &request.url,
            &request.headers,
            request.body.clone(),
            signal,
            Timeouts::of(options),
        )
        .await
        .map_err(|error| match error {
            HttpError::Aborted => Failure::Aborted,
            HttpError::Idle(_) => Failure::Connection("Request timed out."),
            HttpError::Connect(_) | HttpError::Terminated => {
                Failure::Connection("Connection error.")
            }
        })?;
    if (200..300).contains(&response.status) {
        return Ok(response);
    }
    let status = response.status;
    let header = |name: &str| response.header(name).map(str::to_owned);
    let (should_retry, retry_after_ms, retry_after) = (
        header("x-should-retry"),
        header("retry-after-ms"),
        header("retry-after"),
    );
    // The SDK reads the error body with `response.text().catch(e => e.message)`.
    let text = match response.text(signal, ERROR_BODY_LIMIT).await {
        Ok(text) => text,
        Err(HttpError::Aborted) => return Err(Failure::Aborted),
        Err(other) => other.to_string(),
    };
    Err(Failure::Status {
        error: ApiError::from_response(status, &text),
        should_retry,
        retry_after_ms,
        retry_after,
    })
}

/// `formatOpenAIResponsesError` of what the SDK threw.
fn message(failure: &Failure) -> String {
    match failure {
        Failure::Status { error, .. } => {
            format_provider_error(&normalize_api_error(error), Some(ERROR_PREFIX))
        }
        Failure::Connection(text) => (*text).to_owned(),
        Failure::Aborted => "Request aborted".to_owned(),
    }
}

impl RetryFailure for Failure {
    fn into_message(self) -> String {
        message(&self)
    }

    fn is_abort(&self) -> bool {
        matches!(self, Failure::Aborted)
    }

    fn with_attempt<T>(&self, f: impl FnOnce(&Attempt<'_>) -> T) -> T {
        let (status, headers, text) = match self {
            Failure::Status {
                error,
                should_retry,
                retry_after_ms,
                retry_after,
            } => (
                error.status,
                [
                    ("x-should-retry", should_retry),
                    ("retry-after-ms", retry_after_ms),
                    ("retry-after", retry_after),
                ],
                error.message.clone(),
            ),
            other => (None, [("", &None); 3], message(other)),
        };
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| *n == name)
                .and_then(|(_, v)| (*v).clone())
        };
        f(&Attempt {
            status,
            header: &header,
            message: &text,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::retry::{is_retryable, retry_delay};

    #[test]
    fn retry_policy_follows_status_and_header() {
        let status = |code: u16, should: Option<&str>| Failure::Status {
            error: ApiError::from_response(code, "{}"),
            should_retry: should.map(str::to_owned),
            retry_after_ms: None,
            retry_after: None,
        };
        let retryable = |f: &Failure| f.with_attempt(is_retryable);
        let retry_delay_ms = |f: &Failure, i: u32| {
            f.with_attempt(|a| retry_delay(a, i))
                .map(|d| d.as_secs_f64() * 1000.0)
        };
        assert!(retryable(&status(429, None)));
        assert!(retryable(&status(503, None)));
        assert!(!retryable(&status(400, None)));
        assert!(retryable(&status(400, Some("true"))));
        assert!(!retryable(&status(500, Some("false"))));
        assert!(retryable(&Failure::Connection("Connection error.")));
        let long = Failure::Status {
            error: ApiError::from_response(429, r#"{"error":{"message":"slow down"}}"#),
            should_retry: None,
            retry_after_ms: None,
            retry_after: Some("120".into()),
        };
        assert_eq!(
            retry_delay_ms(&long, 0),
            Err("Server requested 120s retry delay (max: 60s). 429 slow down".to_owned())
        );
        let backoff = retry_delay_ms(&Failure::Connection("x"), 1).unwrap();
        assert!((750.0..=1000.0).contains(&backoff), "{backoff}");
    }
}
