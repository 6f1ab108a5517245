//! Checkpoints of the later batches of a durable run (docs/durable-runs.md, "Exactly
//! once").
//!
//! A run that suspended has a record in the store. Once it is resumed, each of its later
//! batches saves, before any of its calls executes, what a resume needs to continue from
//! that batch (the transcript up to its assistant message, the messages the run added,
//! the turn, and each call of the batch: refused, finished, or prepared with its
//! validated arguments) in the suspension's own shape ([`SavedRun`]), in place of the
//! run's state. The same transaction forgets the markers of the batches before, whose
//! results the checkpoint holds, and renews the run's lease. The batch's calls, and their
//! nested calls, are then marked started and finished as a resumed batch's are, so a
//! process that dies in a later turn is taken up from that batch: a finished call is
//! replayed, a started one is interrupted (or runs again if idempotent), and none runs
//! twice. A run that never suspended has no record and never checkpoints.

use super::suspend::{CallsMade, ResumeBatch, RunDurability, STATE_FORMAT, SavedRun, Saving};
use crate::durable::StoreError;
use crate::model::{Context, Message};

/// Where in its run a batch is: what a checkpoint saves besides the batch.
#[derive(Clone, Copy)]
pub(crate) struct BatchAt<'a> {
    /// The messages the run added so far, ending with the batch's assistant message.
    pub(crate) new_messages: &'a [Message],
    /// The turn of the batch.
    pub(crate) turn: u64,
}

impl RunDurability {
    /// The marks of a batch after the one the run resumed in, when the run has a record
    /// in the store; `None` for a run that never suspended (no store query).
    pub(super) fn later_batch(&self) -> Option<ResumeBatch> {
        self.recorded
            .then(|| ResumeBatch::later(self.runs.store.clone(), self.run_id.clone()))
    }

    /// Saves the batch at the end of `context` as the run's state before its calls
    /// execute: `saved` holds each call so far, the last one the call about to run (a
    /// sequential batch) or every call (a parallel one).
    pub(super) async fn checkpoint(
        &self,
        context: &Context,
        at: BatchAt<'_>,
        (sequential, calls_made): (bool, CallsMade),
        saved: &[Saving],
    ) -> Result<(), StoreError> {
        let state = SavedRun {
            format: STATE_FORMAT,
            run_id: self.run_id.clone(),
            messages: context.messages.clone(),
            new_messages: at.new_messages.to_vec(),
            turn: at.turn,
            sequential,
            calls: self.saved_calls(context, saved),
            calls_made,
        };
        let state = serde_json::to_value(&state).map_err(|error| {
            StoreError::Corrupt(format!("the run's checkpoint cannot be saved: {error}"))
        })?;
        self.runs
            .store
            .checkpoint(&self.run_id, &state, self.runs.lease)
            .await
    }
}
