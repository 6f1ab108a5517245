//! The faux model (Pi's faux provider): scripted answers for tests, examples and
//! offline runs.
//!
//! A [`FauxModel`] holds a script of [`FauxTurn`]s. Model call `i` (counting every call
//! of the model) plays turn `i`; once the script is exhausted it answers `Done.`
//! ([`FauxTurn::done`]). Each call is recorded ([`FauxModel::requests`]).
//!
//! Streaming follows the conformance format (conformance/FORMAT.md §4.2): if the signal is already
//! aborted when the model is called, the stream is a single `error` event with stop
//! reason `aborted` and `Request was aborted`; a turn's `delay` is waited out (not
//! interruptible) and the signal checked again; then `start`, three events per block
//! (`*_start`, one `*_delta` with the whole text or the compact argument JSON, `*_end`)
//! and `done` (or `error` for a scripted `error`/`aborted` stop reason).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures::Stream;
use serde::Deserialize;

use crate::model::{AssistantContent, AssistantMessage, Message, StopReason};
use crate::model::{
    AssistantMessageEvent, AssistantMessageStream, Context, Model, StreamFn, StreamOptions,
};
use pi_tool_core::AbortSignal;

/// The text of the aborted message the faux model streams when its signal is aborted.
pub const REQUEST_ABORTED: &str = "Request was aborted";

/// One scripted answer (conformance/FORMAT.md §4.1).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FauxTurn {
    /// The blocks, streamed in order.
    pub content: Vec<AssistantContent>,
    /// The stop reason; default `toolUse` if any block is a tool call, else `stop`.
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    /// The error text of an `error`/`aborted` stop (default `scripted <reason>`).
    #[serde(default)]
    pub error_message: Option<String>,
    /// A wait before streaming (not interruptible).
    #[serde(default, rename = "delayMs", deserialize_with = "millis")]
    pub delay: Option<Duration>,
}

fn millis<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    Option::<f64>::deserialize(d).map(|ms| {
        ms.filter(|ms| ms.is_finite() && *ms > 0.0)
            .map(|ms| Duration::from_secs_f64(ms / 1000.0))
    })
}

impl FauxTurn {
    /// A turn with these blocks and the default stop reason.
    pub fn new(content: Vec<AssistantContent>) -> Self {
        FauxTurn {
            content,
            stop_reason: None,
            error_message: None,
            delay: None,
        }
    }

    /// A text-only answer.
    pub fn text(text: impl Into<String>) -> Self {
        FauxTurn::new(vec![AssistantContent::text(text)])
    }

    /// The turn played once the script is exhausted: `Done.`, stop reason `stop`.
    pub fn done() -> Self {
        FauxTurn::text("Done.").with_stop_reason(StopReason::Stop)
    }

    /// Sets the stop reason.
    #[must_use]
    pub fn with_stop_reason(mut self, stop_reason: StopReason) -> Self {
        self.stop_reason = Some(stop_reason);
        self
    }

    /// Sets the error text of an `error`/`aborted` stop.
    #[must_use]
    pub fn with_error_message(mut self, message: impl Into<String>) -> Self {
        self.error_message = Some(message.into());
        self
    }

    /// Waits before streaming.
    #[must_use]
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    fn stop_reason(&self) -> StopReason {
        self.stop_reason.unwrap_or_else(|| {
            if self.content.iter().any(|c| c.as_tool_call().is_some()) {
                StopReason::ToolUse
            } else {
                StopReason::Stop
            }
        })
    }
}

/// One recorded model call.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FauxRequest {
    /// The call number, from 0.
    pub index: usize,
    /// Whether the signal was already aborted when the model was called.
    pub aborted: bool,
    /// The system prompt sent.
    pub system_prompt: String,
    /// The transcript sent.
    pub messages: Vec<Message>,
    /// The names of the tools sent, in order.
    pub tools: Vec<String>,
}

type OnRequest = dyn Fn(&FauxRequest) + Send + Sync;

struct FauxState {
    turns: VecDeque<FauxTurn>,
    calls: usize,
    requests: Vec<FauxRequest>,
}

