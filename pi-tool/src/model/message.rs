//! The transcript: Pi's message model with its JSON shape.
//!
//! A run's transcript is a list of [`Message`]s: the user's prompt, the model's
//! [`AssistantMessage`]s (text, thinking and tool-call blocks, a stop reason, usage) and
//! one [`ToolResultMessage`] per executed tool call. The JSON is Pi's (`role` tag,
//! camelCase fields, `toolResult`), so transcripts can be exchanged with Pi and compared
//! with its recordings.
//!
//! Assistant messages are shared behind an `Arc`: the loop hands the same message to the
//! transcript, to `message_end`, to `turn_end` and to every hook without copying it.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use pi_tool_core::Content;
use pi_tool_core::JsonDetails;
use pi_tool_core::JsonToolResult;

/// Milliseconds since the Unix epoch (Pi's `Date.now()`), used for message timestamps.
pub(crate) fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// One message of a transcript (Pi's `Message`: user, assistant or tool result).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    /// What the user said.
    User(UserMessage),
    /// What the model answered (shared: cloning a transcript does not copy it).
    Assistant(Arc<AssistantMessage>),
    /// The result of one tool call (shared, like assistant messages).
    ToolResult(Arc<ToolResultMessage>),
}

impl Message {
    /// A user message with one text block, stamped now (Pi's `agent.prompt(text)`).
    pub fn user_text(text: impl Into<String>) -> Self {
        Message::User(UserMessage {
            content: vec![Content::text(text)],
            timestamp: now_millis(),
            plain_text: false,
        })
    }

    /// Pi's role name: `user`, `assistant` or `toolResult`.
    pub fn role(&self) -> &'static str {
        match self {
            Message::User(_) => "user",
            Message::Assistant(_) => "assistant",
            Message::ToolResult(_) => "toolResult",
        }
    }

    /// The assistant message, if this is one.
    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            Message::Assistant(m) => Some(m),
            _ => None,
        }
    }

    /// The tool result, if this is one.
    pub fn as_tool_result(&self) -> Option<&ToolResultMessage> {
        match self {
            Message::ToolResult(m) => Some(m),
            _ => None,
        }
    }
}

impl From<UserMessage> for Message {
    fn from(m: UserMessage) -> Self {
        Message::User(m)
    }
}

impl From<AssistantMessage> for Message {
    fn from(m: AssistantMessage) -> Self {
        Message::Assistant(Arc::new(m))
    }
}

impl From<Arc<AssistantMessage>> for Message {
    fn from(m: Arc<AssistantMessage>) -> Self {
        Message::Assistant(m)
    }
}

impl From<ToolResultMessage> for Message {
    fn from(m: ToolResultMessage) -> Self {
        Message::ToolResult(Arc::new(m))
    }
}

impl From<Arc<ToolResultMessage>> for Message {
    fn from(m: Arc<ToolResultMessage>) -> Self {
        Message::ToolResult(m)
    }
}

/// A user message (Pi's `UserMessage`): text and image blocks.
///
/// Pi also allows `content` to be a plain string. Such a message reads as one text block
/// with `plain_text` set, and is written back (to JSON and to a provider's wire format,
/// where pi-ai sends a string and blocks differently) as the string it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "UserMessageRepr", into = "UserMessageRepr")]
pub struct UserMessage {
    /// Text and image blocks.
    pub content: Vec<Content>,
    /// When it was created, in milliseconds since the Unix epoch.
    pub timestamp: u64,
    /// The content was a plain string (Pi's `content: string`): `content` is its one text
    /// block, and it is written back as a string.
    pub plain_text: bool,
}

/// The JSON of a [`UserMessage`]: `content` is a string or a list of blocks.
#[derive(Clone, Serialize, Deserialize)]
struct UserMessageRepr {
    content: UserContentRepr,
    #[serde(default)]
    timestamp: u64,
}

#[derive(Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum UserContentRepr {
    Text(String),
    Blocks(Vec<Content>),
}

impl From<UserMessageRepr> for UserMessage {
    fn from(repr: UserMessageRepr) -> Self {
        let (content, plain_text) = match repr.content {
            UserContentRepr::Text(text) => (vec![Content::text(text)], true),
            UserContentRepr::Blocks(blocks) => (blocks, false),
        };
        UserMessage {
            content,
            timestamp: repr.timestamp,
            plain_text,
        }
    }
}

