//! A tool's `onUpdate` as MCP `notifications/progress`.
//!
//! Only a request that carries a progress token gets notifications (the protocol's
//! rule). The tool's callback is synchronous and sending is not, so updates go through
//! a channel to one task that sends them in order; [`ProgressForwarder::finish`] closes
//! the channel and waits for that task, so every notification is on the wire before the
//! call's result.

use std::sync::{Arc, Mutex};

use pi_tool_core::{JsonDetails, JsonToolResult, OnUpdate};
use rmcp::model::ProgressToken;
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::convert::progress_param;

type Slot = Arc<Mutex<Option<mpsc::UnboundedSender<JsonToolResult>>>>;

/// Sends one call's progress updates to the client.
pub(crate) struct ProgressForwarder {
    on_update: OnUpdate<Option<JsonDetails>>,
    sender: Slot,
    task: Option<JoinHandle<()>>,
}

impl ProgressForwarder {
    /// A forwarder for the call's token; without a token, updates are dropped unsent.
    pub(crate) fn new(peer: Peer<RoleServer>, token: Option<ProgressToken>) -> Self {
        let Some(token) = token else {
            return ProgressForwarder {
                on_update: OnUpdate::none(),
                sender: Arc::new(Mutex::new(None)),
                task: None,
            };
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<JsonToolResult>();
        let task = tokio::spawn(async move {
            let mut count = 0u64;
            while let Some(update) = rx.recv().await {
                count += 1;
                // A client that went away cannot be told; the call goes on regardless.
                let _ = peer
                    .notify_progress(progress_param(token.clone(), count, &update))
                    .await;
            }
        });
        let sender: Slot = Arc::new(Mutex::new(Some(tx)));
        let slot = sender.clone();
        let on_update = OnUpdate::new(move |update: JsonToolResult| {
            if let Ok(guard) = slot.lock()
                && let Some(tx) = guard.as_ref()
            {
                let _ = tx.send(update);
            }
        });
        ProgressForwarder {
            on_update,
            sender,
            task: Some(task),
        }
    }

    /// The callback to hand to the tool.
    pub(crate) fn on_update(&self) -> OnUpdate<Option<JsonDetails>> {
        self.on_update.clone()
    }

    /// Closes the callback (later updates are dropped, as in Pi) and waits until every
    /// earlier update has been sent.
    pub(crate) async fn finish(mut self) {
        self.on_update.close();
        if let Ok(mut guard) = self.sender.lock() {
            guard.take();
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}
