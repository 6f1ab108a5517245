//! Cancellation: Pi's `AbortController` / `AbortSignal`, over tokio-util's
//! `CancellationToken`.
//!
//! The agent owns one controller per run and hands every tool call a signal. Aborting
//! does not interrupt a tool by itself (as in Pi): a tool observes the signal by checking
//! it ([`AbortSignal::check`]), by awaiting it ([`AbortSignal::aborted`]), or by
//! racing its work against it ([`AbortSignal::race`], [`AbortSignal::sleep`]).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::error::ToolError;

/// The owner's side: aborts the signal it hands out.
#[derive(Debug, Clone, Default)]
pub struct AbortController {
    token: CancellationToken,
}

impl AbortController {
    /// A controller whose signal is not aborted.
    pub fn new() -> Self {
        Self::default()
    }

    /// The signal to hand to tools. Every clone observes the same abort.
    pub fn signal(&self) -> AbortSignal {
        AbortSignal::from_token(self.token.clone())
    }

    /// Aborts the signal. Idempotent.
    pub fn abort(&self) {
        self.token.cancel();
    }
}

/// The observer's side: tells a tool that its call was cancelled.
///
/// The loop hands every call its own clone, so cloning is one reference-count increment:
/// a `CancellationToken` clone (and drop) takes its tree's lock.
#[derive(Debug, Clone, Default)]
pub struct AbortSignal {
    token: Arc<CancellationToken>,
}

impl AbortSignal {
    /// A signal that is never aborted (for tests and direct calls).
    pub fn never() -> Self {
        Self::default()
    }

    /// A signal that is already aborted.
    pub fn aborted_now() -> Self {
        let controller = AbortController::new();
        controller.abort();
        controller.signal()
    }

    /// A signal over an existing token, for hosts that already use tokio-util.
    pub fn from_token(token: CancellationToken) -> Self {
        AbortSignal {
            token: Arc::new(token),
        }
    }

    /// The underlying token.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Whether the signal has been aborted (Pi's `signal.aborted`).
    pub fn is_aborted(&self) -> bool {
        self.token.is_cancelled()
    }

    /// `Err(ToolError::aborted())` once aborted, `Ok(())` before: `signal.check()?` at the
    /// points where a tool may stop (Pi's `signal.throwIfAborted()`).
    #[doc(alias = "throwIfAborted")]
    #[doc(alias = "throw_if_aborted")]
    pub fn check(&self) -> Result<(), ToolError> {
        if self.is_aborted() {
            Err(ToolError::aborted())
        } else {
            Ok(())
        }
    }

    /// Completes when the signal is aborted.
    pub async fn aborted(&self) {
        self.token.cancelled().await;
    }

    /// Runs `future` until it completes or the signal aborts, whichever is first; an
    /// abort drops the future and gives `Err(ToolError::aborted())`.
    pub async fn race<F: Future>(&self, future: F) -> Result<F::Output, ToolError> {
        self.check()?;
        tokio::select! {
            biased;
            () = self.token.cancelled() => Err(ToolError::aborted()),
            output = future => Ok(output),
        }
    }

    /// Sleeps for `duration` unless aborted first (Pi's `delay(ms, undefined, {signal})`).
    pub async fn sleep(&self, duration: Duration) -> Result<(), ToolError> {
        self.race(tokio::time::sleep(duration)).await
    }

    /// A signal aborted when this one is, or when its own child controller aborts.
    pub fn child(&self) -> (AbortController, AbortSignal) {
        let token = self.token.child_token();
        let controller = AbortController {
            token: token.clone(),
        };
        (controller, AbortSignal::from_token(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn abort_is_seen_by_every_clone() {
        let controller = AbortController::new();
        let signal = controller.signal();
        assert!(signal.check().is_ok());
        controller.abort();
        assert!(signal.clone().is_aborted());
        assert!(signal.check().unwrap_err().is_abort());
        signal.aborted().await;
    }

    #[tokio::test(start_paused = true)]
    async fn sleep_ends_early_on_abort() {
        let controller = AbortController::new();
        let signal = controller.signal();
        let sleeper = tokio::spawn(async move { signal.sleep(Duration::from_secs(60)).await });
        tokio::time::sleep(Duration::from_millis(10)).await;
        controller.abort();
        assert!(sleeper.await.unwrap().unwrap_err().is_abort());
    }

    #[tokio::test]
    async fn race_returns_the_output_when_not_aborted() {
        assert_eq!(AbortSignal::never().race(async { 7 }).await.unwrap(), 7);
        assert!(AbortSignal::aborted_now().race(async { 7 }).await.is_err());
    }
}
