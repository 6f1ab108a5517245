//! The model boundary: Pi's `StreamFn`.
//!
//! The loop asks a model for one assistant message per turn. A [`StreamFn`] gets the
//! [`Model`] descriptor, the [`Context`] (system prompt, transcript, tools) and the
//! [`StreamOptions`] (abort signal, reasoning level), and returns a stream of
//! [`AssistantMessageEvent`]s that ends with `done` (the final message) or `error` (a
//! final message whose stop reason is `error` or `aborted`).
//!
//! **Failures are encoded in the stream, never thrown**: a provider that cannot connect
//! yields an `error` event with `stop_reason: Error` and an `error_message`. Every event
//! but the final one carries the current partial message (`partial`), shared behind an
//! `Arc` so that streaming a long message costs no copies.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use serde::{Deserialize, Serialize};

use crate::abort::AbortSignal;
use crate::tool::AgentTool;

use super::message::{
    AssistantMessage, Message, StopReason, ToolCall, serialize_assistant, serialize_tool_call,
};

/// A model descriptor (Pi's `Model`): which model, through which API and provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    /// The provider's model id.
    pub id: String,
    /// A display name.
    pub name: String,
    /// The API it is called through.
    pub api: String,
    /// The provider.
    pub provider: String,
    /// The endpoint.
    #[serde(default)]
    pub base_url: String,
    /// Whether it reasons.
    #[serde(default)]
    pub reasoning: bool,
    /// Accepted input kinds (`text`, `image`).
    #[serde(default)]
    pub input: Vec<String>,
    /// Context window in tokens.
    #[serde(default)]
    pub context_window: u64,
    /// Output limit in tokens.
    #[serde(default)]
    pub max_tokens: u64,
}

impl Model {
    /// A descriptor with the given id, API and provider, everything else empty.
    pub fn new(id: impl Into<String>, api: impl Into<String>, provider: impl Into<String>) -> Self {
        let id = id.into();
        Model {
            name: id.clone(),
            id,
            api: api.into(),
            provider: provider.into(),
            base_url: String::new(),
            reasoning: false,
            input: vec!["text".to_owned()],
            context_window: 0,
            max_tokens: 0,
        }
    }
}

impl Default for Model {
    /// Pi's `DEFAULT_MODEL`: id, api and provider `unknown`.
    fn default() -> Self {
        Model::new("unknown", "unknown", "unknown")
    }
}

/// How hard a reasoning model thinks (Pi's `ThinkingLevel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    /// No reasoning.
    #[default]
    Off,
    /// Minimal.
    Minimal,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Extra high.
    Xhigh,
}

/// What the model is asked with (Pi's `Context` / `AgentContext`): the system prompt,
/// the transcript and the tools it may call.
#[derive(Clone, Default)]
pub struct Context {
    /// The system prompt.
    pub system_prompt: String,
    /// The transcript so far.
    pub messages: Vec<Message>,
    /// The tools, in order; names may repeat (the first match wins when dispatching).
    pub tools: Vec<Arc<dyn AgentTool>>,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("system_prompt", &self.system_prompt)
            .field("messages", &self.messages)
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Context {
    /// The first tool with this name (Pi's `tools.find(t => t.name === name)`).
    pub fn find_tool(&self, name: &str) -> Option<&Arc<dyn AgentTool>> {
        self.tools.iter().find(|t| t.name() == name)
    }
}

/// Per-request options (Pi's `SimpleStreamOptions`, the parts the loop sets).
#[derive(Debug, Clone, Default)]
pub struct StreamOptions {
    /// Aborts the request; a conforming stream then ends with stop reason `aborted`.
    pub signal: AbortSignal,
    /// The reasoning level, `None` when thinking is off.
    pub reasoning: Option<ThinkingLevel>,
}

/// One streaming event of an assistant message (Pi's `AssistantMessageEvent`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum AssistantMessageEvent {
    /// Streaming began.
    Start {
        /// The (empty) partial message.
        #[serde(serialize_with = "serialize_assistant")]
        partial: Arc<AssistantMessage>,
    },
    /// A text block began.
    TextStart {
        /// Its index in `content`.
        content_index: usize,
        /// The partial message.
        #[serde(serialize_with = "serialize_assistant")]
        partial: Arc<AssistantMessage>,
    },
    /// More text.
    TextDelta {
        /// Its index in `content`.
        content_index: usize,
        /// The new text.
        delta: String,
        /// The partial message.
        #[serde(serialize_with = "serialize_assistant")]
        partial: Arc<AssistantMessage>,
    },
    /// A text block ended.
    TextEnd {
        /// Its index in `content`.
        content_index: usize,
        /// The whole text.
        content: String,
        /// The partial message.
        #[serde(serialize_with = "serialize_assistant")]
        partial: Arc<AssistantMessage>,
    },
    /// A thinking block began.
    ThinkingStart {
        /// Its index in `content`.
        content_index: usize,
        /// The partial message.
        #[serde(serialize_with = "serialize_assistant")]
        partial: Arc<AssistantMessage>,
    },
    /// More reasoning.
    ThinkingDelta {
        /// Its index in `content`.
        content_index: usize,
        /// The new text.
        delta: String,
        /// The partial message.
        #[serde(serialize_with = "serialize_assistant")]
        partial: Arc<AssistantMessage>,
    },
    /// A thinking block ended.
    ThinkingEnd {
        /// Its index in `content`.
        content_index: usize,
        /// The whole reasoning.
        content: String,
        /// The partial message.
        #[serde(serialize_with = "serialize_assistant")]
        partial: Arc<AssistantMessage>,
    },
    /// A tool-call block began.
    ToolcallStart {
        /// Its index in `content`.
        content_index: usize,
        /// The partial message.
        #[serde(serialize_with = "serialize_assistant")]
        partial: Arc<AssistantMessage>,
    },
    /// More argument JSON.
    ToolcallDelta {
        /// Its index in `content`.
        content_index: usize,
        /// The new JSON text.
        delta: String,
        /// The partial message.
        #[serde(serialize_with = "serialize_assistant")]
        partial: Arc<AssistantMessage>,
    },
    /// A tool-call block ended.
    ToolcallEnd {
        /// Its index in `content`.
        content_index: usize,
        /// The complete call.
        #[serde(serialize_with = "serialize_tool_call")]
        tool_call: ToolCall,
        /// The partial message.
        #[serde(serialize_with = "serialize_assistant")]
        partial: Arc<AssistantMessage>,
    },
    /// The message is complete.
    Done {
        /// Its stop reason (stop, length or toolUse).
        reason: StopReason,
        /// The final message.
        #[serde(serialize_with = "serialize_assistant")]
        message: Arc<AssistantMessage>,
    },
    /// The request failed or was aborted; the final message says why.
    Error {
        /// Its stop reason (error or aborted).
        reason: StopReason,
        /// The final message, with `error_message`.
        #[serde(serialize_with = "serialize_assistant")]
        error: Arc<AssistantMessage>,
    },
}