impl From<UserMessage> for UserMessageRepr {
    fn from(message: UserMessage) -> Self {
        let content = match (message.plain_text, message.content.as_slice()) {
            (true, [Content::Text { text, .. }]) => UserContentRepr::Text(text.clone()),
            _ => UserContentRepr::Blocks(message.content),
        };
        UserMessageRepr {
            content,
            timestamp: message.timestamp,
        }
    }
}

/// Why the model stopped (Pi's `StopReason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum StopReason {
    /// The model finished its answer.
    Stop,
    /// The output token limit cut the answer off; tool calls in it are not executed.
    Length,
    /// The model asked for tool calls.
    ToolUse,
    /// The request failed; `error_message` says why. Nothing in it is executed.
    Error,
    /// The request was aborted. Nothing in it is executed.
    Aborted,
    /// Still streaming: the stop reason of a partial message before its final event
    /// (what Pi's faux provider puts in its `start` partial).
    Pending,
}

impl StopReason {
    /// Whether the message failed (error or aborted): such messages are never dispatched.
    pub fn is_failure(self) -> bool {
        matches!(self, StopReason::Error | StopReason::Aborted)
    }

    /// Pi's `stopReason` text (as serialised).
    pub(crate) fn name(self) -> &'static str {
        match self {
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::ToolUse => "toolUse",
            StopReason::Error => "error",
            StopReason::Aborted => "aborted",
            StopReason::Pending => "pending",
        }
    }
}

/// Token counts and cost of one model call (Pi's `Usage`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct Usage {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Tokens read from the provider's cache.
    pub cache_read: u64,
    /// Tokens written to the provider's cache.
    pub cache_write: u64,
    /// Of `cache_write`, the tokens written with one-hour retention (Anthropic only,
    /// once its `message_start` was seen).
    #[serde(rename = "cacheWrite1h", skip_serializing_if = "Option::is_none")]
    pub cache_write_1h: Option<u64>,
    /// Of `output`, the reasoning tokens, when the provider reports them (OpenAI).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
    /// All tokens.
    pub total_tokens: u64,
    /// What they cost.
    pub cost: Cost,
}

/// The cost of one model call in dollars (Pi's `Usage.cost`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct Cost {
    /// Input cost.
    pub input: f64,
    /// Output cost.
    pub output: f64,
    /// Cache read cost.
    pub cache_read: f64,
    /// Cache write cost.
    pub cache_write: f64,
    /// Total cost.
    pub total: f64,
}

/// A tool call the model asked for (Pi's `ToolCall` block).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolCall {
    /// The call id that its result message refers to.
    ///
    /// The id and the name are shared (`Arc<str>`): the events of the call, the pending
    /// set and the result message hold them without a copy, as Pi holds one string.
    pub id: Arc<str>,
    /// The tool's name, as the model wrote it (it may name no tool).
    pub name: Arc<str>,
    /// The raw arguments: any JSON value, not yet prepared or validated.
    ///
    /// Shared, as Pi shares the one object: the streamed partial, the final message,
    /// the `toolcall_end` event and the `tool_execution_start`/`_update` events all hold
    /// these arguments without a copy. (Serialised and read as the plain JSON value.)
    pub arguments: Arc<Value>,
    /// A provider signature of the reasoning that led to the call (Gemini), if any.
    #[serde(
        rename = "thoughtSignature",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub thought_signature: Option<String>,
    /// The OpenAI Responses namespace of a namespaced tool, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

impl ToolCall {
    /// A call with this id, name and arguments.
    pub fn new(id: impl Into<Arc<str>>, name: impl Into<Arc<str>>, arguments: Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: Arc::new(arguments),
            thought_signature: None,
            namespace: None,
        }
    }
}

/// One block of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum AssistantContent {
    /// Answer text.
    Text {
        /// The text.
        text: String,
        /// Provider signature of the block, if any.
        #[serde(
            rename = "textSignature",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        text_signature: Option<String>,
    },
    /// Reasoning text.
    Thinking {
        /// The reasoning.
        thinking: String,
        /// Provider signature of the block, if any.
        #[serde(
            rename = "thinkingSignature",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        thinking_signature: Option<String>,
        /// Whether the provider redacted the reasoning.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        redacted: Option<bool>,
    },
    /// A tool call.
    ToolCall(ToolCall),
}

