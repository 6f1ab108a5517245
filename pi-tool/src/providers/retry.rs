//! pi-ai's retry policy (`utils/provider-retry.js`), shared by every provider and used
//! only when `StreamOptions::max_retries` is set (pi-ai's default is no retry): which
//! failures are retried, how long to wait (the server's `retry-after-ms` or
//! `retry-after`, refused above 60 s; else exponential backoff with jitter), and the
//! wait itself, which the run's abort signal ends.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use std::future::Future;

use crate::model::StreamOptions;
use pi_tool_core::AbortSignal;

/// pi-ai's default cap on a server-requested retry delay.
const DEFAULT_MAX_RETRY_DELAY_MS: f64 = 60_000.0;

/// A failed attempt as the retry policy sees it.
pub(crate) struct Attempt<'a> {
    /// The HTTP status; `None` for a connection failure.
    pub(crate) status: Option<u16>,
    pub(crate) header: &'a dyn Fn(&str) -> Option<String>,
    /// The attempt's error text (quoted when a server delay is too long).
    pub(crate) message: &'a str,
}

/// `isRetryableProviderError`: `x-should-retry` decides, else connection failures,
/// 408, 409, 429 and 5xx.
pub(crate) fn is_retryable(attempt: &Attempt<'_>) -> bool {
    match (attempt.header)("x-should-retry").as_deref() {
        Some("true") => return true,
        Some("false") => return false,
        _ => {}
    }
    match attempt.status {
        None => true,
        Some(status) => matches!(status, 408 | 409 | 429) || status >= 500,
    }
}

/// `getRetryDelayMs`: the server's `retry-after-ms` or `retry-after` (seconds or an
/// HTTP date), refused above 60 s; else exponential backoff with up to 25% jitter.
pub(crate) fn retry_delay(attempt: &Attempt<'_>, retry_index: u32) -> Result<Duration, String> {
    let validate = |ms: f64| {
        if ms > DEFAULT_MAX_RETRY_DELAY_MS {
            Err(format!(
                "Server requested {}s retry delay (max: {}s). {}",
                ceil_seconds(ms),
                ceil_seconds(DEFAULT_MAX_RETRY_DELAY_MS),
                attempt.message
            ))
        } else {
            Ok(to_duration(ms))
        }
    };
    if let Some(value) = (attempt.header)("retry-after-ms")
        && !value.is_empty()
        && let Some(ms) = parse_float(&value)
    {
        return validate(ms);
    }
    if let Some(value) = (attempt.header)("retry-after")
        && !value.is_empty()
    {
        let ms = match parse_float(&value) {
            Some(seconds) => seconds * 1000.0,
            None => http_date_ms(&value).map_or(f64::NAN, |at| at - now_ms()),
        };
        return validate(ms);
    }
    let exponential = (0.5 * 2f64.powi(retry_index.min(30) as i32)).min(8.0) * 1000.0;
    Ok(to_duration(exponential * (1.0 - jitter() * 0.25)))
}