/// A scripted model (Pi's faux provider). Cheap to clone; clones share the script and
/// the recorded requests.
#[derive(Clone)]
pub struct FauxModel {
    state: Arc<Mutex<FauxState>>,
    on_request: Option<Arc<OnRequest>>,
    record: bool,
}

impl Default for FauxModel {
    /// A model that answers `Done.` to everything.
    fn default() -> Self {
        FauxModel::new(Vec::new())
    }
}

impl std::fmt::Debug for FauxModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FauxModel").finish_non_exhaustive()
    }
}

impl FauxModel {
    /// A model that plays `turns` in order, then `Done.`.
    pub fn new(turns: Vec<FauxTurn>) -> Self {
        FauxModel {
            state: Arc::new(Mutex::new(FauxState {
                turns: turns.into(),
                calls: 0,
                requests: Vec::new(),
            })),
            on_request: None,
            record: true,
        }
    }

    /// The descriptor of the faux model (`fake-1`, api and provider `fake`).
    pub fn model() -> Model {
        let mut model = Model::new("fake-1", "fake", "fake");
        model.name = "Fake Model".to_owned();
        model.base_url = "http://localhost:0".to_owned();
        model.input = vec!["text".to_owned(), "image".to_owned()];
        model.context_window = 128_000;
        model.max_tokens = 4096;
        model
    }

    /// Appends turns to the script.
    pub fn push_turns(&self, turns: impl IntoIterator<Item = FauxTurn>) {
        if let Ok(mut state) = self.state.lock() {
            state.turns.extend(turns);
        }
    }

    /// Calls `f` with every request, at the moment the model is called (before anything
    /// is streamed).
    #[must_use]
    pub fn on_request(mut self, f: impl Fn(&FauxRequest) + Send + Sync + 'static) -> Self {
        self.on_request = Some(Arc::new(f));
        self
    }

    /// Stops keeping requests (benchmarks: a recorded request copies the transcript).
    #[must_use]
    pub fn without_recording(mut self) -> Self {
        self.record = false;
        self
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<FauxRequest> {
        self.state
            .lock()
            .map(|s| s.requests.clone())
            .unwrap_or_default()
    }

    /// How many times the model was called.
    pub fn calls(&self) -> usize {
        self.state.lock().map(|s| s.calls).unwrap_or(0)
    }
}

impl StreamFn for FauxModel {
    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageStream {
        let aborted = options.signal.is_aborted();
        let wants_request = self.record || self.on_request.is_some();
        let (index, turn) = match self.state.lock() {
            Ok(mut state) => {
                let index = state.calls;
                state.calls += 1;
                (
                    index,
                    state.turns.pop_front().unwrap_or_else(FauxTurn::done),
                )
            }
            Err(_) => (0, FauxTurn::done()),
        };
        if wants_request {
            let request = FauxRequest {
                index,
                aborted,
                system_prompt: context.system_prompt.clone(),
                messages: if self.record {
                    context.messages.clone()
                } else {
                    Vec::new()
                },
                tools: context.tools.iter().map(|t| t.name().to_owned()).collect(),
            };
            if let Some(on_request) = &self.on_request {
                on_request(&request);
            }
            if self.record
                && let Ok(mut state) = self.state.lock()
            {
                state.requests.push(request);
            }
        }
        Box::pin(FauxStream::new(model, turn, options.signal, aborted))
    }
}

enum Phase {
    /// Nothing streamed yet.
    Begin,
    /// Waiting out the turn's delay.
    Delay(Pin<Box<tokio::time::Sleep>>),
    /// Block `index`, step 0 (start), 1 (delta) or 2 (end).
    Block { index: usize, step: u8 },
    /// The final event.
    Final,
    /// Ended.
    Ended,
}

/// The event stream of one faux call. The partial is updated in place when the
/// consumer has dropped the previous event (the usual case), so streaming a message
/// of `n` blocks costs O(n), not O(n²).
struct FauxStream {
    turn: FauxTurn,
    signal: AbortSignal,
    aborted_at_call: bool,
    partial: Arc<AssistantMessage>,
    phase: Phase,
    /// The arguments of the tool call being streamed (see `tool_call_event`).
    arguments: Arc<serde_json::Value>,
    /// `{}`: the arguments of a tool call in the partial before its end, shared.
    no_arguments: Arc<serde_json::Value>,
}

impl FauxStream {
    fn new(model: &Model, turn: FauxTurn, signal: AbortSignal, aborted_at_call: bool) -> Self {
        FauxStream {
            partial: Arc::new(AssistantMessage::empty(model, StopReason::Pending)),
            turn,
            signal,
            aborted_at_call,
            phase: Phase::Begin,
            arguments: Arc::new(serde_json::Value::Null),
            no_arguments: Arc::new(serde_json::Value::Object(Default::default())),
        }
    }

