//! Batches on the line framing. MCP 2025-03-26 says a server MUST receive JSON-RPC
//! batches (a JSON array of messages); 2025-06-18 removed them. rmcp refuses every
//! batch, so in a session that agreed on 2025-03-26 the framing passes a batch's
//! messages to rmcp one line each, holds back rmcp's answers to them, and writes them
//! as one JSON array in the batch's order once the last one is in; messages the framing
//! answers itself (malformed ones) take their place in the array. A batch of
//! notifications and responses only gets no answer, as JSON-RPC says. Notifications a
//! call sends while it runs (progress) are written as they come, as for any call.
//!
//! In a session of any other revision a batch is refused as before (-32600).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

/// The one revision with batches.
const BATCH_REVISION: &str = "2025-03-26";

/// Whether the session has batches, and the batches waiting for rmcp's answers.
#[derive(Clone, Default)]
pub(crate) struct Batches(Arc<Mutex<State>>);

#[derive(Default)]
struct State {
    /// The revision the server answered `initialize` with, once it did.
    revision: Option<String>,
    open: Vec<Open>,
}

/// One batch: its answers in order, and the slots still waiting for rmcp's.
struct Open {
    answers: Vec<Option<Value>>,
    waiting: HashMap<String, VecDeque<usize>>,
    missing: usize,
}

impl Open {
    fn line(self) -> Vec<u8> {
        let answers: Vec<Value> = self.answers.into_iter().flatten().collect();
        let mut line = Value::Array(answers).to_string().into_bytes();
        line.push(b'\n');
        line
    }
}

impl Batches {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the session's revision is known yet (rmcp answered `initialize`).
    pub(crate) fn revision_known(&self) -> bool {
        self.lock().revision.is_some()
    }

    /// Records the revision the server answered `initialize` with.
    pub(crate) fn set_revision(&self, revision: String) {
        self.lock().revision = Some(revision);
    }

    /// Whether the session takes batches (it agreed on 2025-03-26).
    pub(crate) fn allowed(&self) -> bool {
        self.lock().revision.as_deref() == Some(BATCH_REVISION)
    }

    /// Opens a batch whose answers are `answers` in order (`None`: rmcp's answer to the
    /// request in `waiting` with that index). Returns the batch's line when nothing is
    /// left to wait for and something is to be answered.
    pub(crate) fn open(
        &self,
        answers: Vec<Option<Value>>,
        waiting: Vec<(String, usize)>,
    ) -> Option<Vec<u8>> {
        let missing = waiting.len();
        let mut slots: HashMap<String, VecDeque<usize>> = HashMap::new();
        for (id, index) in waiting {
            slots.entry(id).or_default().push_back(index);
        }
        let open = Open {
            answers,
            waiting: slots,
            missing,
        };
        if open.missing > 0 {
            self.lock().open.push(open);
            return None;
        }
        (!open.answers.is_empty()).then(|| open.line())
    }

    /// Takes rmcp's answer `line` to the request `id` if a batch waits for it:
    /// `Some(None)` while the batch still waits for others, `Some(Some(batch))` with the
    /// batch's line once it is complete, `None` if no batch waits for it.
    pub(crate) fn take(&self, id: &str, line: &[u8]) -> Option<Option<Vec<u8>>> {
        let mut state = self.lock();
        let at = state
            .open
            .iter()
            .position(|open| open.waiting.contains_key(id))?;
        let answer = serde_json::from_slice::<Value>(line).ok()?;
        let open = &mut state.open[at];
        let slots = open.waiting.get_mut(id)?;
        let index = slots.pop_front()?;
        if slots.is_empty() {
            open.waiting.remove(id);
        }
        open.answers[index] = Some(answer);
        open.missing -= 1;
        if open.missing > 0 {
            return Some(None);
        }
        let done = state.open.remove(at);
        Some(Some(done.line()))
    }
}
