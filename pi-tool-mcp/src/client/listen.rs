//! `subscriptions/listen`: how a toolset hears that a 2026-07-28 server's tool list
//! changed.
//!
//! At 2025-11-25 the server sends `notifications/tools/list_changed` on the session, and
//! the handler wakes the refresh task. Revision 2026-07-28 has no session to send it on:
//! the client opens a long-lived `subscriptions/listen` request that asks for
//! `toolsListChanged`, and the server sends the notification on that request's stream.
//! Each one wakes the same refresh task, so both revisions end in one
//! [`McpToolset::refresh`](super::McpToolset::refresh).
//!
//! A stream that ends because the server finished it or because this client fell behind
//! is opened again (a refresh first, for what was missed), at most
//! [`MAX_REOPENS`] times in a row and a second apart; a stream that ends with the
//! connection, or is cancelled, is not.

use std::sync::Arc;
use std::time::Duration;

use pi_tool_core::AbortSignal;
use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{Subscription, SubscriptionEnd};
use rmcp::{Peer, RoleClient};

use super::handler::Shared;

/// How many times in a row a stream that ended is opened again.
const MAX_REOPENS: u32 = 5;

/// The wait before a stream is opened again.
const REOPEN_DELAY: Duration = Duration::from_secs(1);

/// How long the server may take to acknowledge a stream; a server that does not is
/// used without one (connecting does not wait for it).
const ACKNOWLEDGE_BOUND: Duration = Duration::from_secs(5);

/// Whether the server listed in its capabilities that its tool list changes: only then is
/// a stream worth opening (rmcp's server refuses a filter it did not advertise).
pub(crate) fn server_announces_tool_changes(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| {
        info.capabilities
            .tools
            .as_ref()
            .and_then(|tools| tools.list_changed)
            == Some(true)
    })
}

/// Opens a stream that asks for tool-list changes. `None` (after a warning) when the
/// server refuses it, does not acknowledge it within [`ACKNOWLEDGE_BOUND`], or accepts
/// it without the tool list.
pub(crate) async fn open(server_name: &str, peer: &Peer<RoleClient>) -> Option<Subscription> {
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let Ok(listening) = tokio::time::timeout(ACKNOWLEDGE_BOUND, peer.listen(filter)).await else {
        tracing::warn!(
            target: "pi_tool_mcp::client",
            "{server_name}: subscriptions/listen was not acknowledged within {ACKNOWLEDGE_BOUND:?}, so tool-list changes are not seen until the next refresh"
        );
        return None;
    };
    match listening {
        Ok(subscription) if subscription.acknowledged().tools_list_changed == Some(true) => {
            Some(subscription)
        }
        Ok(mut subscription) => {
            // The server took the request but not the tool list: nothing to hear.
            let _ = subscription.cancel().await;
            None
        }
        Err(error) => {
            tracing::warn!(
                target: "pi_tool_mcp::client",
                "{server_name}: subscriptions/listen failed, so tool-list changes are not seen until the next refresh: {error}"
            );
            None
        }
    }
}

/// Reads `subscription` until `ended` fires, waking `shared.tools_changed` for each
/// tool-list change, and opens it again as the module docs say.
pub(crate) fn spawn(
    server_name: String,
    peer: Peer<RoleClient>,
    shared: Arc<Shared>,
    ended: AbortSignal,
    mut subscription: Subscription,
) {
    tokio::spawn(async move {
        let mut reopens = 0;
        loop {
            loop {
                let next = tokio::select! {
                    next = subscription.next() => next,
                    () = ended.aborted() => {
                        let _ = subscription.cancel().await;
                        return;
                    }
                };
                match next {
                    Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                        reopens = 0;
                        shared.tools_changed.notify_one();
                    }
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                    Err(error) => {
                        tracing::warn!(
                            target: "pi_tool_mcp::client",
                            "{server_name}: the subscriptions/listen stream failed: {error}"
                        );
                        break;
                    }
                }
            }
            match subscription.end() {
                Some(SubscriptionEnd::Graceful(_) | SubscriptionEnd::Lagged { .. }) => {}
                // The connection ended, or a peer cancelled the stream.
                _ => return,
            }
            reopens += 1;
            if reopens > MAX_REOPENS {
                tracing::warn!(
                    target: "pi_tool_mcp::client",
                    "{server_name}: the subscriptions/listen stream ended {MAX_REOPENS} times in a row; tool-list changes are not seen until the next refresh"
                );
                return;
            }
            tokio::select! {
                () = tokio::time::sleep(REOPEN_DELAY) => {}
                () = ended.aborted() => return,
            }
            subscription = tokio::select! {
                opened = open(&server_name, &peer) => match opened {
                    Some(subscription) => subscription,
                    None => return,
                },
                () = ended.aborted() => return,
            };
            // What changed while no stream was open is not lost: list again.
            shared.tools_changed.notify_one();
        }
    });
}
