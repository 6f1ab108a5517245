//! The transport rmcp's service runs a session on: it reads the client's messages from
//! the session's record and puts its own on the streams the record routes them to, with
//! no task or channel of its own.

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;

use super::SessionGone;
use super::state::{Delivery, Session};

/// One session's side of its service.
pub(crate) struct SessionTransport {
    session: Arc<Session>,
}

impl SessionTransport {
    pub(crate) fn new(session: Arc<Session>) -> Self {
        SessionTransport { session }
    }
}

impl Transport<RoleServer> for SessionTransport {
    type Error = SessionGone;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), SessionGone>> + Send + 'static {
        // Routed now, while rmcp calls in the order the service sent; only a full
        // stream's wait is left for the future.
        let delivery = self.session.route(item);
        async move {
            match delivery {
                Delivery::Wait(sender, event) => {
                    // A reader that went away ended its stream; the event has no taker.
                    let _ = sender.send(event).await;
                }
                Delivery::Done => {}
            }
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.session.next_message()
    }

    async fn close(&mut self) -> Result<(), SessionGone> {
        self.session.close();
        Ok(())
    }
}
