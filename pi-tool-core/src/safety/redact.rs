//! Redaction: keep credentials out of the text the model reads.
//!
//! Secrets belong in the host's configuration, never in a description, progress, a
//! result or an error message (Pi's custom-tool page). Tools rarely put them there on purpose; they
//! arrive by accident: an HTTP client's error that echoes the request URL with
//! `?api_key=…`, a `git` failure that prints `https://user:token@host`, a debug dump of
//! request headers. Whatever reaches the model may be repeated to the user, written into
//! files, or sent to another tool, so the runtime passes every error message through a
//! [`Redactor`] before the model sees it.
//!
//! A redactor replaces with `[REDACTED]`:
//!
//! - **Configured secrets**: exact strings the host knows (API keys, passwords), at least
//!   [`MIN_SECRET_CHARS`] characters after trimming (a short "secret" would shred
//!   ordinary text and reveal itself by the holes). Their percent-encoded and
//!   JSON-escaped forms are matched too, since URLs and JSON dumps are where they appear.
//! - **Built-in patterns** (unless turned off): `Authorization:`/`Proxy-Authorization:`
//!   header values (keeping the scheme), API-key headers and cookies, `Bearer <token>`,
//!   the token shapes of common services (`sk-…`, `ghp_…`/`github_pat_…`, `xox[bp]-…`,
//!   AWS `AKIA…`, Google `AIza…`, Stripe `sk_live_…`), JWTs (`eyJ….….…`), PEM private
//!   key blocks, the password of `scheme://user:password@host`, and the values of
//!   secret-looking keys (`api_key=`, `token=`, `"password": "…"`, `X-Amz-Signature=`).
//!
//! Matches are found on the whole text (not line by line), overlapping matches are
//! merged into one `[REDACTED]`, and the result is always valid UTF-8. The patterns err
//! on the side of redacting (`token: expected` loses `expected`); a secret that the
//! text itself splits (a line break inserted inside a key) is not recognised, since it
//! no longer is that string. Redaction is a safety net, not a licence to put secrets
//! into text.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, OnceLock};

use regex::{Regex, RegexSet};

use crate::content::Content;
use crate::error::ToolError;

/// What a redacted span is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// The shortest configured secret accepted, in characters (after trimming whitespace).
pub const MIN_SECRET_CHARS: usize = 8;

/// The built-in patterns. A pattern with a group named `s` redacts only that group
/// (`Authorization: Bearer [REDACTED]`); otherwise the whole match goes.
const PATTERNS: &[&str] = &[
    // Authorization headers, in dumps (`Authorization: Basic …`) and maps (`"authorization": "…"`).
    r#"(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|negotiate|ntlm|apikey|aws4-hmac-sha256)\s+)?(?P<s>[^\s"'`][^\r\n"'`]*)"#,
    // Other credential-carrying headers, one per line.
    r"(?im)^\s*(?:x-api-key|api-key|x-auth-token|x-access-token|cookie|set-cookie|x-amz-security-token)\s*:\s*(?P<s>[^\r\n]+)",
    // `Bearer <token>` anywhere (RFC 6750 token68 characters).
    r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9\-._~+/]{8,}=*)",
    // OpenAI / Anthropic style keys (`sk-…`, `sk-proj-…`, `sk-ant-…`).
    r"\bsk-[A-Za-z0-9_\-]{16,}",
    // Stripe keys.
    r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}",
    // GitHub tokens.
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
    // Slack tokens.
    r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
    // AWS access key ids.
    r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b",
    // Google API keys.
    r"\bAIza[0-9A-Za-z_\-]{35}",
    // JWTs: header.payload.signature, base64url, header starting with `{"`.
    r"\beyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*",
    // PEM private keys, to the END line or the end of the text if cut.
    r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
    // The password in `scheme://user:password@host`.
    r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s/?#@:]*:(?P<s>[^\s/?#@]+)@",
    // Values of secret-looking keys: `api_key=…`, `token: …`, `"password": "…"`.
    r#"(?i)\b[a-z0-9_.\-]*(?:api[_.\-]?key|apikey|access[_.\-]?key|secret[_.\-]?key|access[_.\-]?token|auth[_.\-]?token|refresh[_.\-]?token|id[_.\-]?token|session[_.\-]?token|client[_.\-]?secret|token|secret|password|passwd|pwd|credentials?|signature|sig)["']?\s*[=:]\s*["']?(?P<s>[^\s&"'#,;<>()\[\]{}]+)"#,
];

