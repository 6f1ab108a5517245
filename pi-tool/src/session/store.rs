//! The transcript a session keeps (Pi's `SessionManager.inMemory()`).
//!
//! Every message that ends during a run (`message_end`: prompts, assistant messages,
//! tool results) is appended in order. The store is shared: the session, its contexts
//! and the host read the same entries. Only the in-memory store exists; a persistent one
//! would implement the same two operations.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::model::Message;

/// The messages of a session, in order, kept in memory (Pi's in-memory `SessionManager`).
/// Cheap to clone; clones share the entries.
#[doc(alias = "SessionManager")]
#[derive(Clone, Default)]
pub struct Transcript {
    entries: Arc<Mutex<Vec<Message>>>,
}

impl std::fmt::Debug for Transcript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transcript")
            .field("messages", &self.lock().len())
            .finish()
    }
}

impl Transcript {
    /// An empty transcript (Pi's `SessionManager.inMemory()`).
    #[doc(alias = "inMemory")]
    pub fn new() -> Self {
        Transcript::default()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Message>> {
        // Appends are single pushes: a panic elsewhere cannot leave the list torn.
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends a message (Pi's `appendMessage`).
    #[doc(alias = "appendMessage")]
    pub fn push(&self, message: Message) {
        self.lock().push(message);
    }

    /// Puts `messages` ahead of the others (a resumed run's earlier messages).
    pub(crate) fn prepend(&self, messages: impl IntoIterator<Item = Message>) {
        let mut entries = self.lock();
        let rest = std::mem::take(&mut *entries);
        entries.extend(messages);
        entries.extend(rest);
    }

    /// A copy of the transcript, in order.
    pub fn messages(&self) -> Vec<Message> {
        self.lock().clone()
    }

    /// How many messages are stored.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing is stored yet.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_transcript() {
        let store = Transcript::new();
        let view = store.clone();
        assert!(view.is_empty());
        store.push(Message::user_text("hi"));
        assert_eq!(view.len(), 1);
        assert_eq!(view.messages()[0].role(), "user");
    }
}
