//! `resources/subscribe` and `resources/unsubscribe` (MCP before 2026-07-28): each client
//! session's subscribed URIs, and the task that tells the session when one of them
//! changed ([`ResourcePack::notify_updated`]).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, RoleServer};
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use super::resources::ResourcePack;

/// One session's subscriptions. A new session starts with none
/// ([`Subscriptions::default`]); clones share them.
#[derive(Clone, Default)]
pub(crate) struct Subscriptions(Arc<Mutex<State>>);

#[derive(Default)]
struct State {
    uris: HashSet<String>,
    /// Whether the session's forwarding task runs.
    forwarding: bool,
}

impl Subscriptions {
    /// Subscribes the session of `peer` to `uri`; the first subscription starts the task
    /// that forwards the pack's updates of subscribed URIs to it, until the session ends.
    pub(crate) fn subscribe(&self, uri: String, resources: &ResourcePack, peer: Peer<RoleServer>) {
        let start = {
            let mut state = self
                .0
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            state.uris.insert(uri);
            !std::mem::replace(&mut state.forwarding, true)
        };
        if start {
            tokio::spawn(forward(self.clone(), resources.updates(), peer));
        }
    }

    /// Ends the session's subscription to `uri` (none is fine).
    pub(crate) fn unsubscribe(&self, uri: &str) {
        let mut state = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        state.uris.remove(uri);
    }

    fn contains(&self, uri: &str) -> bool {
        let state = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        state.uris.contains(uri)
    }
}

/// How often a forwarding task looks whether its session has ended without an update
/// to tell it.
const SESSION_CHECK: Duration = Duration::from_secs(30);

/// Sends `notifications/resources/updated` for each update of a subscribed URI, until the
/// pack is gone or the session has ended.
async fn forward(
    subscriptions: Subscriptions,
    mut updates: broadcast::Receiver<String>,
    peer: Peer<RoleServer>,
) {
    let mut check = tokio::time::interval(SESSION_CHECK);
    loop {
        tokio::select! {
            update = updates.recv() => match update {
                Ok(uri) if subscriptions.contains(&uri) => {
                    let sent = peer
                        .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                        .await;
                    if sent.is_err() {
                        return;
                    }
                }
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
            _ = check.tick() => {
                if peer.is_transport_closed() {
                    return;
                }
            }
        }
    }
}
