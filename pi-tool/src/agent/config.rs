//! What one run of the loop is given: its configuration ([`LoopConfig`], Pi's
//! `AgentLoopConfig`) and where its events go ([`AgentEventSink`], Pi's `emit`). Both the
//! loop and a turn's tool batch read them.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::event::AgentEvent;
use super::hooks::PrepareNextTurn;
use super::policy::RunPolicy;
use super::suspend::RunDurability;
use crate::model::{Message, Model, StreamOptions, ThinkingLevel};

/// Where the loop sends its events (Pi's `emit`). The loop awaits every emit before it
/// moves on.
///
/// A sink that handles an event synchronously returns [`Emit::Done`] (no allocation:
/// the loop emits several events per tool call); one that must wait returns
/// [`Emit::boxed`]. Any `FnMut(AgentEvent)` closure is a synchronous sink.
pub trait AgentEventSink: Send {
    /// Handles one event.
    fn emit(&mut self, event: AgentEvent) -> Emit<'_>;
}

impl<F> AgentEventSink for F
where
    F: FnMut(AgentEvent) + Send,
{
    fn emit(&mut self, event: AgentEvent) -> Emit<'_> {
        self(event);
        Emit::Done
    }
}

/// The completion of one [`AgentEventSink::emit`]: already done, or a future to await.
pub enum Emit<'a> {
    /// The event was handled synchronously.
    Done,
    /// The event is being handled; the loop awaits this future.
    Pending(Pin<Box<dyn Future<Output = ()> + Send + 'a>>),
}

impl<'a> Emit<'a> {
    /// Wraps the future of an asynchronous sink.
    pub fn boxed(future: impl Future<Output = ()> + Send + 'a) -> Self {
        Emit::Pending(Box::pin(future))
    }
}

impl Future for Emit<'_> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        match self.get_mut() {
            Emit::Done => std::task::Poll::Ready(()),
            Emit::Pending(future) => future.as_mut().poll(cx),
        }
    }
}

/// A source of queued messages (steering or follow-up), polled by the loop.
pub type MessageSource = Arc<dyn Fn() -> Vec<Message> + Send + Sync>;

/// The loop's configuration (Pi's `AgentLoopConfig`).
#[derive(Clone)]
#[non_exhaustive]
pub struct LoopConfig {
    /// The model descriptor handed to the stream function.
    pub model: Model,
    /// The reasoning level (`None`: thinking off).
    pub reasoning: Option<ThinkingLevel>,
    /// How tool calls run: batch mode, hooks, limits, redaction, result budget.
    pub policy: RunPolicy,
    /// Runs between turns.
    pub prepare_next_turn: Option<Arc<dyn PrepareNextTurn>>,
    /// Messages injected before the next model call.
    pub steering_messages: Option<MessageSource>,
    /// Messages that restart the loop when it would stop.
    pub follow_up_messages: Option<MessageSource>,
    /// The request options of every model call (API key, token limit, temperature, tool
    /// choice, ...); the loop sets `signal` and `reasoning` itself on each turn.
    pub stream_options: StreamOptions,
    /// Where the run suspends when a call waits for a decision (an agent with
    /// [`DurableRuns`](super::DurableRuns)); `None`: such a call is blocked.
    pub(crate) durable: Option<Arc<RunDurability>>,
}

impl LoopConfig {
    /// A configuration for `model` with Pi's defaults: parallel, no hooks, no limits.
    pub fn new(model: Model) -> Self {
        LoopConfig {
            model,
            reasoning: None,
            policy: RunPolicy::default(),
            prepare_next_turn: None,
            steering_messages: None,
            follow_up_messages: None,
            stream_options: StreamOptions::default(),
            durable: None,
        }
    }
}

impl std::fmt::Debug for LoopConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopConfig")
            .field("model", &self.model.id)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}