struct Builtin {
    set: RegexSet,
    patterns: Vec<Regex>,
}

fn builtin() -> &'static Builtin {
    static BUILTIN: OnceLock<Builtin> = OnceLock::new();
    BUILTIN.get_or_init(|| Builtin {
        // The patterns are constants covered by tests; an empty set (never reached)
        // would only disable the built-ins, not panic in a host.
        set: RegexSet::new(PATTERNS).unwrap_or_else(|_| RegexSet::empty()),
        patterns: PATTERNS
            .iter()
            .filter_map(|pattern| Regex::new(pattern).ok())
            .collect(),
    })
}

/// Replaces secrets in model-visible text with `[REDACTED]` (see the module docs).
///
/// Cheap to clone and shareable across tasks; built once from the host's configuration.
/// `Debug` never prints the secrets.
#[derive(Clone)]
pub struct Redactor {
    inner: Arc<Inner>,
}

struct Inner {
    /// Every form of every configured secret, longest first.
    secrets: Vec<String>,
    builtin: bool,
}

impl Default for Redactor {
    /// The built-in patterns, no configured secrets.
    fn default() -> Self {
        Redactor::builtin()
    }
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.inner.secrets.len())
            .field("builtin_patterns", &self.inner.builtin)
            .finish()
    }
}

impl Redactor {
    /// A redactor with the built-in patterns only.
    pub fn builtin() -> Self {
        // Compile the patterns now, at configuration time, not on the first error.
        builtin();
        Redactor {
            inner: Arc::new(Inner {
                secrets: Vec::new(),
                builtin: true,
            }),
        }
    }

    /// A redactor with the built-in patterns and these configured secrets.
    pub fn new<I, S>(secrets: I) -> Result<Self, RedactorError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Redactor::builder().secrets(secrets).build()
    }

    /// A builder, to add secrets one by one or turn the built-in patterns off.
    pub fn builder() -> RedactorBuilder {
        RedactorBuilder {
            secrets: Vec::new(),
            builtin: true,
        }
    }

    /// The text with every secret replaced; borrowed when nothing matched.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let spans = self.spans(text);
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end) in spans {
            out.push_str(&text[at..start]);
            out.push_str(REDACTED);
            at = end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    /// Whether the text contains anything this redactor would replace.
    pub fn finds_secrets(&self, text: &str) -> bool {
        !self.spans(text).is_empty()
    }

    /// The error with its message redacted and its kind kept: what the runtime calls on
    /// every error message before it reaches the model.
    pub fn redact_error(&self, error: ToolError) -> ToolError {
        error.map_message(|message| match self.redact(&message) {
            Cow::Borrowed(_) => message,
            Cow::Owned(redacted) => redacted,
        })
    }

    /// Redacts every text block in place (results and progress content).
    pub fn redact_content(&self, content: &mut [Content]) {
        for block in content {
            if let Content::Text { text } = block
                && let Cow::Owned(redacted) = self.redact(text)
            {
                *text = redacted;
            }
        }
    }

    /// The byte ranges to replace: sorted, merged, on char boundaries.
    fn spans(&self, text: &str) -> Vec<(usize, usize)> {
        let mut spans = Vec::new();
        for secret in &self.inner.secrets {
            let mut from = 0;
            // Overlapping occurrences too: with `abab…`-shaped secrets a non-overlapping
            // scan can leave a tail of one occurrence unredacted.
            while let Some(found) = text[from..].find(secret.as_str()) {
                let start = from + found;
                spans.push((start, start + secret.len()));
                from = start + text[start..].chars().next().map_or(1, char::len_utf8);
            }
        }
        if self.inner.builtin {
            let builtin = builtin();
            for index in builtin.set.matches(text).iter() {
                let Some(pattern) = builtin.patterns.get(index) else {
                    continue;
                };
                for captures in pattern.captures_iter(text) {
                    if let Some(span) = captures.name("s").or_else(|| captures.get(0)) {
                        spans.push((span.start(), span.end()));
                    }
                }
            }
        }
        merge(spans)
    }
}

