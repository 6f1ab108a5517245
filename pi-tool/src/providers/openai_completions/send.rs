//! Sending the request: the `openai` SDK's failures (status errors, connection errors,
//! timeouts) with its texts, and pi-ai's `retryProviderRequest` around them (only when
//! `max_retries` asks for it; pi-ai's default is no retry).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::request::Prepared;
use crate::abort::AbortSignal;
use crate::agent::StreamOptions;
use crate::providers::error_body::{format_provider_error, normalize_api_error};
use crate::providers::http::{Http, HttpError, HttpResponse};
use crate::providers::js::stringify;
use crate::providers::openai_sse::{ApiError, js_truthy};

/// The most of an error body that is read (the SDK reads it all; a cap keeps a hostile
/// server from filling memory).
const ERROR_BODY_LIMIT: usize = 4 << 20;

/// pi-ai's `DEFAULT_MAX_RETRY_DELAY_MS`.
const MAX_RETRY_DELAY_MS: f64 = 60_000.0;

/// One failed attempt: the SDK's error, and the response headers that steer retries.
struct Failure {
    error: ApiError,
    headers: Vec<(&'static str, String)>,
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
    let max_retries = options.max_retries.unwrap_or(0);
    let mut remaining = max_retries;
    loop {
        let failure = match attempt(http, prepared, signal, options.timeout).await {
            Ok(response) => return Ok(response),
            Err(failure) => failure,
        };
        if signal.is_aborted() {
            return Err("Request aborted".to_owned());
        }
        if remaining == 0 || !is_retryable(&failure) {
            return Err(api_error_message(&failure.error));
        }
        let delay = retry_delay(&failure, max_retries - remaining)?;
        remaining -= 1;
        if !sleep(delay, signal).await {
            return Err("Request aborted".to_owned());
        }
    }
}

/// One request: a 2xx response, or the error the SDK throws for it.
async fn attempt(
    http: &Http,
    prepared: &Prepared,
    signal: &AbortSignal,
    timeout: Option<Duration>,
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
            timeout,
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

/// `isRetryableProviderError`: the server's `x-should-retry`, else no status
/// (connection errors), 408, 409, 429 and 5xx.
fn is_retryable(failure: &Failure) -> bool {
    match failure.header("x-should-retry") {
        Some("true") => return true,
        Some("false") => return false,
        _ => {}
    }
    match failure.error.status {
        None => true,
        Some(status) => matches!(status, 408 | 409 | 429) || status >= 500,
    }
}

/// `getRetryDelayMs`: the server's `retry-after-ms` or `retry-after` (seconds or an
/// HTTP date), capped at 60 s (beyond it the call fails with pi-ai's text), else
/// exponential backoff from 0.5 s to 8 s with up to 25 % jitter.
fn retry_delay(failure: &Failure, retry_index: u32) -> Result<Duration, String> {
    let validate = |ms: f64| -> Result<Duration, String> {
        if ms > MAX_RETRY_DELAY_MS {
            return Err(format!(
                "Server requested {}s retry delay (max: {}s). {}",
                ceil_seconds(ms),
                ceil_seconds(MAX_RETRY_DELAY_MS),
                failure.error.message
            ));
        }
        // NaN and negative delays retry at once, as `setTimeout` does.
        Ok(Duration::from_secs_f64((ms / 1000.0).max(0.0)))
    };
    if let Some(ms) = failure.header("retry-after-ms").and_then(parse_float)
        && !ms.is_nan()
    {
        return validate(ms);
    }
    if let Some(value) = failure.header("retry-after").filter(|v| !v.is_empty()) {
        let ms = match parse_float(value) {
            Some(seconds) => seconds * 1000.0,
            None => parse_http_date(value).map_or(f64::NAN, |at| at - now_ms()),
        };
        return validate(ms);
    }
    let exponential = (0.5 * 2f64.powi(retry_index.min(16) as i32)).min(8.0) * 1000.0;
    Ok(Duration::from_secs_f64(
        exponential * (1.0 - jitter() * 0.25) / 1000.0,
    ))
}

fn ceil_seconds(ms: f64) -> String {
    let seconds = (ms / 1000.0).ceil();
    if seconds.is_finite() {
        format!("{seconds}")
    } else {
        "Infinity".to_owned()
    }
}

/// `Number.parseFloat`: the longest decimal prefix after leading whitespace.
fn parse_float(text: &str) -> Option<f64> {
    let text = text.trim_start();
    if let Some(rest) = text
        .strip_prefix("Infinity")
        .or(text.strip_prefix("+Infinity"))
    {
        let _ = rest;
        return Some(f64::INFINITY);
    }
    if text.starts_with("-Infinity") {
        return Some(f64::NEG_INFINITY);
    }
    let bytes = text.as_bytes();
    let mut end = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        end = 1;
    }
    let digits_start = end;
    while bytes.get(end).is_some_and(u8::is_ascii_digit) {
        end += 1;
    }
    let mut digits = end - digits_start;
    if bytes.get(end) == Some(&b'.') {
        let dot = end;
        end += 1;
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        digits += end - dot - 1;
        if end - dot == 1 && digits == 0 {
            end = dot;
        }
    }
    if digits == 0 {
        return None;
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let mut e = end + 1;
        if matches!(bytes.get(e), Some(b'+' | b'-')) {
            e += 1;
        }
        let exp_start = e;
        while bytes.get(e).is_some_and(u8::is_ascii_digit) {
            e += 1;
        }
        if e > exp_start {
            end = e;
        }
    }
    text[..end].parse().ok()
}

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) in ms since the epoch.
fn parse_http_date(text: &str) -> Option<f64> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as i64
        + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, s] = hms.as_slice() else {
        return None;
    };
    // A header is the server's: out-of-range fields are no date (and no overflow).
    if !(1..=31).contains(&day)
        || !(0..=9999).contains(&year)
        || !(0..24).contains(h)
        || !(0..60).contains(m)
        || !(0..=60).contains(s)
    {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
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

/// A number in [0, 1) for the backoff jitter (no cryptographic use).
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

/// Sleeps unless the signal aborts first (then `false`).
async fn sleep(delay: Duration, signal: &AbortSignal) -> bool {
    if signal.is_aborted() {
        return false;
    }
    tokio::select! {
        _ = signal.aborted() => false,
        _ = tokio::time::sleep(delay) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn failure(status: Option<u16>, headers: &[(&'static str, &str)]) -> Failure {
        Failure {
            error: ApiError::new(status, None, Some("boom")),
            headers: headers.iter().map(|(n, v)| (*n, (*v).to_owned())).collect(),
        }
    }

    #[test]
    fn retries_follow_the_sdk_policy() {
        assert!(is_retryable(&failure(Some(429), &[])));
        assert!(is_retryable(&failure(Some(503), &[])));
        assert!(is_retryable(&failure(None, &[])));
        assert!(!is_retryable(&failure(Some(400), &[])));
        assert!(is_retryable(&failure(
            Some(400),
            &[("x-should-retry", "true")]
        )));
        assert!(!is_retryable(&failure(
            Some(500),
            &[("x-should-retry", "false")]
        )));
    }

    #[test]
    fn server_delays_are_honoured_and_capped() {
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
    fn parse_float_reads_a_prefix() {
        assert_eq!(parse_float(" 1.5s"), Some(1.5));
        assert_eq!(parse_float("abc"), None);
        assert_eq!(parse_float(".5"), Some(0.5));
        assert_eq!(parse_float("2e3x"), Some(2000.0));
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777_000.0)
        );
        assert_eq!(
            parse_http_date("Sun, 06 Nov 99999999999999 08:49:37 GMT"),
            None
        );
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
