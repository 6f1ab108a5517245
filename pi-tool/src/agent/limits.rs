//! Run limits: how many tool calls a run, and each of its turns, may make, counted over
//! the model's calls **and** nested ones (pi-tool's addition; Pi 0.85.0 has none).
//!
//! A call is counted when the batch takes it up, before its lookup and its checks, so a
//! call that fails validation or is blocked still counts (a model retrying an invalid call
//! is making calls). A call past a limit is not run: it is an error result the model reads
//! (or, nested, the error the outer tool gets), with the limit in its text. The depth of
//! nested calls is `RunPolicy::max_call_depth`.

use std::sync::atomic::{AtomicU32, Ordering};

/// Limits on the number of tool calls, direct and nested. None by default (Pi's
/// behaviour).
///
/// ```
/// use pi_tool::agent::{RunLimits, RunPolicy};
///
/// let policy = RunPolicy::new().limits(RunLimits::new().calls_per_run(50).calls_per_turn(10));
/// assert_eq!(policy.limits.calls_per_run, Some(50));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunLimits {
    /// At most this many calls in one run (one `prompt`, through all its turns).
    pub calls_per_run: Option<u32>,
    /// At most this many calls in one turn (one assistant message's batch, with the
    /// nested calls its tools make).
    pub calls_per_turn: Option<u32>,
}

impl RunLimits {
    /// No limits.
    pub fn new() -> Self {
        RunLimits::default()
    }

    /// Sets the limit per run.
    #[must_use]
    pub fn calls_per_run(mut self, limit: u32) -> Self {
        self.calls_per_run = Some(limit);
        self
    }

    /// Sets the limit per turn.
    #[must_use]
    pub fn calls_per_turn(mut self, limit: u32) -> Self {
        self.calls_per_turn = Some(limit);
        self
    }
}

/// The calls a run has made so far.
#[derive(Debug, Default)]
pub(crate) struct RunCalls(AtomicU32);

impl RunCalls {
    /// A count that starts at `made` (a resumed run's calls before its suspension).
    pub(crate) fn starting_at(made: u32) -> Self {
        RunCalls(AtomicU32::new(made))
    }

    /// The calls counted so far.
    pub(crate) fn made(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Counts one call against `run` (the run's count) and `turn` (the turn's); the error
/// text if a limit is reached.
pub(crate) fn admit(
    limits: &RunLimits,
    run: &RunCalls,
    turn: &AtomicU32,
    tool_name: &str,
) -> Result<(), String> {
    if limits.calls_per_run.is_none() && limits.calls_per_turn.is_none() {
        return Ok(());
    }
    let in_run = run.0.fetch_add(1, Ordering::Relaxed).saturating_add(1);
    let in_turn = turn.fetch_add(1, Ordering::Relaxed).saturating_add(1);
    if let Some(limit) = limits.calls_per_run
        && in_run > limit
    {
        return Err(format!(
            "Tool call limit reached: a run may make at most {limit} tool calls (direct and nested), so this call of {tool_name} was not run. Answer with what you have."
        ));
    }
    if let Some(limit) = limits.calls_per_turn
        && in_turn > limit
    {
        return Err(format!(
            "Tool call limit reached: one turn may make at most {limit} tool calls (direct and nested), so this call of {tool_name} was not run. Make fewer calls at once."
        ));
    }
    Ok(())
}