/// A provider's failed attempt, as the retry loop needs it.
pub(crate) trait RetryFailure {
    /// Runs `f` on the failure as the policy reads it (status, headers, text).
    fn with_attempt<T>(&self, f: impl FnOnce(&Attempt<'_>) -> T) -> T;
    /// The text the message ends with when the failure is not retried.
    fn into_message(self) -> String;
    /// Whether the failure is the abort itself.
    fn is_abort(&self) -> bool {
        false
    }
}

/// pi-ai's `retryProviderRequest`: runs `attempt` until it succeeds, the failure is not
/// retryable, `options.max_retries` is spent or the signal aborts (`Request aborted`).
pub(crate) async fn with_retries<T, F, Fut>(
    options: &StreamOptions,
    mut attempt: impl FnMut() -> Fut,
) -> Result<T, String>
where
    F: RetryFailure,
    Fut: Future<Output = Result<T, F>>,
{
    let signal = &options.signal;
    let max_retries = options.max_retries.unwrap_or(0);
    let mut remaining = max_retries;
    loop {
        let failure = match attempt().await {
            Ok(value) => return Ok(value),
            Err(failure) => failure,
        };
        // Once the signal aborted, every failure reads as this.
        if signal.is_aborted() || failure.is_abort() {
            return Err("Request aborted".to_owned());
        }
        if remaining == 0 || !failure.with_attempt(is_retryable) {
            return Err(failure.into_message());
        }
        let delay = failure.with_attempt(|a| retry_delay(a, max_retries - remaining))?;
        remaining -= 1;
        if !sleep(delay, signal).await {
            return Err("Request aborted".to_owned());
        }
    }
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

/// `Math.ceil(ms / 1000)` as JavaScript prints it (`Infinity`, not `inf`).
fn ceil_seconds(ms: f64) -> String {
    let seconds = (ms / 1000.0).ceil();
    if seconds.is_finite() {
        format!("{seconds}")
    } else {
        "Infinity".to_owned()
    }
}

fn to_duration(ms: f64) -> Duration {
    // setTimeout(NaN) and negative delays fire at once.
    if ms.is_finite() && ms > 0.0 {
        Duration::from_secs_f64(ms / 1000.0)
    } else {
        Duration::ZERO
    }
}

/// `Number.parseFloat`: the longest leading decimal literal, after white space.
fn parse_float(text: &str) -> Option<f64> {
    let text = text.trim_start_matches(crate::js::is_js_space);
    if text.starts_with("Infinity") || text.starts_with("+Infinity") {
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
    let mut mantissa_digits = end - digits_start;
    if bytes.get(end) == Some(&b'.') {
        let mut frac = end + 1;
        while bytes.get(frac).is_some_and(u8::is_ascii_digit) {
            frac += 1;
        }
        mantissa_digits += frac - end - 1;
        if frac - end - 1 > 0 || end > digits_start {
            end = frac;
        }
    }
    if mantissa_digits == 0 {
        return None;
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let mut exp = end + 1;
        if matches!(bytes.get(exp), Some(b'+' | b'-')) {
            exp += 1;
        }
        let exp_digits = exp;
        while bytes.get(exp).is_some_and(u8::is_ascii_digit) {
            exp += 1;
        }
        if exp > exp_digits {
            end = exp;
        }
    }
    text[..end].parse().ok()
}

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// A number in [0, 1) for the backoff jitter (it needs no quality, only spread).
fn jitter() -> f64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    f64::from(nanos % 1_000_000) / 1_000_000.0
}

/// `Date.parse` for the IMF-fixdate form servers send (`Wed, 21 Oct 2015 07:28:00 GMT`).
fn http_date_ms(text: &str) -> Option<f64> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_, day, month, year, time, zone] = parts.as_slice() else {
        return None;
    };
    if *zone != "GMT" && *zone != "UTC" {
        return None;
    }
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = months.iter().position(|m| m.eq_ignore_ascii_case(month))? as i64 + 1;
    // Small types: a server's digits cannot overflow the arithmetic below.
    let day = i64::from(day.parse::<u8>().ok()?);
    let year = i64::from(year.parse::<u16>().ok()?);
    let hms: Vec<i64> = time
        .split(':')
        .map(|p| p.parse::<u8>().ok().map(i64::from))
        .collect::<Option<_>>()?;
    let [h, m, s] = hms.as_slice() else {
        return None;
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn retry_policy_follows_pi_ai() {
        let none = headers(&[]);
        let a = Attempt {
            status: Some(429),
            header: &none,
            message: "m",
        };
        assert!(is_retryable(&a));
        assert!(!is_retryable(&Attempt {
            status: Some(400),
            ..a
        }));
        let a = Attempt {
            status: Some(429),
            header: &none,
            message: "m",
        };
        let d = retry_delay(&a, 0).unwrap();
        assert!(d <= Duration::from_millis(500) && d >= Duration::from_millis(375));
        let big = retry_delay(
            &Attempt {
                status: Some(429),
                header: &none,
                message: "m",
            },
            10,
        )
        .unwrap();
        assert!(big <= Duration::from_secs(8));
        let ms = headers(&[("retry-after-ms", "250"), ("x-should-retry", "false")]);
        let a = Attempt {
            status: Some(500),
            header: &ms,
            message: "m",
        };
        assert!(!is_retryable(&a));
        assert_eq!(retry_delay(&a, 0).unwrap(), Duration::from_millis(250));
        let long = headers(&[("retry-after", "120")]);
        let a = Attempt {
            status: Some(429),
            header: &long,
            message: "429 slow down",
        };
        assert_eq!(
            retry_delay(&a, 0).unwrap_err(),
            "Server requested 120s retry delay (max: 60s). 429 slow down"
        );
    }

    #[test]
    fn parse_float_and_http_dates() {
        assert_eq!(parse_float(" 1.5s"), Some(1.5));
        assert_eq!(parse_float(".5"), Some(0.5));
        assert_eq!(parse_float("2e3x"), Some(2000.0));
        assert_eq!(parse_float("abc"), None);
        assert_eq!(
            http_date_ms("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(1_445_412_480_000.0)
        );
        assert_eq!(
            http_date_ms("Wed, 21 Oct 99999999999999 07:28:00 GMT"),
            None
        );
        assert_eq!(http_date_ms("Wed, 21 Oct 2015 99999999999:28:00 GMT"), None);
        assert_eq!(http_date_ms("tomorrow"), None);
        assert_eq!(parse_float("2e"), Some(2.0));
        assert_eq!(parse_float("-"), None);
    }

    #[test]
    fn an_infinite_server_delay_reads_as_javascript_prints_it() {
        let huge = headers(&[("retry-after", "1e400")]);
        let a = Attempt {
            status: Some(503),
            header: &huge,
            message: "503 busy",
        };
        assert_eq!(
            retry_delay(&a, 0).unwrap_err(),
            "Server requested Infinitys retry delay (max: 60s). 503 busy"
        );
    }
}