fn merge(mut spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    spans.retain(|(start, end)| start < end);
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// Builds a [`Redactor`] (from [`Redactor::builder`]; built-in patterns on).
pub struct RedactorBuilder {
    secrets: Vec<String>,
    builtin: bool,
}

impl fmt::Debug for RedactorBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedactorBuilder")
            .field("secrets", &self.secrets.len())
            .field("builtin_patterns", &self.builtin)
            .finish()
    }
}

impl RedactorBuilder {
    /// Adds one configured secret (trimmed; checked by [`build`](Self::build)).
    #[must_use]
    pub fn secret(mut self, secret: impl Into<String>) -> Self {
        self.secrets.push(secret.into());
        self
    }

    /// Adds configured secrets.
    #[must_use]
    pub fn secrets<I, S>(mut self, secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.secrets.extend(secrets.into_iter().map(Into::into));
        self
    }

    /// Turns the built-in patterns off: only configured secrets are redacted.
    #[must_use]
    pub fn without_builtin_patterns(mut self) -> Self {
        self.builtin = false;
        self
    }

    /// The redactor; fails when a secret is shorter than [`MIN_SECRET_CHARS`].
    pub fn build(self) -> Result<Redactor, RedactorError> {
        let mut forms = Vec::new();
        for (index, secret) in self.secrets.iter().enumerate() {
            let secret = secret.trim();
            if secret.chars().count() < MIN_SECRET_CHARS {
                return Err(RedactorError { index });
            }
            forms.push(secret.to_owned());
            forms.push(percent_encoded(secret));
            forms.push(json_escaped(secret));
        }
        // Longest first, so that a secret containing another is found whole; the merge
        // makes the order irrelevant for overlaps, but it keeps the spans few.
        forms.sort_unstable_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        forms.dedup();
        if self.builtin {
            builtin();
        }
        Ok(Redactor {
            inner: Arc::new(Inner {
                secrets: forms,
                builtin: self.builtin,
            }),
        })
    }
}

/// A configured secret was refused. The message names its position, never its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedactorError {
    index: usize,
}

impl RedactorError {
    /// The position (0-based) of the refused secret in the order it was added.
    pub fn index(&self) -> usize {
        self.index
    }
}

impl fmt::Display for RedactorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "configured secret #{} is shorter than {MIN_SECRET_CHARS} characters; \
             short strings cannot be redacted safely",
            self.index + 1
        )
    }
}

impl std::error::Error for RedactorError {}