    fn aborted_event(&mut self) -> AssistantMessageEvent {
        let mut message = (*self.partial).clone();
        message.content.clear();
        message.stop_reason = StopReason::Aborted;
        message.error_message = Some(REQUEST_ABORTED.to_owned());
        self.phase = Phase::Ended;
        AssistantMessageEvent::Error {
            reason: StopReason::Aborted,
            error: Arc::new(message),
        }
    }

    fn block_event(&mut self, index: usize, step: u8) -> AssistantMessageEvent {
        if matches!(self.turn.content[index], AssistantContent::ToolCall(_)) {
            return self.tool_call_event(index, step);
        }
        let block = &self.turn.content[index];
        let partial = Arc::make_mut(&mut self.partial);
        let event = match (block, step) {
            (AssistantContent::Text { .. }, 0) => {
                partial.content.push(AssistantContent::text(""));
                Kind::TextStart
            }
            (AssistantContent::Text { text, .. }, 1) => {
                if let Some(AssistantContent::Text { text: t, .. }) = partial.content.get_mut(index)
                {
                    t.clone_from(text);
                }
                Kind::TextDelta(text.clone())
            }
            (AssistantContent::Text { text, .. }, _) => Kind::TextEnd(text.clone()),
            (AssistantContent::Thinking { .. }, 0) => {
                partial.content.push(AssistantContent::Thinking {
                    thinking: String::new(),
                    thinking_signature: None,
                    redacted: None,
                });
                Kind::ThinkingStart
            }
            (AssistantContent::Thinking { thinking, .. }, 1) => {
                if let Some(AssistantContent::Thinking { thinking: t, .. }) =
                    partial.content.get_mut(index)
                {
                    t.clone_from(thinking);
                }
                Kind::ThinkingDelta(thinking.clone())
            }
            (AssistantContent::Thinking { thinking, .. }, _) => Kind::ThinkingEnd(thinking.clone()),
            // Handled above.
            (AssistantContent::ToolCall(_), _) => Kind::ToolcallStart,
        };
        self.wrap(index, event)
    }

    /// A tool-call block, as Pi's faux provider streams it: the partial gets the call with
    /// `{}` arguments, then the arguments' JSON text, then the arguments themselves and
    /// the complete call. Like Pi, which shares one object between the scripted block, the
    /// partial and the final message, nothing is copied but the `toolcall_end` event's id
    /// and name: the id and name move into the partial at the start, the (shared)
    /// arguments are held until the end, and [`final_event`](Self::final_event) moves the
    /// completed call back into the message.
    fn tool_call_event(&mut self, index: usize, step: u8) -> AssistantMessageEvent {
        let partial = Arc::make_mut(&mut self.partial);
        let kind = match (&mut self.turn.content[index], step) {
            (AssistantContent::ToolCall(call), 0) => {
                self.arguments = std::mem::replace(&mut call.arguments, self.no_arguments.clone());
                partial
                    .content
                    .push(AssistantContent::ToolCall(crate::model::ToolCall {
                        id: std::mem::take(&mut call.id),
                        name: std::mem::take(&mut call.name),
                        arguments: self.no_arguments.clone(),
                        thought_signature: None,
                        namespace: None,
                    }));
                Kind::ToolcallStart
            }
            // JavaScript's JSON.stringify: compact, in the arguments' own key order.
            (_, 1) => {
                Kind::ToolcallDelta(serde_json::to_string(&*self.arguments).unwrap_or_default())
            }
            (_, _) => match partial.content.get_mut(index) {
                Some(AssistantContent::ToolCall(c)) => {
                    c.arguments = self.arguments.clone();
                    Kind::ToolcallEnd(c.clone())
                }
                // The partial always holds the block streamed at step 0.
                _ => Kind::ToolcallEnd(crate::model::ToolCall {
                    id: Arc::from(""),
                    name: Arc::from(""),
                    arguments: self.arguments.clone(),
                    thought_signature: None,
                    namespace: None,
                }),
            },
        };
        self.wrap(index, kind)
    }

