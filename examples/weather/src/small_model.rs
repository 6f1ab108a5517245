//! What a small local model needs before it calls `get_weather`.
//!
//! Measured with SmolLM2-135M-Instruct under llama.cpp's `llama-server`
//! (`scripts/local-llm/local-llm`): with Pi's custom-tool page's system prompt alone it answers in
//! prose. Three aids make it call the tool, then answer from the result:
//! - a directive system prompt ([`SYSTEM_PROMPT`]);
//! - one example exchange at the start of the history ([`example_exchange`]);
//! - a tool choice that forces a call while the user has the last word and leaves the
//!   model free once a tool result came back ([`tool_choice_by_turn`]).
//!
//! (The server side of the recipe is the chat template in `scripts/local-llm/`, and
//! temperature 0.) A large hosted model needs none of this.

use std::sync::Arc;

use pi_tool::model::{
    AssistantContent, AssistantMessage, Context, Message, Model, StopReason, StreamFn,
    StreamOptions, ToolChoice, ToolResultMessage, UserMessage,
};
use pi_tool::{Content, json};

/// The system prompt that a 135M model follows (Pi's custom-tool page's "Use get_weather for supported
/// weather questions." does not make it call the tool).
pub const SYSTEM_PROMPT: &str =
    "You are a tool-calling assistant. Always answer weather questions by calling get_weather.";

/// One finished exchange about London (question, tool call, result, answer), as the
/// given model would have written it: the model copies its shape for the real question.
pub fn example_exchange(model: &Model) -> Vec<Message> {
    let from_model = |content: Vec<AssistantContent>, stop_reason: StopReason| {
        let mut message = AssistantMessage::empty(model, stop_reason);
        message.content = content;
        message.timestamp = 0;
        Message::from(message)
    };
    vec![
        Message::User(UserMessage {
            content: vec![Content::text("What is the weather in London?")],
            timestamp: 0,
            plain_text: false,
        }),
        from_model(
            vec![AssistantContent::tool_call(
                "call_0",
                "get_weather",
                json!({ "city": "London" }),
            )],
            StopReason::ToolUse,
        ),
        Message::from(ToolResultMessage {
            tool_call_id: "call_0".into(),
            tool_name: "get_weather".into(),
            content: vec![Content::text("London: 11 degrees celsius")],
            details: None,
            usage: None,
            added_tool_names: None,
            is_error: false,
            timestamp: 0,
        }),
        from_model(
            vec![AssistantContent::text(
                "It is 11 degrees celsius in London.",
            )],
            StopReason::Stop,
        ),
    ]
}

/// Wraps a model so that each request asks for a tool call (`Required`) when the last
/// message is the user's, and lets the model choose (`Auto`) after a tool result, when
/// it should answer in text.
pub fn tool_choice_by_turn(inner: Arc<dyn StreamFn>) -> Arc<dyn StreamFn> {
    Arc::new(
        move |model: &Model, context: &Context, mut options: StreamOptions| {
            let user_spoke_last = matches!(context.messages.last(), Some(Message::User(_)));
            options.tool_choice = Some(if user_spoke_last {
                ToolChoice::Required
            } else {
                ToolChoice::Auto
            });
            inner.stream(model, context, options)
        },
    )
}