/// RFC 3986 percent-encoding of everything but unreserved characters.
fn percent_encoded(secret: &str) -> String {
    let mut out = String::with_capacity(secret.len());
    for byte in secret.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The secret as it appears inside a JSON string.
fn json_escaped(secret: &str) -> String {
    let quoted = serde_json::to_string(secret).unwrap_or_default();
    quoted
        .strip_prefix('"')
        .and_then(|inner| inner.strip_suffix('"'))
        .unwrap_or(secret)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ToolErrorKind;

    fn builtin_redacts(text: &str) -> String {
        Redactor::builtin().redact(text).into_owned()
    }

    #[test]
    fn every_builtin_pattern_compiles() {
        assert_eq!(builtin().patterns.len(), PATTERNS.len());
        assert_eq!(builtin().set.len(), PATTERNS.len());
    }

    #[test]
    fn configured_secrets_are_replaced_everywhere() {
        let r = Redactor::new(["hunter2-correct-horse"]).unwrap();
        assert_eq!(
            r.redact("login failed for hunter2-correct-horse (hunter2-correct-horse)"),
            "login failed for [REDACTED] ([REDACTED])"
        );
        // Trimmed when configured: a key read from a file with its newline still matches.
        let r = Redactor::new(["  s3cr3t-value-42\n"]).unwrap();
        assert_eq!(r.redact("x=s3cr3t-value-42."), "x=[REDACTED].");
    }

    #[test]
    fn untouched_text_is_borrowed() {
        let r = Redactor::new(["hunter2-correct-horse"]).unwrap();
        assert!(matches!(r.redact("nothing to see"), Cow::Borrowed(_)));
        assert!(!r.finds_secrets("nothing to see"));
        assert!(r.finds_secrets("hunter2-correct-horse"));
    }

    #[test]
    fn short_secrets_are_refused_without_echoing_them() {
        let error = Redactor::new(["long-enough-secret", "abc"]).unwrap_err();
        assert_eq!(error.index(), 1);
        assert!(!error.to_string().contains("abc"), "{error}");
        assert!(
            Redactor::new(["        \n"]).is_err(),
            "whitespace is not a secret"
        );
        // Eight characters, not eight bytes: "mật-khẩu" is 8 chars, 11 bytes.
        assert!(Redactor::new(["mật-khẩu"]).is_ok());
        assert!(Redactor::new(["mật-khẩ"]).is_err());
    }

    #[test]
    fn secrets_inside_urls_are_found_raw_and_encoded() {
        let r = Redactor::builder()
            .secret("p@ss w/rd+1")
            .without_builtin_patterns()
            .build()
            .unwrap();
        assert_eq!(
            r.redact("GET https://api.example.com/v1?key=p%40ss%20w%2Frd%2B1&x=1 failed"),
            "GET https://api.example.com/v1?key=[REDACTED]&x=1 failed"
        );
        assert_eq!(r.redact("raw: p@ss w/rd+1"), "raw: [REDACTED]");
        let r = Redactor::new([r#"quo"te\slash"#]).unwrap();
        assert_eq!(
            r.redact(r#"{"password_hint":"quo\"te\\slash"}"#),
            r#"{"password_hint":"[REDACTED]"}"#
        );
    }

    #[test]
    fn overlapping_and_nested_secrets_leave_nothing_behind() {
        let r = Redactor::builder()
            .secrets(["abcdef12", "def12345", "cdef1234567"])
            .without_builtin_patterns()
            .build()
            .unwrap();
        assert_eq!(r.redact("x abcdef12345 y"), "x [REDACTED] y");
        // Self-overlapping: every occurrence of "abababab" in "ababababab".
        let r = Redactor::builder()
            .secret("abababab")
            .without_builtin_patterns()
            .build()
            .unwrap();
        assert_eq!(r.redact("<ababababab>"), "<[REDACTED]>");
        // Adjacent secrets become one marker.
        let r = Redactor::new(["11111111", "22222222"]).unwrap();
        assert_eq!(r.redact("1111111122222222"), "[REDACTED]");
    }

    #[test]
    fn unicode_around_and_inside_secrets() {
        let r = Redactor::new(["mật-khẩu-bí-mật", "🔑🔑🔑🔑🔑🔑🔑🔑"]).unwrap();
        assert_eq!(
            r.redact("Lỗi: mật-khẩu-bí-mật sai 🦀 🔑🔑🔑🔑🔑🔑🔑🔑🔑!"),
            "Lỗi: [REDACTED] sai 🦀 [REDACTED]!"
        );
        assert_eq!(
            builtin_redacts("Ключ: Bearer abcdefgh12345678 — ошибка"),
            "Ключ: Bearer [REDACTED] — ошибка"
        );
    }

    #[test]
    fn authorization_headers_keep_the_scheme_only() {
        let dump = "POST /v1/chat HTTP/1.1\r\nHost: api.example.com\r\n\
                    Authorization: Bearer abc.def-ghi_jkl\r\n\
                    proxy-authorization: Basic dXNlcjpwYXNzd29yZA==\r\n\
                    X-Api-Key: 0123456789\r\nCookie: session=abc; theme=dark\r\n\
                    Content-Type: application/json\r\n";
        let out = builtin_redacts(dump);
        assert_eq!(
            out,
            "POST /v1/chat HTTP/1.1\r\nHost: api.example.com\r\n\
             Authorization: Bearer [REDACTED]\r\n\
             proxy-authorization: Basic [REDACTED]\r\n\
             X-Api-Key: [REDACTED]\r\nCookie: [REDACTED]\r\n\
             Content-Type: application/json\r\n"
        );
        assert_eq!(
            builtin_redacts(r#"headers: {"Authorization": "token ghx-short", "Accept": "*/*"}"#),
            r#"headers: {"Authorization": "token [REDACTED]", "Accept": "*/*"}"#
        );
        assert_eq!(
            builtin_redacts("authorization=Digest username=\"u\", response=\"9f\""),
            "authorization=Digest [REDACTED]\"u\", response=\"9f\""
        );
    }

    #[test]
    fn token_shapes_are_recognised() {
        let cases = [
            (
                "key sk-proj-AbCdEf0123456789XyZ_-q rejected",
                "key [REDACTED] rejected",
            ),
            ("sk-ant-api03-abcdefghijklmnop0123", "[REDACTED]"),
            ("stripe sk_live_abcdefghij0123 bad", "stripe [REDACTED] bad"),
            ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]"),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
                "[REDACTED]",
            ),
            (
                "slack xoxb-123456789012-abcdefghijkl ok",
                "slack [REDACTED] ok",
            ),
            ("slack xoxp-1234-5678-abcdefgh", "slack [REDACTED]"),
            ("aws AKIAIOSFODNN7EXAMPLE denied", "aws [REDACTED] denied"),
            ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "[REDACTED]"),
            (
                "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl end",
                "jwt [REDACTED] end",
            ),
            ("Bearer abcdefgh12345678==", "Bearer [REDACTED]"),
        ];
        for (input, expected) in cases {
            assert_eq!(builtin_redacts(input), expected, "{input}");
        }
    }

    #[test]
    fn secret_keys_in_queries_json_and_config() {
        let cases = [
            (
                "GET https://x.io/a?api_key=abc123&page=2 returned 401",
                "GET https://x.io/a?api_key=[REDACTED]&page=2 returned 401",
            ),
            (
                "https://s3/b?X-Amz-Signature=deadbeef&X-Amz-Date=1",
                "https://s3/b?X-Amz-Signature=[REDACTED]&X-Amz-Date=1",
            ),
            ("token=xyz", "token=[REDACTED]"),
            (
                r#"{"password": "hunter2", "user": "bob"}"#,
                r#"{"password": "[REDACTED]", "user": "bob"}"#,
            ),
            (
                "client_secret: s3cr3t\nother: 1",
                "client_secret: [REDACTED]\nother: 1",
            ),
            ("--access-token=abc", "--access-token=[REDACTED]"),
        ];
        for (input, expected) in cases {
            assert_eq!(builtin_redacts(input), expected, "{input}");
        }
    }

    #[test]
    fn url_userinfo_passwords_are_removed() {
        assert_eq!(
            builtin_redacts(
                "fatal: unable to access 'https://bob:pa55word@git.example.com/r.git/'"
            ),
            "fatal: unable to access 'https://bob:[REDACTED]@git.example.com/r.git/'"
        );
        assert_eq!(
            builtin_redacts("postgres://app:x%40y@db:5432/prod"),
            "postgres://app:[REDACTED]@db:5432/prod"
        );
        // A port is not a password.
        assert_eq!(
            builtin_redacts("http://localhost:8080/x"),
            "http://localhost:8080/x"
        );
    }

    #[test]
    fn private_keys_spanning_lines_are_removed_whole() {
        let text = "loaded key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n\
                    AAAAAAAAAA\n-----END OPENSSH PRIVATE KEY-----\nthen failed";
        assert_eq!(
            builtin_redacts(text),
            "loaded key:\n[REDACTED]\nthen failed"
        );
        // Cut off before its END line (a truncated message): redacted to the end.
        let cut = "key: -----BEGIN RSA PRIVATE KEY-----\nMIIEow";
        assert_eq!(builtin_redacts(cut), "key: [REDACTED]");
    }

    #[test]
    fn multi_line_messages_redact_per_occurrence_not_per_line() {
        let r = Redactor::new(["line-spanning-secret"]).unwrap();
        let text =
            "first: line-spanning-secret\nBearer abcdefgh12345678\nlast line-spanning-secret";
        assert_eq!(
            r.redact(text),
            "first: [REDACTED]\nBearer [REDACTED]\nlast [REDACTED]"
        );
        // The bearer pattern stops at the line end: the next line survives.
        assert_eq!(
            builtin_redacts("Bearer abcdefgh12345678\nnext line"),
            "Bearer [REDACTED]\nnext line"
        );
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for text in [
            "File not found: src/main.rs",
            "expected a string, got 42 at line 3 column 7",
            "basic arithmetic failed",
            "max_tokens must be at most 4096",
            "the task-runner exited",
            "commit 3f1c2a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39",
            "Path leaves the project root",
        ] {
            assert_eq!(builtin_redacts(text), text);
        }
    }

    #[test]
    fn builtin_patterns_can_be_turned_off() {
        let r = Redactor::builder()
            .secret("my-configured-secret")
            .without_builtin_patterns()
            .build()
            .unwrap();
        assert_eq!(
            r.redact("Bearer abcdefgh12345678 my-configured-secret"),
            "Bearer abcdefgh12345678 [REDACTED]"
        );
    }

    #[test]
    fn errors_keep_their_kind() {
        let r = Redactor::new(["hunter2-correct-horse"]).unwrap();
        let error = ToolError::with_kind(ToolErrorKind::Timeout, "slow: hunter2-correct-horse");
        let redacted = r.redact_error(error);
        assert_eq!(redacted.kind(), ToolErrorKind::Timeout);
        assert_eq!(redacted.message(), "slow: [REDACTED]");
        assert!(r.redact_error(ToolError::aborted()).is_abort());
    }

    #[test]
    fn content_blocks_are_redacted_in_place() {
        let r = Redactor::new(["hunter2-correct-horse"]).unwrap();
        let mut content = vec![
            Content::text("a hunter2-correct-horse"),
            Content::image("aHVudGVyMg==", "image/png"),
        ];
        r.redact_content(&mut content);
        assert_eq!(content[0], Content::text("a [REDACTED]"));
        assert_eq!(content[1], Content::image("aHVudGVyMg==", "image/png"));
    }

    #[test]
    fn debug_never_prints_secrets() {
        let r = Redactor::new(["hunter2-correct-horse"]).unwrap();
        let debug = format!(
            "{r:?} {:?}",
            Redactor::builder().secret("hunter2-correct-horse")
        );
        assert!(!debug.contains("hunter2"), "{debug}");
    }

    #[test]
    fn hostile_inputs_do_not_blow_up() {
        let r = Redactor::new(["aaaaaaaa"]).unwrap();
        let long = "a".repeat(100_000);
        assert_eq!(r.redact(&long), REDACTED);
        let noisy = "token=".repeat(10_000) + &"Bearer ".repeat(10_000);
        let _ = builtin_redacts(&noisy);
        let mixed: String = (0..5000)
            .map(|i| if i % 2 == 0 { 'é' } else { ':' })
            .collect();
        assert_eq!(builtin_redacts(&mixed), mixed);
    }
}
