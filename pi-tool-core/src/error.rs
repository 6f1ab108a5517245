//! `ToolError`: why a tool call failed, in words the model can act on.
//!
//! Whatever fails inside a tool (the tool's own error, an abort, invalid arguments, a
//! panic, a timeout) ends as an error tool result whose text is [`ToolError::message`].
//! Like `anyhow::Error`, `ToolError` does not implement `std::error::Error` itself, so
//! that `?` converts any standard error into it.

use std::fmt;

/// The text Pi gives a call that was cancelled (`Operation aborted`).
pub const ABORTED_MESSAGE: &str = "Operation aborted";

/// Which kind of failure a [`ToolError`] is. Hosts use it for logging and policy; the
/// model only ever sees the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// The tool reported a failure.
    Failed,
    /// The call was cancelled through its abort signal (Pi's `AbortError`).
    Aborted,
    /// The arguments did not match the tool's schema or params type.
    InvalidArguments,
    /// The call ran longer than its timeout.
    Timeout,
    /// The tool panicked.
    Panicked,
}

/// A failed tool call: the model-visible message and its kind.
#[derive(Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
    kind: ToolErrorKind,
}

impl ToolError {
    /// A tool failure with this model-visible message.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            kind: ToolErrorKind::Failed,
        }
    }

    /// A tool failure from anything that displays (`ToolError::msg(error)` where `?`
    /// cannot convert, for example an `anyhow::Error`).
    pub fn msg(message: impl fmt::Display) -> Self {
        ToolError::new(message.to_string())
    }

    /// The error of a cancelled call: message `Operation aborted`.
    pub fn aborted() -> Self {
        ToolError::with_kind(ToolErrorKind::Aborted, ABORTED_MESSAGE)
    }

    /// An error of the given kind.
    pub fn with_kind(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            kind,
        }
    }

    /// The text the model reads.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The kind of failure.
    pub fn kind(&self) -> ToolErrorKind {
        self.kind
    }

    /// Whether the call failed because it was cancelled.
    pub fn is_abort(&self) -> bool {
        self.kind == ToolErrorKind::Aborted
    }

    /// Replaces the message, keeping the kind (for redaction or rewording).
    #[must_use]
    pub fn map_message(self, f: impl FnOnce(String) -> String) -> Self {
        ToolError {
            message: f(self.message),
            kind: self.kind,
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolError")
            .field("kind", &self.kind)
            .field("message", &self.message)
            .finish()
    }
}

/// Any standard error converts with `?`; its `Display` text becomes the message.
impl<E> From<E> for ToolError
where
    E: std::error::Error + Send + Sync + 'static,
{
    fn from(error: E) -> Self {
        ToolError::new(error.to_string())
    }
}

impl From<ToolError> for Box<dyn std::error::Error + Send + Sync> {
    fn from(error: ToolError) -> Self {
        error.message.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read() -> Result<(), ToolError> {
        std::fs::read("/definitely/not/here")?;
        Ok(())
    }

    fn parse() -> Result<serde_json::Value, ToolError> {
        Ok(serde_json::from_str("{")?)
    }

    #[test]
    fn question_mark_converts_std_errors() {
        let io = read().unwrap_err();
        assert_eq!(io.kind(), ToolErrorKind::Failed);
        assert!(io.message().contains("No such file"), "{io}");
        assert!(parse().unwrap_err().message().contains("EOF"));
    }

    #[test]
    fn abort_error_is_recognisable() {
        let e = ToolError::aborted();
        assert!(e.is_abort());
        assert_eq!(e.message(), "Operation aborted");
        assert!(!ToolError::new("x").is_abort());
    }
}
