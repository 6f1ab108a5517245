//! How a provider streams: an async producer pushes events into a queue that the
//! returned stream drains, and an [`Output`] builds the message the events snapshot.
//!
//! The producer runs only while the consumer polls and the queue is empty, so a slow
//! consumer holds the HTTP body back instead of buffering it; dropping the stream drops
//! the producer and with it the connection. No task is spawned. A producer awaits
//! [`Output::drained`] after each SSE event it handles: a body that arrives faster than
//! the consumer reads (50 MB from a local server) would otherwise queue a snapshot of the
//! whole message per event within one poll (9 GB for 800 deltas of 64 KiB).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};

use futures::Stream;

use crate::model::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, AssistantMessageStream, Model,
    StopReason, ToolCall,
};

/// Where a producer pushes its events. After a `done` or `error` event, further pushes
/// are ignored, as in pi-ai's `EventStream`.
#[derive(Clone, Default)]
pub(crate) struct Emitter {
    queue: Arc<Mutex<Queue>>,
}

#[derive(Default)]
struct Queue {
    events: VecDeque<AssistantMessageEvent>,
    complete: bool,
}

impl Emitter {
    pub(crate) fn push(&self, event: AssistantMessageEvent) {
        let mut queue = match self.queue.lock() {
            Ok(queue) => queue,
            Err(poisoned) => poisoned.into_inner(),
        };
        if queue.complete {
            return;
        }
        if matches!(
            event,
            AssistantMessageEvent::Done { .. } | AssistantMessageEvent::Error { .. }
        ) {
            queue.complete = true;
        }
        queue.events.push_back(event);
    }

    fn is_empty(&self) -> bool {
        match self.queue.lock() {
            Ok(queue) => queue.events.is_empty(),
            Err(poisoned) => poisoned.into_inner().events.is_empty(),
        }
    }

    fn pop(&self) -> Option<AssistantMessageEvent> {
        match self.queue.lock() {
            Ok(mut queue) => queue.events.pop_front(),
            Err(poisoned) => poisoned.into_inner().events.pop_front(),
        }
    }
}

/// Ready once the consumer has taken every queued event; see [`Output::drained`].
pub(crate) struct Drained<'a> {
    emitter: &'a Emitter,
}

impl Future for Drained<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _cx: &mut TaskContext<'_>) -> Poll<()> {
        // No waker is needed: the producer is polled only by `EventStream::poll_next`,
        // which returns the queued events first and polls the producer again as soon as
        // the queue is empty.
        if self.emitter.is_empty() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// The stream of a producer future that pushes into an [`Emitter`].
struct EventStream {
    emitter: Emitter,
    producer: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl Stream for EventStream {
    type Item = AssistantMessageEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(event) = self.emitter.pop() {
                return Poll::Ready(Some(event));
            }
            let Some(producer) = self.producer.as_mut() else {
                return Poll::Ready(None);
            };
            match producer.as_mut().poll(cx) {
                Poll::Ready(()) => self.producer = None,
                Poll::Pending => {
                    if let Some(event) = self.emitter.pop() {
                        return Poll::Ready(Some(event));
                    }
                    return Poll::Pending;
                }
            }
        }
    }
}

/// Runs `produce` as the body of an event stream.
pub(crate) fn event_stream<F, Fut>(produce: F) -> AssistantMessageStream
where
    F: FnOnce(Emitter) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let emitter = Emitter::default();
    let producer = Box::pin(produce(emitter.clone()));
    Box::pin(EventStream {
        emitter,
        producer: Some(producer),
    })
}

/// The message under construction (pi-ai's `output`), and the events that snapshot it.
///
/// Every event carries a copy of the message as it was when the event was pushed (what
/// pi-ai's recordings show). Tool-call arguments are shared (`Arc`), so a snapshot costs
/// the text of the message's blocks, not its arguments.
pub(crate) struct Output {
    /// The message; providers change it, then push an event.
    pub(crate) message: AssistantMessage,
    emitter: Emitter,
}

impl Output {
    /// An empty message for `model`, stop reason `stop`, zero usage, stamped now.
    pub(crate) fn new(model: &Model, emitter: Emitter) -> Self {
        Output {
            message: AssistantMessage::empty(model, StopReason::Stop),
            emitter,
        }
    }

    /// A copy of the message as it is now.
    pub(crate) fn snapshot(&self) -> Arc<AssistantMessage> {
        Arc::new(self.message.clone())
    }

    /// Pushes an event.
    pub(crate) fn push(&self, event: AssistantMessageEvent) {
        self.emitter.push(event);
    }