    fn wrap(&self, index: usize, event: Kind) -> AssistantMessageEvent {
        let partial = self.partial.clone();
        let content_index = index;
        match event {
            Kind::TextStart => AssistantMessageEvent::TextStart {
                content_index,
                partial,
            },
            Kind::TextDelta(delta) => AssistantMessageEvent::TextDelta {
                content_index,
                delta,
                partial,
            },
            Kind::TextEnd(content) => AssistantMessageEvent::TextEnd {
                content_index,
                content,
                partial,
            },
            Kind::ThinkingStart => AssistantMessageEvent::ThinkingStart {
                content_index,
                partial,
            },
            Kind::ThinkingDelta(delta) => AssistantMessageEvent::ThinkingDelta {
                content_index,
                delta,
                partial,
            },
            Kind::ThinkingEnd(content) => AssistantMessageEvent::ThinkingEnd {
                content_index,
                content,
                partial,
            },
            Kind::ToolcallStart => AssistantMessageEvent::ToolcallStart {
                content_index,
                partial,
            },
            Kind::ToolcallDelta(delta) => AssistantMessageEvent::ToolcallDelta {
                content_index,
                delta,
                partial,
            },
            Kind::ToolcallEnd(tool_call) => AssistantMessageEvent::ToolcallEnd {
                content_index,
                tool_call,
                partial,
            },
        }
    }

    fn final_event(&mut self) -> AssistantMessageEvent {
        self.phase = Phase::Ended;
        let stop_reason = self.turn.stop_reason();
        let mut message = std::mem::replace(
            &mut self.partial,
            Arc::new(AssistantMessage::empty(
                &Model::default(),
                StopReason::Pending,
            )),
        );
        let m = Arc::make_mut(&mut message);
        let mut content = std::mem::take(&mut self.turn.content);
        // Tool calls were moved into the partial as they streamed (tool_call_event).
        for (block, streamed) in content.iter_mut().zip(m.content.iter_mut()) {
            if matches!(block, AssistantContent::ToolCall(_)) {
                std::mem::swap(block, streamed);
            }
        }
        m.content = content;
        m.stop_reason = stop_reason;
        if stop_reason.is_failure() {
            m.error_message = Some(
                self.turn
                    .error_message
                    .clone()
                    .unwrap_or_else(|| format!("scripted {}", stop_reason.name())),
            );
            AssistantMessageEvent::Error {
                reason: stop_reason,
                error: message,
            }
        } else {
            AssistantMessageEvent::Done {
                reason: stop_reason,
                message,
            }
        }
    }
}

enum Kind {
    TextStart,
    TextDelta(String),
    TextEnd(String),
    ThinkingStart,
    ThinkingDelta(String),
    ThinkingEnd(String),
    ToolcallStart,
    ToolcallDelta(String),
    ToolcallEnd(crate::model::ToolCall),
}

impl Stream for FauxStream {
    type Item = AssistantMessageEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            match &mut this.phase {
                Phase::Begin => {
                    if this.aborted_at_call {
                        return Poll::Ready(Some(this.aborted_event()));
                    }
                    match this.turn.delay {
                        Some(delay) => {
                            this.phase = Phase::Delay(Box::pin(tokio::time::sleep(delay)));
                        }
                        None => {
                            this.phase = Phase::Block { index: 0, step: 0 };
                            return Poll::Ready(Some(AssistantMessageEvent::Start {
                                partial: this.partial.clone(),
                            }));
                        }
                    }
                }
                Phase::Delay(sleep) => {
                    if sleep.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    if this.signal.is_aborted() {
                        return Poll::Ready(Some(this.aborted_event()));
                    }
                    this.phase = Phase::Block { index: 0, step: 0 };
                    return Poll::Ready(Some(AssistantMessageEvent::Start {
                        partial: this.partial.clone(),
                    }));
                }
                Phase::Block { index, step } => {
                    let (index, step) = (*index, *step);
                    if index >= this.turn.content.len() {
                        this.phase = Phase::Final;
                        continue;
                    }
                    this.phase = if step == 2 {
                        Phase::Block {
                            index: index + 1,
                            step: 0,
                        }
                    } else {
                        Phase::Block {
                            index,
                            step: step + 1,
                        }
                    };
                    return Poll::Ready(Some(this.block_event(index, step)));
                }
                Phase::Final => return Poll::Ready(Some(this.final_event())),
                Phase::Ended => return Poll::Ready(None),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AbortController;
    use futures::StreamExt;
    use serde_json::json;

    fn names(events: &[AssistantMessageEvent]) -> Vec<&'static str> {
        events.iter().map(AssistantMessageEvent::name).collect()
    }