impl AssistantContent {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        AssistantContent::Text {
            text: text.into(),
            text_signature: None,
        }
    }

    /// A tool-call block.
    pub fn tool_call(id: impl Into<Arc<str>>, name: impl Into<Arc<str>>, arguments: Value) -> Self {
        AssistantContent::ToolCall(ToolCall::new(id, name, arguments))
    }

    /// The tool call, if this block is one.
    pub fn as_tool_call(&self) -> Option<&ToolCall> {
        match self {
            AssistantContent::ToolCall(call) => Some(call),
            _ => None,
        }
    }
}

/// What the model answered (Pi's `AssistantMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AssistantMessage {
    /// Text, thinking and tool-call blocks, in the order the model produced them.
    pub content: Vec<AssistantContent>,
    /// The API the model was called through.
    #[serde(default)]
    pub api: String,
    /// The provider.
    #[serde(default)]
    pub provider: String,
    /// The model id.
    #[serde(default)]
    pub model: String,
    /// The model the server says answered, when it differs from `model`
    /// (openai-completions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_model: Option<String>,
    /// The provider's id of this response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// The provider's own name of the thinking level it used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_thinking_level: Option<String>,
    /// Provider diagnostics (pi-ai's `AssistantMessageDiagnostic`s), kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<Vec<Value>>,
    /// Token usage of the call.
    #[serde(default)]
    pub usage: Usage,
    /// Why the model stopped.
    pub stop_reason: StopReason,
    /// The provider's own stop reason (`end_turn`, `tool_calls`, ...), when it sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_stop_reason: Option<String>,
    /// Why the call failed (stop reason error or aborted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// When it was created, in milliseconds since the Unix epoch.
    #[serde(default)]
    pub timestamp: u64,
}

impl AssistantMessage {
    /// An empty message for `model`, with zero usage.
    pub fn empty(model: &super::Model, stop_reason: StopReason) -> Self {
        AssistantMessage {
            content: Vec::new(),
            api: model.api.clone(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            response_model: None,
            response_id: None,
            provider_thinking_level: None,
            diagnostics: None,
            usage: Usage::default(),
            stop_reason,
            raw_stop_reason: None,
            error_message: None,
            timestamp: now_millis(),
        }
    }

    /// The tool calls of the message, in source order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content
            .iter()
            .filter_map(AssistantContent::as_tool_call)
    }

    /// The text of all text blocks, concatenated.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                AssistantContent::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// The result of one tool call, as the model reads it (Pi's `ToolResultMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The call this answers (shared with the call, see [`ToolCall::id`]).
    pub tool_call_id: Arc<str>,
    /// The tool name the call used (shared with the call).
    pub tool_name: Arc<str>,
    /// What the model reads.
    pub content: Vec<Content>,
    /// The result's details: `None` when the result had no `details` key, `Some(Null)`
    /// for `details: null` (Pi keeps them apart).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub details: Option<JsonDetails>,
    /// The result's usage, if any.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub usage: Option<Value>,
    /// Tools the call made active; only set when non-empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_tool_names: Option<Vec<String>>,
    /// Whether the call failed.
    pub is_error: bool,
    /// When it was created, in milliseconds since the Unix epoch.
    #[serde(default)]
    pub timestamp: u64,
}

impl ToolResultMessage {
    /// The message of a finalized call (Pi's `createToolResultMessage`): `terminate` is
    /// not copied, `addedToolNames` only when non-empty.
    pub fn from_result(call: &ToolCall, result: &JsonToolResult, is_error: bool) -> Self {
        ToolResultMessage {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: result.content.clone(),
            details: result.details.clone(),
            usage: result.usage.clone(),
            added_tool_names: result
                .added_tool_names
                .as_ref()
                .filter(|names| !names.is_empty())
                .cloned(),
            is_error,
            timestamp: now_millis(),
        }
    }

