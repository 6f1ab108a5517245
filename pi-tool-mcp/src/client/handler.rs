//! Our side of the connection: what the server's notifications and requests reach.
//!
//! - **Progress** goes to the call that asked for it, by progress token. Each call has a
//!   one-slot mailbox (`watch`): a newer notification replaces one the call has not read
//!   yet, so a server that floods progress costs one slot per call, never a queue.
//! - **`notifications/tools/list_changed`** wakes the toolset's refresh task.
//! - **Elicitation** is answered as [`super::InputHandler`] says; **sampling** is declined
//!   (rmcp's default) unless the host gave a [`super::SamplingHandler`].

// SEP-2577 deprecates sampling in a later revision; 2025-11-25 and 2026-07-28 have it,
// and servers (the reference `everything` server among them) still send it.
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestMethod, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitationCapability,
    FormElicitationCapability, Implementation, ProgressNotificationParam, ProgressToken,
    ProtocolVersion, SamplingCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use tokio::sync::{Notify, watch};

use pi_tool_core::context::ExtensionContext;

use super::input::{self, InputHandler, InputRequest, InputResponse};
use super::sampling::SamplingHandler;

type Routes = Mutex<HashMap<ProgressToken, watch::Sender<Option<ProgressNotificationParam>>>>;

/// Shared by the rmcp service and the toolset.
pub(crate) struct Shared {
    routes: Routes,
    /// Woken by `notifications/tools/list_changed`.
    pub(crate) tools_changed: Notify,
    input: Option<Arc<dyn InputHandler>>,
    sampling: Option<Arc<dyn SamplingHandler>>,
    server_name: String,
    /// The session contexts of the calls running now, newest last: whose UI answers an
    /// elicitation when the host gave no handler.
    contexts: Mutex<Vec<(u64, ExtensionContext)>>,
    next_call: std::sync::atomic::AtomicU64,
}

/// The [`ClientHandler`] of one connection.
#[derive(Clone)]
pub(crate) struct Handler {
    pub(crate) shared: Arc<Shared>,
    initialize_only: bool,
}

impl Handler {
    /// `initialize_only`: the client announces 2025-11-25 in `initialize` (rmcp's
    /// default is the newest revision, which has no `initialize`).
    pub(crate) fn new(
        server_name: &str,
        input: Option<Arc<dyn InputHandler>>,
        sampling: Option<Arc<dyn SamplingHandler>>,
        initialize_only: bool,
    ) -> Self {
        Handler {
            initialize_only,
            shared: Arc::new(Shared {
                routes: Mutex::default(),
                tools_changed: Notify::new(),
                input,
                sampling,
                server_name: server_name.to_owned(),
                contexts: Mutex::default(),
                next_call: Default::default(),
            }),
        }
    }
}

/// Removes a call's progress route when the call ends, however it ends.
pub(crate) struct Route {
    shared: Arc<Shared>,
    token: ProgressToken,
}

impl Drop for Route {
    fn drop(&mut self) {
        let removed = self
            .shared
            .routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.token);
        drop(removed);
    }
}

/// Keeps a running call's session context available for elicitation until it drops.
pub(crate) struct CallContext {
    shared: Arc<Shared>,
    seq: u64,
}

impl Drop for CallContext {
    fn drop(&mut self) {
        let mut contexts = self
            .shared
            .contexts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        contexts.retain(|(seq, _)| *seq != self.seq);
    }
}

impl Shared {
    /// Offers `context`'s UI for the server's questions while the call runs.
    pub(crate) fn enter_call(
        self: &Arc<Self>,
        context: Option<&ExtensionContext>,
    ) -> Option<CallContext> {
        let context = context.filter(|c| c.has_ui())?.clone();
        let seq = self
            .next_call
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.contexts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((seq, context));
        Some(CallContext {
            shared: self.clone(),
            seq,
        })
    }

    /// Routes the progress of `token` to the returned receiver until the route drops.
    pub(crate) fn route(
        self: &Arc<Self>,
        token: ProgressToken,
    ) -> (Route, watch::Receiver<Option<ProgressNotificationParam>>) {
        let (sender, receiver) = watch::channel(None);
        let replaced = self
            .routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(token.clone(), sender);
        drop(replaced);
        (
            Route {
                shared: self.clone(),
                token,
            },
            receiver,
        )
    }
}

impl Shared {
    /// The answer to a sampling request: the host's handler's, or method-not-found (the
    /// client did not announce the capability) without one.
    pub(crate) async fn answer_sampling(
        &self,
        request: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(handler) = &self.sampling else {
            return Err(ErrorData::method_not_found::<CreateMessageRequestMethod>());
        };
        handler
            .create_message(&self.server_name, request)
            .await
            .map_err(|why| ErrorData::internal_error(why, None))
    }

    /// Hands a progress notification to its call; one of no running call (late, or
    /// made up) is dropped.
    pub(crate) fn deliver_progress(&self, params: ProgressNotificationParam) {
        let routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(sender) = routes.get(&params.progress_token) {
            sender.send_replace(Some(params));
        }
    }

    /// The answer to an elicitation: the host's handler's, else a running call's UI's,
    /// else a decline.
    pub(crate) async fn answer_elicitation(&self, request: ElicitRequestParams) -> ElicitResult {
        let newest = self
            .contexts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .last()
            .map(|(_, context)| context.clone());
        let Some(handler) = input::pick(self.input.as_ref(), newest) else {
            return InputResponse::Decline.into_elicit_result();
        };
        let request = InputRequest::from_elicitation(&self.server_name, request);
        handler.elicit(request).await.into_elicit_result()
    }
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.shared.deliver_progress(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.shared.tools_changed.notify_one();
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(tokio::select! {
            answer = self.shared.answer_elicitation(request) => answer,
            () = context.ct.cancelled() => InputResponse::Cancel.into_elicit_result(),
        })
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        tokio::select! {
            answer = self.shared.answer_sampling(params) => answer,
            () = context.ct.cancelled() => Err(ErrorData::internal_error(
                "the server cancelled the sampling request",
                None,
            )),
        }
    }

    fn get_info(&self) -> ClientConfig {
        // Always offered: a running call's session UI may answer even when the host
        // gave no handler, and without either the request is declined, which the
        // protocol allows.
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        if self.shared.sampling.is_some() {
            capabilities.sampling = Some(SamplingCapability::default());
        }
        let config = ClientConfig::new(
            capabilities,
            Implementation::new("pi-tool-mcp", env!("CARGO_PKG_VERSION")),
        );
        if self.initialize_only {
            config.with_protocol_version(ProtocolVersion::V_2025_11_25)
        } else {
            config
        }
    }
}