    /// Waits until the consumer has taken the events pushed so far, so that at most one
    /// SSE event's snapshots are queued at a time (back-pressure within one poll).
    pub(crate) fn drained(&self) -> Drained<'_> {
        Drained {
            emitter: &self.emitter,
        }
    }

    /// `start`.
    pub(crate) fn start(&self) {
        self.push(AssistantMessageEvent::Start {
            partial: self.snapshot(),
        });
    }

    /// Appends a block and returns its index.
    pub(crate) fn add_block(&mut self, block: AssistantContent) -> usize {
        self.message.content.push(block);
        self.message.content.len() - 1
    }

    /// `text_start` for the block at `index`.
    pub(crate) fn text_start(&self, content_index: usize) {
        self.push(AssistantMessageEvent::TextStart {
            content_index,
            partial: self.snapshot(),
        });
    }

    /// `text_delta`.
    pub(crate) fn text_delta(&self, content_index: usize, delta: String) {
        self.push(AssistantMessageEvent::TextDelta {
            content_index,
            delta,
            partial: self.snapshot(),
        });
    }

    /// `text_end` with the block's whole text.
    pub(crate) fn text_end(&self, content_index: usize, content: String) {
        self.push(AssistantMessageEvent::TextEnd {
            content_index,
            content,
            partial: self.snapshot(),
        });
    }

    /// `thinking_start`.
    pub(crate) fn thinking_start(&self, content_index: usize) {
        self.push(AssistantMessageEvent::ThinkingStart {
            content_index,
            partial: self.snapshot(),
        });
    }

    /// `thinking_delta`.
    pub(crate) fn thinking_delta(&self, content_index: usize, delta: String) {
        self.push(AssistantMessageEvent::ThinkingDelta {
            content_index,
            delta,
            partial: self.snapshot(),
        });
    }

    /// `thinking_end` with the block's whole reasoning.
    pub(crate) fn thinking_end(&self, content_index: usize, content: String) {
        self.push(AssistantMessageEvent::ThinkingEnd {
            content_index,
            content,
            partial: self.snapshot(),
        });
    }

    /// `toolcall_start`.
    pub(crate) fn toolcall_start(&self, content_index: usize) {
        self.push(AssistantMessageEvent::ToolcallStart {
            content_index,
            partial: self.snapshot(),
        });
    }

    /// `toolcall_delta`.
    pub(crate) fn toolcall_delta(&self, content_index: usize, delta: String) {
        self.push(AssistantMessageEvent::ToolcallDelta {
            content_index,
            delta,
            partial: self.snapshot(),
        });
    }

    /// `toolcall_end` with the finished call.
    pub(crate) fn toolcall_end(&self, content_index: usize, tool_call: ToolCall) {
        self.push(AssistantMessageEvent::ToolcallEnd {
            content_index,
            tool_call,
            partial: self.snapshot(),
        });
    }

    /// `done` with the message's stop reason.
    pub(crate) fn done(&self) {
        self.push(AssistantMessageEvent::Done {
            reason: self.message.stop_reason,
            message: self.snapshot(),
        });
    }

    /// Ends the stream with `error`: stop reason `aborted` when `aborted`, else `error`,
    /// and `error_message`. What arrived before stays in the message. An empty text
    /// (pi-ai passes one on when a provider's error has none) becomes one that names the
    /// provider, so a host never shows a blank error.
    pub(crate) fn fail(&mut self, aborted: bool, error_message: String) {
        let error_message = if error_message.trim().is_empty() {
            format!(
                "{} ({}) failed without an error message",
                self.message.provider, self.message.api
            )
        } else {
            error_message
        };
        self.message.stop_reason = if aborted {
            StopReason::Aborted
        } else {
            StopReason::Error
        };
        self.message.error_message = Some(error_message);
        self.push(AssistantMessageEvent::Error {
            reason: self.message.stop_reason,
            error: self.snapshot(),
        });
    }
}

/// A stream that is one `error` event: the call could not be made at all.
pub(crate) fn failed(model: &Model, error_message: String) -> AssistantMessageStream {
    let model = model.clone();
    event_stream(move |emitter| async move {
        Output::new(&model, emitter).fail(false, error_message);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    #[tokio::test]
    async fn events_after_the_final_one_are_dropped_and_the_stream_ends() {
        let model = Model::new("m", "test", "test");
        let stream = event_stream(move |emitter| async move {
            let mut out = Output::new(&model, emitter);
            out.start();
            out.fail(false, "boom".into());
            out.done();
            tokio::task::yield_now().await;
            out.start();
        });
        let kinds: Vec<_> = stream.map(|e| e.name()).collect().await;
        assert_eq!(kinds, ["start", "error"]);
    }

    #[tokio::test]
    async fn an_empty_error_text_names_the_provider() {
        let model = Model::new("m", "anthropic-messages", "anthropic");
        let stream = event_stream(move |emitter| async move {
            Output::new(&model, emitter).fail(false, " ".into());
        });
        let events: Vec<_> = stream.collect().await;
        let Some(AssistantMessageEvent::Error { error, .. }) = events.last() else {
            panic!("{events:?}");
        };
        assert_eq!(
            error.error_message.as_deref(),
            Some("anthropic (anthropic-messages) failed without an error message")
        );
    }
}