    #[tokio::test]
    async fn streams_three_events_per_block_then_done() {
        let faux = FauxModel::new(vec![FauxTurn::new(vec![
            AssistantContent::text("Let me check."),
            AssistantContent::tool_call("c1", "get_weather", json!({"city": "Paris", "n": 1})),
        ])]);
        let events: Vec<_> = faux
            .stream(
                &FauxModel::model(),
                &Context::default(),
                StreamOptions::default(),
            )
            .collect()
            .await;
        assert_eq!(
            names(&events),
            [
                "start",
                "text_start",
                "text_delta",
                "text_end",
                "toolcall_start",
                "toolcall_delta",
                "toolcall_end",
                "done"
            ]
        );
        match &events[5] {
            AssistantMessageEvent::ToolcallDelta { delta, .. } => {
                assert_eq!(delta, r#"{"city":"Paris","n":1}"#)
            }
            other => panic!("{other:?}"),
        }
        match &events[7] {
            AssistantMessageEvent::Done { reason, message } => {
                assert_eq!(*reason, StopReason::ToolUse);
                assert_eq!(message.content.len(), 2);
            }
            other => panic!("{other:?}"),
        }
        // Exhausted script: "Done."
        let events: Vec<_> = faux
            .stream(
                &FauxModel::model(),
                &Context::default(),
                StreamOptions::default(),
            )
            .collect()
            .await;
        match events.last() {
            Some(AssistantMessageEvent::Done { message, .. }) => {
                assert_eq!(message.text(), "Done.")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(faux.requests().len(), 2);
    }

    #[tokio::test]
    async fn an_aborted_signal_gives_one_error_event() {
        let faux = FauxModel::new(vec![FauxTurn::text("never")]);
        let controller = AbortController::new();
        controller.abort();
        let options = StreamOptions {
            signal: controller.signal(),
            ..StreamOptions::default()
        };
        let events: Vec<_> = faux
            .stream(&FauxModel::model(), &Context::default(), options)
            .collect()
            .await;
        assert_eq!(names(&events), ["error"]);
        match &events[0] {
            AssistantMessageEvent::Error { error, .. } => {
                assert_eq!(error.stop_reason, StopReason::Aborted);
                assert_eq!(error.error_message.as_deref(), Some(REQUEST_ABORTED));
                assert!(error.content.is_empty());
            }
            other => panic!("{other:?}"),
        }
        assert!(faux.requests()[0].aborted);
    }

    #[tokio::test]
    async fn scripted_errors_end_with_an_error_event() {
        let faux = FauxModel::new(vec![
            FauxTurn::text("x").with_stop_reason(StopReason::Error),
        ]);
        let events: Vec<_> = faux
            .stream(
                &FauxModel::model(),
                &Context::default(),
                StreamOptions::default(),
            )
            .collect()
            .await;
        match events.last() {
            Some(AssistantMessageEvent::Error { error, .. }) => {
                assert_eq!(error.error_message.as_deref(), Some("scripted error"))
            }
            other => panic!("{other:?}"),
        }
    }
}
