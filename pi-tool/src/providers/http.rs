//! The HTTP transport every provider shares: one pooled `reqwest` client, a POST whose
//! every await races the run's abort signal and an idle timeout, and the failure kinds
//! pi-ai's runtime reports with its own texts.
//!
//! The idle timeout is why a stalled server cannot hang a run: every wait (for the
//! response headers, then for each body chunk) is bounded, by
//! [`StreamOptions::idle_timeout`] (default [`StreamOptions::DEFAULT_IDLE_TIMEOUT`]) and
//! by pi-ai's [`StreamOptions::timeout`] when that is set. pi-ai has no such bound on a
//! body (docs/differences-from-pi.md §16).

use std::fmt;
use std::time::Duration;

use crate::model::StreamOptions;
use pi_tool_core::AbortSignal;

/// Why a request or its body failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HttpError {
    /// The run's signal was aborted.
    Aborted,
    /// The connection dropped in the middle of the body (undici's `terminated`).
    Terminated,
    /// No response: connection refused, DNS, TLS. The detail never holds the URL.
    Connect(String),
    /// No byte arrived for this long.
    Idle(Duration),
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HttpError::Aborted => f.write_str("Request was aborted"),
            HttpError::Terminated => f.write_str("terminated"),
            HttpError::Connect(detail) => write!(f, "Connection error: {detail}"),
            HttpError::Idle(after) => write!(
                f,
                "Idle timeout: the provider sent nothing for {} s, so the request was ended \
                 (StreamOptions::idle_timeout)",
                after.as_secs_f64()
            ),
        }
    }
}

/// How long one request may wait: for the response headers, and for each body chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timeouts {
    /// The wait for the status line and headers.
    pub(crate) headers: Duration,
    /// The wait for each next chunk of the body.
    pub(crate) idle: Duration,
}

impl Timeouts {
    /// The waits `options` ask for: pi-ai's `timeout` for the headers (else the idle
    /// timeout), and the shorter of the two for every chunk.
    pub(crate) fn of(options: &StreamOptions) -> Self {
        let idle = options
            .idle_timeout
            .unwrap_or(StreamOptions::DEFAULT_IDLE_TIMEOUT);
        Timeouts {
            headers: options.timeout.unwrap_or(idle),
            idle: options.timeout.map_or(idle, |timeout| timeout.min(idle)),
        }
    }
}

/// A pooled HTTP client (cheap to clone).
#[derive(Clone, Debug)]
pub(crate) struct Http {
    client: reqwest::Client,
}

impl Http {
    /// A client with rustls and no proxy lookup (a provider talks to its base URL).
    pub(crate) fn new() -> Self {
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .unwrap_or_else(|_| reqwest::Client::new());
        Http { client }
    }

    /// POSTs `body` to `url` with `headers` (in order; later names replace earlier
    /// ones). Returns once the status line and headers arrived.
    pub(crate) async fn post(
        &self,
        url: &str,
        headers: &[(String, String)],
        body: Vec<u8>,
        signal: &AbortSignal,
        timeouts: Timeouts,
    ) -> Result<HttpResponse, HttpError> {
        let mut request = self.client.post(url).body(body);
        let mut map = reqwest::header::HeaderMap::new();
        for (name, value) in headers {
            let (Ok(name), Ok(value)) = (
                reqwest::header::HeaderName::from_bytes(name.as_bytes()),
                reqwest::header::HeaderValue::from_str(value),
            ) else {
                // Never echo the value: it may be a key.
                return Err(HttpError::Connect(format!("invalid header {name:?}")));
            };
            map.insert(name, value);
        }
        request = request.headers(map);
        let send = request.send();
        let response = race(signal, timeouts.headers, send)
            .await?
            .map_err(connect_error)?;
        Ok(HttpResponse {
            status: response.status().as_u16(),
            inner: response,
            idle: timeouts.idle,
        })
    }
}

impl Default for Http {
    fn default() -> Self {
        Http::new()
    }
}

fn connect_error(error: reqwest::Error) -> HttpError {
    let error = error.without_url();
    let mut detail = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        detail.push_str(": ");
        detail.push_str(&cause.to_string());
        source = cause.source();
    }
    HttpError::Connect(detail)
}

/// A response whose body is read chunk by chunk, as the server sent it.
#[derive(Debug)]
pub(crate) struct HttpResponse {
    /// The HTTP status.
    pub(crate) status: u16,
    inner: reqwest::Response,
    idle: Duration,
}

