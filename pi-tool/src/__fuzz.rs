//! The crate's internal parsers of untrusted text, for the fuzz crate (`fuzz/`) only.
//!
//! cargo-fuzz builds every crate with `--cfg fuzzing`; lib.rs declares this module under
//! that cfg alone, so no normal build, no docs and no public-API snapshot see it. Each
//! function here runs one real parser on its input exactly as the provider code runs it
//! and returns plain data that a fuzz target can compare; nothing here re-implements a
//! parser. The argument pipeline needs no entry here: `ToolSchema`, `normalize` and
//! `deserialize_params` are public.

#[cfg(any(
    feature = "anthropic-messages",
    feature = "openai-completions",
    feature = "openai-responses"
))]
pub use partial::*;

#[cfg(any(feature = "openai-completions", feature = "openai-responses"))]
pub use sse::*;

/// pi-ai's argument readers (`providers/partial_json`).
#[cfg(any(
    feature = "anthropic-messages",
    feature = "openai-completions",
    feature = "openai-responses"
))]
mod partial {
    use serde_json::Value;

    use crate::providers::partial_json;

    /// `parseStreamingJson`: what a streaming tool call's arguments read as.
    pub fn parse_streaming_json(text: &str) -> Value {
        partial_json::parse_streaming_json(text)
    }

    /// `JSON.parse` under Node 22, with V8's error text.
    pub fn json_parse(text: &str) -> Result<Value, String> {
        partial_json::json_parse(text)
    }

    /// `parseJsonWithRepair` (Anthropic's SSE events).
    pub fn parse_json_with_repair(text: &str) -> Result<Value, String> {
        partial_json::parse_json_with_repair(text)
    }

    /// `repairJson`.
    pub fn repair_json(text: &str) -> String {
        partial_json::repair_json(text).into_owned()
    }

    /// Streams `deltas` as a tool call's arguments, handing `each` the delta's index and
    /// the reading after it, then returns the final arguments (what the providers emit
    /// with `toolcall_delta` and `toolcall_end`). Readings are not kept: like a provider,
    /// only the latest one is alive (keeping all of them is quadratic in memory).
    pub fn streaming_arguments(deltas: &[&str], mut each: impl FnMut(usize, &Value)) -> Value {
        let mut arguments = partial_json::StreamingArguments::default();
        for (i, delta) in deltas.iter().enumerate() {
            let reading = arguments.push(delta);
            each(i, &reading);
        }
        arguments.finish()
    }

    /// Up to this many bytes every delta is read again in full (beyond, readings lag).
    pub const REPARSE_EVERY_DELTA_UP_TO: usize = partial_json::REPARSE_EVERY_DELTA_UP_TO;
}

/// The `openai` SDK's SSE reader (`providers/openai_sse.rs`), which both OpenAI
/// providers read their bodies with.
#[cfg(any(feature = "openai-completions", feature = "openai-responses"))]
mod sse {
    use serde_json::Value;

    use crate::providers::openai_sse::{OpenAiSse, SseError, SseItem, SseMessage, SseStream};

    /// One decoded server-sent event: its `event:` name and its joined `data:` lines.
    #[derive(Debug, Clone, PartialEq, Eq)]
    #[non_exhaustive]
    pub struct Message {
        /// The last `event:` field.
        pub event: Option<String>,
        /// The `data:` fields joined by `\n`.
        pub data: String,
    }

    /// What the SDK's stream iterator makes of one message.
    #[derive(Debug, Clone, PartialEq)]
    pub enum Item {
        /// JSON handed to the provider.
        Data(Value),
        /// Nothing (`[DONE]`, or anything after it).
        Skip,
        /// The iterator throws this text (a JSON syntax error or an `error` member).
        Thrown(String),
    }

    /// Decodes a body that arrived in these chunks, as the providers do: every chunk
    /// through `push`, then `finish`.
    pub fn openai_sse_messages(chunks: &[&[u8]]) -> Vec<Message> {
        let mut decoder = OpenAiSse::new();
        let mut out = Vec::new();
        for chunk in chunks {
            out.extend(decoder.push(chunk).into_iter().map(message));
        }
        out.extend(decoder.finish().into_iter().map(message));
        out
    }

    /// The SDK's per-message rule over a stream's messages, up to the first that throws.
    pub fn openai_sse_items(messages: &[Message]) -> Vec<Item> {
        let mut stream = SseStream::new();
        let mut out = Vec::new();
        for m in messages {
            let item = stream.item(&SseMessage {
                event: m.event.clone(),
                data: m.data.clone(),
            });
            match item {
                Ok(SseItem::Data(value)) => out.push(Item::Data(value)),
                Ok(SseItem::Skip) => out.push(Item::Skip),
                Err(SseError::Json(text)) => {
                    out.push(Item::Thrown(text));
                    break;
                }
                Err(SseError::Api(error)) => {
                    out.push(Item::Thrown(error.message));
                    break;
                }
            }
        }
        out
    }

    fn message(m: SseMessage) -> Message {
        Message {
            event: m.event,
            data: m.data,
        }
    }
}
