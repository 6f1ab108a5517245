//! Sending the request as pi-ai does: the `openai` SDK with `maxRetries: 0` inside
//! pi-ai's `retryProviderRequest` (retries only when `max_retries` asks, on 408, 409,
//! 429, 5xx and connection failures, honouring `x-should-retry`, `retry-after-ms` and
//! `retry-after`), and each failure as the text pi-ai shows.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::request::Request;
use crate::abort::AbortSignal;
use crate::agent::StreamOptions;
use crate::providers::error_body::{format_provider_error, normalize_api_error};
use crate::providers::http::{Http, HttpError, HttpResponse};
use crate::providers::openai_sse::ApiError;

/// pi-ai's default cap on a server-requested retry delay (`DEFAULT_MAX_RETRY_DELAY_MS`).
const MAX_RETRY_DELAY_MS: f64 = 60_000.0;
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
    let signal = &options.signal;
    let max_retries = options.max_retries.unwrap_or(0);
    let mut remaining = max_retries;
    loop {
        let failure = match attempt(http, request, options).await {
            Ok(response) => return Ok(response),
            Err(failure) => failure,
        };
        // `retryProviderRequest`: once the signal aborted, every failure reads as this.
        if signal.is_aborted() || matches!(failure, Failure::Aborted) {
            return Err("Request aborted".to_owned());
        }
        if remaining == 0 || !retryable(&failure) {
            return Err(message(&failure));
        }
        let retry_index = max_retries - remaining;
        remaining -= 1;
        let delay = retry_delay_ms(&failure, retry_index)?;
        let pause = Duration::from_secs_f64(
            if delay.is_finite() {
                delay.max(0.0)
            } else {
                0.0
            } / 1000.0,
        );
        tokio::select! {
            biased;
            _ = signal.aborted() => return Err("Request aborted".to_owned()),
            _ = tokio::time::sleep(pause) => {}
        }
    }
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
            options.timeout,
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

/// `isRetryableProviderError`.
fn retryable(failure: &Failure) -> bool {
    match failure {
        Failure::Status {
            error,
            should_retry,
            ..
        } => match should_retry.as_deref() {
            Some("true") => true,
            Some("false") => false,
            _ => error
                .status
                .is_none_or(|s| s == 408 || s == 409 || s == 429 || s >= 500),
        },
        Failure::Connection(_) => true,
        Failure::Aborted => false,
    }
}

/// `getRetryDelayMs`: the server's `retry-after-ms` or `retry-after` (seconds or an HTTP
/// date), capped at 60 s (a longer request fails), else exponential backoff with jitter.
fn retry_delay_ms(failure: &Failure, retry_index: u32) -> Result<f64, String> {
    if let Failure::Status {
        retry_after_ms,
        retry_after,
        ..
    } = failure
    {
        if let Some(ms) = retry_after_ms.as_deref().filter(|v| !v.is_empty())
            && let Some(ms) = parse_float(ms)
        {
            return validate_delay(ms, failure);
        }
        if let Some(after) = retry_after.as_deref().filter(|v| !v.is_empty()) {
            let delay = match parse_float(after) {
                Some(seconds) => seconds * 1000.0,
                None => http_date_ms(after).map_or(f64::NAN, |at| at - now_ms()),
            };
            return validate_delay(delay, failure);
        }
    }
    let exponential = (0.5 * 2f64.powi(retry_index.min(30) as i32)).min(8.0) * 1000.0;
    Ok(exponential * (1.0 - jitter() * 0.25))
}

fn validate_delay(delay_ms: f64, failure: &Failure) -> Result<f64, String> {
    if delay_ms > MAX_RETRY_DELAY_MS {
        let sdk_message = match failure {
            Failure::Status { error, .. } => error.message.clone(),
            other => message(other),
        };
        return Err(format!(
            "Server requested {}s retry delay (max: {}s). {sdk_message}",
            (delay_ms / 1000.0).ceil(),
            (MAX_RETRY_DELAY_MS / 1000.0).ceil()
        ));
    }
    Ok(delay_ms)
}

/// `Number.parseFloat`: the longest numeric prefix after leading whitespace.
fn parse_float(text: &str) -> Option<f64> {
    let text = text.trim_start();
    let bytes = text.as_bytes();
    let mut end = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        end = 1;
    }
    if text[end..].starts_with("Infinity") {
        let value = f64::INFINITY;
        return Some(if bytes.first() == Some(&b'-') {
            -value
        } else {
            value
        });
    }
    let digits_start = end;
    while end < bytes.len() && bytes[end].is_ascii_digit() {
        end += 1;
    }
    if end < bytes.len() && bytes[end] == b'.' {
        end += 1;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
    }
    if !text[digits_start..end].bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let mantissa_end = end;
    if end < bytes.len() && matches!(bytes[end], b'e' | b'E') {
        let mut exp = end + 1;
        if exp < bytes.len() && matches!(bytes[exp], b'+' | b'-') {
            exp += 1;
        }
        let exp_digits = exp;
        while exp < bytes.len() && bytes[exp].is_ascii_digit() {
            exp += 1;
        }
        if exp > exp_digits {
            end = exp;
        }
    }
    let number = &text[..end];
    number
        .parse::<f64>()
        .ok()
        .or_else(|| text[..mantissa_end].parse().ok())
}

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) in milliseconds since the epoch.
fn http_date_ms(text: &str) -> Option<f64> {
    let rest = text.trim().split_once(", ").map_or(text.trim(), |(_, r)| r);
    let parts: Vec<&str> = rest.split_whitespace().collect();
    let [day, month, year, time, zone] = parts.as_slice() else {
        return None;
    };
    if *zone != "GMT" && *zone != "UTC" {
        return None;
    }
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(month))? as i64 + 1;
    let day: i64 = day.parse().ok()?;
    let year: i64 = year.parse().ok()?;
    let mut hms = time.split(':').map(|p| p.parse::<i64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    // Days from civil (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 86_400 + h * 3600 + m * 60 + s) * 1000) as f64)
}

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// A number in [0, 1) for the backoff jitter; it needs no quality, only variety.
fn jitter() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_float_reads_a_numeric_prefix() {
        assert_eq!(parse_float("1.5"), Some(1.5));
        assert_eq!(parse_float(" 20abc"), Some(20.0));
        assert_eq!(parse_float("1e3x"), Some(1000.0));
        assert_eq!(parse_float("2e"), Some(2.0));
        assert_eq!(parse_float(".5"), Some(0.5));
        assert_eq!(parse_float("abc"), None);
        assert_eq!(parse_float("-"), None);
    }

    #[test]
    fn http_dates_parse_to_epoch_milliseconds() {
        assert_eq!(
            http_date_ms("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777_000.0)
        );
        assert_eq!(http_date_ms("tomorrow"), None);
    }

    #[test]
    fn retry_policy_follows_status_and_header() {
        let status = |code: u16, should: Option<&str>| Failure::Status {
            error: ApiError::from_response(code, "{}"),
            should_retry: should.map(str::to_owned),
            retry_after_ms: None,
            retry_after: None,
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