    /// [`from_result`](Self::from_result) that moves the result's content, details, usage
    /// and added tool names into the message instead of copying them (the batch keeps only
    /// `terminate`, which the message does not carry).
    pub(crate) fn take_from_result(
        call: &ToolCall,
        result: &mut JsonToolResult,
        is_error: bool,
    ) -> Self {
        ToolResultMessage {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: std::mem::take(&mut result.content),
            details: result.details.take(),
            usage: result.usage.take(),
            added_tool_names: result
                .added_tool_names
                .take()
                .filter(|names| !names.is_empty()),
            is_error,
            timestamp: now_millis(),
        }
    }
}

/// A present key is `Some`, even when its value is `null`.
/// A key that is present, even with `null`, is `Some` (serde's `Option` reads `null` as `None`).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

/// Serialises a tool call on its own, with its block `type` (as Pi's JSON has it).
pub(crate) fn serialize_tool_call<S: Serializer>(
    call: &ToolCall,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Tagged<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        #[serde(flatten)]
        call: &'a ToolCall,
    }
    Tagged {
        kind: "toolCall",
        call,
    }
    .serialize(serializer)
}

/// Serialises an assistant message on its own, with its `role` (as Pi's JSON has it).
pub(crate) fn serialize_assistant<S: Serializer>(
    message: &Arc<AssistantMessage>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Tagged<'a> {
        role: &'static str,
        #[serde(flatten)]
        message: &'a AssistantMessage,
    }
    Tagged {
        role: "assistant",
        message,
    }
    .serialize(serializer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_shapes_are_pis() {
        let m = Message::from(AssistantMessage {
            content: vec![
                AssistantContent::text("hi"),
                AssistantContent::tool_call("c1", "get_weather", json!({"city": "Paris"})),
            ],
            api: "fake".into(),
            provider: "fake".into(),
            model: "fake-1".into(),
            response_model: None,
            response_id: None,
            provider_thinking_level: None,
            diagnostics: None,
            raw_stop_reason: None,
            usage: Usage::default(),
            stop_reason: StopReason::ToolUse,
            error_message: None,
            timestamp: 0,
        });
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(v["role"], "assistant");
        assert_eq!(v["stopReason"], "toolUse");
        assert_eq!(
            v["content"][1],
            json!({"type": "toolCall", "id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}})
        );
        assert_eq!(v["usage"]["cacheRead"], 0);
        let back: Message = serde_json::from_value(v).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn tool_result_keeps_null_details_apart_from_absent() {
        let v = json!({"role": "toolResult", "toolCallId": "c", "toolName": "t",
                       "content": [], "details": null, "isError": false, "timestamp": 1});
        let m: Message = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(
            m.as_tool_result().unwrap().details,
            Some(JsonDetails::null())
        );
        assert_eq!(serde_json::to_value(&m).unwrap(), v);
        let absent: ToolResultMessage =
            serde_json::from_value(json!({"toolCallId": "c", "toolName": "t",
            "content": [], "isError": true}))
            .unwrap();
        assert_eq!(absent.details, None);
    }

    #[test]
    fn added_tool_names_only_when_non_empty() {
        let call = ToolCall {
            id: "c".into(),
            name: "t".into(),
            arguments: Arc::new(json!({})),
            thought_signature: None,
            namespace: None,
        };
        let empty = JsonToolResult::error("x").with_added_tool_names(Vec::<String>::new());
        assert_eq!(
            ToolResultMessage::from_result(&call, &empty, true).added_tool_names,
            None
        );
        let some = JsonToolResult::error("x").with_added_tool_names(["a"]);
        assert_eq!(
            ToolResultMessage::from_result(&call, &some, true).added_tool_names,
            Some(vec!["a".to_owned()])
        );
    }

    #[test]
    fn a_plain_string_user_message_reads_as_one_text_block_and_writes_back_as_a_string() {
        let json = json!({"role": "user", "content": "hi", "timestamp": 1});
        let message: Message = serde_json::from_value(json.clone()).unwrap();
        let Message::User(user) = &message else {
            panic!("not a user message")
        };
        assert!(user.plain_text);
        assert_eq!(user.content, vec![Content::text("hi")]);
        assert_eq!(serde_json::to_value(&message).unwrap(), json);
        let blocks =
            json!({"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1});
        let message: Message = serde_json::from_value(blocks.clone()).unwrap();
        assert_eq!(serde_json::to_value(&message).unwrap(), blocks);
    }
}
