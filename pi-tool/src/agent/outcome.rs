//! A failed run, made hard to miss. As in Pi, `Agent::prompt` returns `Ok` once the run
//! has ended, even when the model call failed (a provider's "Connection error.", an HTTP
//! 401, an abort): the failure is an assistant message with an error stop reason, and
//! [`Agent::error_message`](super::Agent::error_message) holds its text. Code that wants
//! the failure as an `Err` asks for it in one call, after the run:
//!
//! ```no_run
//! # async fn demo(agent: pi_tool::agent::Agent) -> Result<(), Box<dyn std::error::Error>> {
//! agent.prompt("What is the weather in Tokyo?").await?; // the run could not start
//! agent.ensure_ok()?;                                     // the run ended in a failed model call
//! # Ok(())
//! # }
//! ```

/// The last run ended with a failed model call (an assistant message whose stop reason is
/// `error` or `aborted`); its text is that message's error text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFailed {
    message: String,
}

impl RunFailed {
    pub(super) fn new(message: String) -> RunFailed {
        RunFailed { message }
    }

    /// The failed message's error text, as Pi shows it (`Connection error.`).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for RunFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the agent run failed: {}", self.message)
    }
}

impl std::error::Error for RunFailed {}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::agent::{Agent, AgentOptions};
    use crate::model::StopReason;
    use crate::testing::{FauxModel, FauxTurn};

    #[tokio::test]
    async fn a_failed_model_call_is_ok_from_prompt_and_err_from_ensure_ok() {
        let model = FauxModel::new(vec![
            FauxTurn::text("")
                .with_stop_reason(StopReason::Error)
                .with_error_message("Connection error."),
            FauxTurn::text("Fine now."),
        ]);
        let agent = Agent::new(AgentOptions::new(Arc::new(model)));
        // Pi's semantics: the run ended, so `prompt` is `Ok`.
        agent.prompt("Hello").await.unwrap();
        let failed = agent.ensure_ok().unwrap_err();
        assert_eq!(failed.message(), "Connection error.");
        assert_eq!(
            failed.to_string(),
            "the agent run failed: Connection error."
        );
        // The next run starts clean.
        agent.prompt("Again").await.unwrap();
        assert_eq!(agent.ensure_ok(), Ok(()));
    }
}
