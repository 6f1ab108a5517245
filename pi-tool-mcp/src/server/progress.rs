//! A tool's `onUpdate` as MCP `notifications/progress`.
//!
//! Only a request that carries a progress token gets notifications (the protocol's
//! rule). The tool's callback is synchronous and sending is not, so updates go through
//! a channel to one task that sends them in order; [`ProgressForwarder::finish`] closes
//! the channel and waits for that task, so every notification is on the wire before the
//! call's result. The task and its channel are made at the first update: rmcp's clients
//! put a progress token on every request, and most calls send no update.

use std::sync::{Arc, Mutex, PoisonError};

use pi_tool_core::{JsonDetails, JsonToolResult, OnUpdate};
use rmcp::model::ProgressToken;
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::convert::progress_param;

/// Where one call's updates go.
enum Sending {
    /// No update yet: where they would go.
    Idle(Peer<RoleServer>, ProgressToken),
    /// The task that sends them, and its channel.
    Started(mpsc::UnboundedSender<JsonToolResult>, JoinHandle<()>),
    /// The call has ended: later updates are dropped.
    Closed,
}

type Slot = Arc<Mutex<Sending>>;

/// Sends one call's progress updates to the client.
pub(crate) struct ProgressForwarder {
    on_update: OnUpdate<Option<JsonDetails>>,
    sending: Option<Slot>,
}

/// Starts the task that sends a call's updates, in order, numbered from 1.
fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Sending {
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
    Sending::Started(tx, task)
}

impl ProgressForwarder {
    /// A forwarder for the call's token; without a token, updates are dropped unsent.
    pub(crate) fn new(peer: Peer<RoleServer>, token: Option<ProgressToken>) -> Self {
        let Some(token) = token else {
            return ProgressForwarder {
                on_update: OnUpdate::none(),
                sending: None,
            };
        };
        let slot: Slot = Arc::new(Mutex::new(Sending::Idle(peer, token)));
        let sending = slot.clone();
        let on_update = OnUpdate::new(move |update: JsonToolResult| {
            let mut sending = sending.lock().unwrap_or_else(PoisonError::into_inner);
            if matches!(*sending, Sending::Idle(..)) {
                let Sending::Idle(peer, token) = std::mem::replace(&mut *sending, Sending::Closed)
                else {
                    return;
                };
                *sending = start(peer, token);
            }
            if let Sending::Started(tx, _) = &*sending {
                let _ = tx.send(update);
            }
        });
        ProgressForwarder {
            on_update,
            sending: Some(slot),
        }
    }

    /// The callback to hand to the tool.
    pub(crate) fn on_update(&self) -> OnUpdate<Option<JsonDetails>> {
        self.on_update.clone()
    }

    /// Closes the callback (later updates are dropped, as in Pi) and waits until every
    /// earlier update has been sent.
    pub(crate) async fn finish(self) {
        self.on_update.close();
        let Some(slot) = self.sending else {
            return;
        };
        let ended = std::mem::replace(
            &mut *slot.lock().unwrap_or_else(PoisonError::into_inner),
            Sending::Closed,
        );
        // Dropping the sender ends the task once it has sent what was queued.
        if let Sending::Started(tx, task) = ended {
            drop(tx);
            let _ = task.await;
        }
    }
}
