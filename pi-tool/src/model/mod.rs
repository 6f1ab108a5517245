//! The model layer (Pi's pi-ai): messages, the model descriptor, and the stream boundary.
//!
//! Everything a model call is made of, and nothing of the loop that makes it:
//!
//! * [`Message`]: the transcript in Pi's JSON shape (user, assistant, tool result).
//! * [`Model`]: which model, through which API and provider (plain data from the core, so
//!   that a tool reads it as `ctx.model`).
//! * [`StreamFn`]: the boundary a provider implements. A request ([`Model`], [`Context`],
//!   [`StreamOptions`]) goes in, [`AssistantMessageEvent`]s come out, and every failure is
//!   encoded in the stream. The faux model (`testing::FauxModel`) and the providers
//!   (`providers`, behind features) implement it; the agent loop (`agent`) consumes it.
//!
//! As in Pi, where pi-agent-core depends on pi-ai and not the reverse, this layer names
//! no part of the agent.

mod message;
mod stream;

pub(crate) use message::serialize_assistant;
// The providers (behind features) stamp the messages they build.
#[allow(unused_imports)]
pub(crate) use message::now_millis;
pub use message::{
    AssistantContent, AssistantMessage, Cost, Message, StopReason, ToolCall, ToolResultMessage,
    Usage, UserMessage,
};
pub use pi_tool_core::model::{Model, ModelCost, ModelCostTier};
pub use stream::{
    ApiKey, AssistantMessageEvent, AssistantMessageStream, CacheRetention, Context, StreamFn,
    StreamOptions, ThinkingLevel, ToolChoice,
};
