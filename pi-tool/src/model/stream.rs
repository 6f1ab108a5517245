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

use std::collections::BTreeMap;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use serde::{Deserialize, Serialize};

use pi_tool_core::AbortSignal;
use pi_tool_core::AgentTool;
use pi_tool_core::model::Model;

use super::message::{
    AssistantMessage, Message, StopReason, ToolCall, serialize_assistant, serialize_tool_call,
};

/// How hard a reasoning model thinks (Pi's `ThinkingLevel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
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

/// Per-request options (pi-ai's `SimpleStreamOptions`).
///
/// The agent loop sets `signal` and `reasoning` on every turn and takes the rest from
/// the options it was given (the agent loop's `LoopConfig::stream_options`); the faux
/// model reads only the signal.
#[derive(Debug, Clone, Default)]
pub struct StreamOptions {
    /// Aborts the request; a conforming stream then ends with stop reason `aborted`.
    pub signal: AbortSignal,
    /// The reasoning level, `None` when thinking is off.
    pub reasoning: Option<ThinkingLevel>,
    /// The API key; when absent, providers read the provider's environment variable
    /// (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, ...), as pi-ai does.
    pub api_key: Option<ApiKey>,
    /// Output token limit (default: the model's `max_tokens`, clamped to its context).
    pub max_tokens: Option<u64>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Which tools the model may or must call.
    pub tool_choice: Option<ToolChoice>,
    /// A session id for providers with session-based caching or routing.
    pub session_id: Option<String>,
    /// Prompt-cache retention (default: short).
    pub cache_retention: Option<CacheRetention>,
    /// Extra request headers; `None` removes a header the provider would send.
    pub headers: BTreeMap<String, Option<String>>,
    /// Sampling parameters merged into the request body over the model's own.
    pub sampling_params: Option<serde_json::Map<String, serde_json::Value>>,
    /// Request metadata (Anthropic reads `user_id`).
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
    /// Retries on 429 and 5xx (default 0: pi-ai never retries unless asked).
    pub max_retries: Option<u32>,
    /// Ends a request whose response makes no progress for this long.
    pub timeout: Option<std::time::Duration>,
    /// Ends a response whose body sends nothing for this long (and, when `timeout` is
    /// not set, a request whose headers take this long): the stream ends with stop
    /// reason `error` and a text naming the timeout and its seconds. `None` is
    /// [`StreamOptions::DEFAULT_IDLE_TIMEOUT`]; `Duration::MAX` waits forever, as pi-ai
    /// does.
    pub idle_timeout: Option<std::time::Duration>,
}

impl StreamOptions {
    /// The idle timeout a provider applies when [`StreamOptions::idle_timeout`] is not
    /// set: two minutes, longer than any pause a model takes between two tokens, so that
    /// a stalled server ends a run instead of hanging it.
    pub const DEFAULT_IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);
}

/// Which tools the model may or must call (pi-ai's `toolChoice`, one spelling for every
/// wire API: each provider writes it in its own form).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call (OpenAI `required`, Anthropic `{"type": "any"}`).
    Required,
    /// A call to this tool.
    Tool(String),
}

/// How long a provider keeps the prompt cache (pi-ai's `CacheRetention`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum CacheRetention {
    /// No cache markers.
    None,
    /// The provider's default retention.
    #[default]
    Short,
    /// Long retention (Anthropic `ttl: "1h"`, OpenAI `24h`).
    Long,
}

/// An API key. Its `Debug` and `Display` never show it; only a provider reads it, with
/// [`ApiKey::expose`], to build a request header.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(Arc<str>);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<Arc<str>>) -> Self {
        ApiKey(key.into())
    }

    /// The key itself, for a request header. Never log or format it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl From<&str> for ApiKey {
    fn from(key: &str) -> Self {
        ApiKey::new(key)
    }
}

impl From<String> for ApiKey {
    fn from(key: String) -> Self {
        ApiKey::new(key)
    }
}

/// One streaming event of an assistant message (Pi's `AssistantMessageEvent`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
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
    /// The event's name, Pi's `type` field (`text_delta`, `toolcall_end`, ...).
    #[doc(alias = "type")]
    pub fn name(&self) -> &'static str {
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
