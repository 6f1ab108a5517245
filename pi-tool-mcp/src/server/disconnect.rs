//! A streamable-HTTP client that closes a `tools/call`'s response ends the call.
//!
//! rmcp answers a POSTed request on that POST's own response (server-sent events). In its
//! stateless mode it aborts the handler when that response is dropped; in session mode it
//! does not, and without an event store a dropped stream cannot be resumed either, so the
//! call would run on (a tool that waits for its signal, forever) for a result nobody can
//! receive. So the HTTP layer tags each forwarded request with a [`ClientGone`] signal,
//! aborted when hyper drops the response body (sent in full, or its connection closed),
//! and [`PackServer`](crate::PackServer)'s call aborts its tool when the signal fires
//! first. A call whose response was sent has ended already, so the abort after a whole
//! response reaches nothing.

use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::body::{Body, Frame, SizeHint};
use pi_tool_core::{AbortController, AbortSignal};
use rmcp::service::{RequestContext, RoleServer};

/// Aborted once the response to the request that carries it is gone.
#[derive(Clone)]
pub(crate) struct ClientGone(pub(crate) AbortSignal);

/// The [`ClientGone`] signal of a call that came over streamable HTTP.
pub(crate) fn client_gone(context: &RequestContext<RoleServer>) -> Option<AbortSignal> {
    let parts = context.extensions.get::<hyper::http::request::Parts>()?;
    parts
        .extensions
        .get::<ClientGone>()
        .map(|gone| gone.0.clone())
}

/// A response body that aborts its request's [`ClientGone`] when dropped.
pub(crate) struct GuardedBody<B> {
    inner: B,
    controller: AbortController,
    /// Whatever the response holds until it is gone (a session's call slot).
    _holds: Option<Box<dyn Send + Sync>>,
}

/// Tags `request` with a [`ClientGone`] signal and returns its controller, for the
/// response's [`GuardedBody`].
pub(crate) fn tag<T>(request: &mut hyper::Request<T>) -> AbortController {
    let controller = AbortController::new();
    request
        .extensions_mut()
        .insert(ClientGone(controller.signal()));
    controller
}

impl<B> GuardedBody<B> {
    pub(crate) fn new(inner: B, controller: AbortController) -> Self {
        GuardedBody {
            inner,
            controller,
            _holds: None,
        }
    }

    /// Keeps `held` until the response is gone.
    pub(crate) fn holding(mut self, held: Option<impl Send + Sync + 'static>) -> Self {
        self._holds = held.map(|held| Box::new(held) as Box<dyn Send + Sync>);
        self
    }
}

impl<B> Drop for GuardedBody<B> {
    fn drop(&mut self) {
        self.controller.abort();
    }
}

impl<B: Body + Unpin> Body for GuardedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
