//! Listener dispatch: how an agent hands each event to its subscribers, in subscription
//! order, as Pi walks its live listener `Set`; a failing or panicking listener is reported
//! and the run goes on. The agent is seen through [`Subscribers`], so this module does not
//! depend on the agent's state.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use async_trait::async_trait;
use futures::FutureExt;

use super::config::{AgentEventSink, Emit};
use super::event::AgentEvent;
use pi_tool_core::AbortSignal;

/// What a listener returns: an error is reported, never propagated.
pub type ListenerResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// An event listener, awaited in subscription order (Pi's `agent.subscribe(listener)`).
#[async_trait]
pub trait AgentListener: Send + Sync + 'static {
    /// Handles one event; `signal` is the active run's abort signal.
    async fn on_event(&self, event: &AgentEvent, signal: &AbortSignal) -> ListenerResult;
}

pub(super) type SyncListener = dyn Fn(&AgentEvent, &AbortSignal) -> ListenerResult + Send + Sync;

/// A subscribed listener. Synchronous listeners are called without boxing a future
/// (the common case: recording, forwarding to a channel).
#[derive(Clone)]
pub(super) enum Listener {
    Sync(Arc<SyncListener>),
    Async(Arc<dyn AgentListener>),
}

/// Identifies a subscription, for [`Agent::unsubscribe`](super::Agent::unsubscribe).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ListenerId(pub(super) u64);

pub(super) type Listed = (ListenerId, Listener);

/// What the sink reads of an agent: its state reducer and its current listeners.
pub(super) trait Subscribers: Sync {
    /// Applies an event to the agent's state before any listener sees it (Pi's order).
    fn reduce(&self, event: &AgentEvent);
    /// Grows with every subscribe and unsubscribe.
    fn listeners_version(&self) -> u64;
    /// The listeners now, in subscription order.
    fn listeners(&self) -> Arc<Vec<Listed>>;
}

pub(super) struct AgentSink<'a, A: Subscribers> {
    agent: &'a A,
    signal: AbortSignal,
    /// The listeners as of `version` (see `Inner::listeners_version`).
    listeners: Arc<Vec<Listed>>,
    version: u64,
}

impl<'a, A: Subscribers> AgentSink<'a, A> {
    pub(super) fn new(agent: &'a A, signal: AbortSignal) -> Self {
        let version = agent.listeners_version();
        AgentSink {
            agent,
            signal,
            listeners: agent.listeners(),
            version,
        }
    }

    /// Re-reads the listeners if a subscribe or unsubscribe happened since the last read.
    fn refresh_listeners(&mut self) -> bool {
        let version = self.agent.listeners_version();
        if version == self.version {
            return false;
        }
        self.listeners = self.agent.listeners();
        self.version = version;
        true
    }

    /// The index of the listener to call after the one at `index` (id `called`), as Pi's
    /// `for (const listener of this.listeners)` walks a live `Set`: a listener subscribed
    /// meanwhile is still called for this event, one unsubscribed before its turn is not.
    /// Ids grow with each subscription and the list keeps that order.
    fn after(&mut self, called: ListenerId, index: usize) -> usize {
        if !self.refresh_listeners() {
            return index + 1;
        }
        self.listeners
            .iter()
            .position(|(id, _)| id.0 > called.0)
            .unwrap_or(self.listeners.len())
    }
}

fn report(event: &AgentEvent, outcome: std::thread::Result<ListenerResult>) {
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(error)) => tracing::error!(
            event = event.name(),
            %error,
            "agent listener failed; the run goes on"
        ),
        Err(panic) => tracing::error!(
            event = event.name(),
            panic = %pi_tool_core::__runtime::panic_text(&*panic, "the agent run panicked"),
            "agent listener panicked; the run goes on"
        ),
    }
}

fn call_sync(f: &SyncListener, event: &AgentEvent, signal: &AbortSignal) {
    report(
        event,
        std::panic::catch_unwind(AssertUnwindSafe(|| f(event, signal))),
    );
}

impl<A: Subscribers> AgentEventSink for AgentSink<'_, A> {
    fn emit(&mut self, event: AgentEvent) -> Emit<'_> {
        self.agent.reduce(&event);
        self.refresh_listeners();
        // The common case: synchronous listeners, called right here with nothing boxed.
        let mut next = 0;
        while let Some((id, Listener::Sync(f))) = self.listeners.get(next) {
            let id = *id;
            call_sync(&**f, &event, &self.signal);
            next = self.after(id, next);
        }
        if next >= self.listeners.len() {
            return Emit::Done;
        }
        // An asynchronous listener: the rest of the walk is awaited.
        Emit::boxed(async move {
            while let Some((id, listener)) = self.listeners.get(next).cloned() {
                match listener {
                    Listener::Sync(f) => call_sync(&*f, &event, &self.signal),
                    Listener::Async(l) => {
                        let outcome = AssertUnwindSafe(l.on_event(&event, &self.signal))
                            .catch_unwind()
                            .await;
                        report(&event, outcome);
                    }
                }
                next = self.after(id, next);
            }
        })
    }
}