impl HttpResponse {
    /// A response header, if present and text.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.inner.headers().get(name)?.to_str().ok()
    }

    /// The next chunk of the body; `None` at its end.
    pub(crate) async fn chunk(
        &mut self,
        signal: &AbortSignal,
    ) -> Result<Option<bytes::Bytes>, HttpError> {
        let idle = self.idle;
        race(signal, idle, self.inner.chunk())
            .await?
            .map_err(|_| HttpError::Terminated)
    }

    /// The whole body as text (invalid UTF-8 replaced), at most `limit` bytes of it.
    pub(crate) async fn text(
        mut self,
        signal: &AbortSignal,
        limit: usize,
    ) -> Result<String, HttpError> {
        let mut body = Vec::new();
        while let Some(chunk) = self.chunk(signal).await? {
            let room = limit.saturating_sub(body.len());
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if body.len() >= limit {
                break;
            }
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }
}

/// Awaits `work` unless the signal aborts first or `after` passes without it finishing.
async fn race<T>(
    signal: &AbortSignal,
    after: Duration,
    work: impl std::future::Future<Output = T>,
) -> Result<T, HttpError> {
    if signal.is_aborted() {
        return Err(HttpError::Aborted);
    }
    // tokio saturates a deadline past its horizon, so `Duration::MAX` means "never".
    let timed = async {
        tokio::time::timeout(after, work)
            .await
            .map_err(|_| HttpError::Idle(after))
    };
    tokio::select! {
        biased;
        _ = signal.aborted() => Err(HttpError::Aborted),
        result = timed => result,
    }
}

/// The `User-Agent` every provider sends, pi-ai's: `pi (<platform> <release>; <arch>)`
/// with Node's names (`os.platform()`, `os.release()`, `os.arch()`), for example
/// `pi (linux 6.1.0; x64)`.
pub fn user_agent() -> String {
    let platform = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        "x86" => "ia32",
        "powerpc64" => "ppc64",
        other => other,
    };
    format!("pi ({platform} {}; {arch})", os_release())
}

#[cfg(unix)]
fn os_release() -> String {
    // SAFETY: uname fills a caller-owned, zero-initialised struct; its fields are
    // NUL-terminated C strings within the struct.
    unsafe {
        let mut name: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut name) != 0 {
            return String::new();
        }
        std::ffi::CStr::from_ptr(name.release.as_ptr())
            .to_string_lossy()
            .into_owned()
    }
}

#[cfg(not(unix))]
fn os_release() -> String {
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_agent_reads_like_nodes() {
        let ua = user_agent();
        assert!(ua.starts_with("pi ("), "{ua}");
        assert!(ua.ends_with(')'), "{ua}");
        if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            assert!(
                ua.starts_with("pi (linux ") && ua.ends_with("; x64)"),
                "{ua}"
            );
        }
    }

    #[tokio::test]
    async fn an_aborted_signal_wins_before_any_io() {
        let controller = pi_tool_core::AbortController::new();
        controller.abort();
        let http = Http::new();
        let err = http
            .post(
                "http://127.0.0.1:9/",
                &[],
                Vec::new(),
                &controller.signal(),
                Timeouts::of(&StreamOptions::default()),
            )
            .await
            .unwrap_err();
        assert_eq!(err, HttpError::Aborted);
    }

    #[test]
    fn the_idle_timeout_bounds_every_wait_and_timeout_shortens_it() {
        let default = Timeouts::of(&StreamOptions::default());
        assert_eq!(default.headers, StreamOptions::DEFAULT_IDLE_TIMEOUT);
        assert_eq!(default.idle, StreamOptions::DEFAULT_IDLE_TIMEOUT);
        let both = Timeouts::of(&StreamOptions {
            timeout: Some(Duration::from_secs(600)),
            idle_timeout: Some(Duration::from_millis(200)),
            ..StreamOptions::default()
        });
        assert_eq!(both.headers, Duration::from_secs(600));
        assert_eq!(both.idle, Duration::from_millis(200));
        let short = Timeouts::of(&StreamOptions {
            timeout: Some(Duration::from_secs(1)),
            ..StreamOptions::default()
        });
        assert_eq!(
            (short.headers, short.idle),
            (Duration::from_secs(1), Duration::from_secs(1))
        );
        assert_eq!(
            HttpError::Idle(Duration::from_millis(200)).to_string(),
            "Idle timeout: the provider sent nothing for 0.2 s, so the request was ended \
             (StreamOptions::idle_timeout)"
        );
    }
}