impl AssistantMessageEvent {
    /// Pi's event type name (`text_delta`, `toolcall_end`, ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            AssistantMessageEvent::Start { .. } => "start",
            AssistantMessageEvent::TextStart { .. } => "text_start",
            AssistantMessageEvent::TextDelta { .. } => "text_delta",
            AssistantMessageEvent::TextEnd { .. } => "text_end",
            AssistantMessageEvent::ThinkingStart { .. } => "thinking_start",
            AssistantMessageEvent::ThinkingDelta { .. } => "thinking_delta",
            AssistantMessageEvent::ThinkingEnd { .. } => "thinking_end",
            AssistantMessageEvent::ToolcallStart { .. } => "toolcall_start",
            AssistantMessageEvent::ToolcallDelta { .. } => "toolcall_delta",
            AssistantMessageEvent::ToolcallEnd { .. } => "toolcall_end",
            AssistantMessageEvent::Done { .. } => "done",
            AssistantMessageEvent::Error { .. } => "error",
        }
    }

    /// The partial message of a block event, `None` for `done` and `error`.
    pub fn partial(&self) -> Option<&Arc<AssistantMessage>> {
        match self {
            AssistantMessageEvent::Start { partial }
            | AssistantMessageEvent::TextStart { partial, .. }
            | AssistantMessageEvent::TextDelta { partial, .. }
            | AssistantMessageEvent::TextEnd { partial, .. }
            | AssistantMessageEvent::ThinkingStart { partial, .. }
            | AssistantMessageEvent::ThinkingDelta { partial, .. }
            | AssistantMessageEvent::ThinkingEnd { partial, .. }
            | AssistantMessageEvent::ToolcallStart { partial, .. }
            | AssistantMessageEvent::ToolcallDelta { partial, .. }
            | AssistantMessageEvent::ToolcallEnd { partial, .. } => Some(partial),
            AssistantMessageEvent::Done { .. } | AssistantMessageEvent::Error { .. } => None,
        }
    }
}

/// The stream a [`StreamFn`] returns.
pub type AssistantMessageStream = Pin<Box<dyn Stream<Item = AssistantMessageEvent> + Send>>;

/// A model: turns a request into a stream of assistant message events (Pi's `StreamFn`).
///
/// Implementations must encode every failure in the stream (an `error` event), honour
/// `options.signal` (ending with stop reason `aborted`), and end with `done` or `error`.
pub trait StreamFn: Send + Sync + 'static {
    /// Starts one request.
    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageStream;
}

impl<F> StreamFn for F
where
    F: Fn(&Model, &Context, StreamOptions) -> AssistantMessageStream + Send + Sync + 'static,
{
    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageStream {
        self(model, context, options)
    }
}
