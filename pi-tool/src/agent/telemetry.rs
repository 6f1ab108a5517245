//! `tracing` spans with OpenTelemetry's GenAI semantic conventions, built in one place.
//!
//! Every host builds its spans here, so the names and fields live once:
//!
//! ```text
//! invoke_agent                       one run (run_agent_loop / Agent / AgentSession)
//! └─ turn                            one assistant message and its tool batch
//!    ├─ chat {model}                 the model request
//!    ├─ execute_tool {tool name}     each tool call (parallel calls are siblings)
//!    │  └─ event "tool progress"     each on_update (DEBUG)
//!    └─ execute_tool {tool name}
//! execute_tool {tool name}           a call of the MCP server (pi-tool-mcp), a root
//! ```
//!
//! `tracing` span names are static (`invoke_agent`, `turn`, `chat`, `execute_tool`); the
//! OpenTelemetry name with the model or tool in it is the `otel.name` field, which
//! `tracing-opentelemetry` uses as the exported span's name. `otel.kind` (`client` for a
//! model request) and `otel.status_code` (`ERROR` on a failure) are its other special
//! fields; other layers see them as ordinary fields.
//!
//! Fields, by span:
//!
//! * `execute_tool`: the call policy's span (`pi_tool_core::CallSpan`, made by
//!   [`CallPolicy::span`](pi_tool_core::CallPolicy::span)), the same on every host.
//! * `chat`: `gen_ai.operation.name = "chat"`, `gen_ai.provider.name` (the model's
//!   provider as pi-ai names it: `anthropic`, `openai`, ...), `gen_ai.request.model`; when
//!   the answer is complete `gen_ai.response.id`, `gen_ai.response.model`,
//!   `gen_ai.usage.input_tokens` (all input tokens, cached ones included, as OpenTelemetry
//!   counts them; pi-ai's `usage.input` leaves those out), `gen_ai.usage.output_tokens`,
//!   `gen_ai.usage.cache_read.input_tokens`, `gen_ai.usage.cache_creation.input_tokens`,
//!   and `gen_ai.response.finish_reasons` (Pi's stop reason: `stop`, `length`, `toolUse`,
//!   `error`, `aborted`; one value, as a string, since a `tracing` field holds no array).
//!   A failed or aborted request sets `error.type` to that stop reason.
//! * `invoke_agent`: `gen_ai.operation.name = "invoke_agent"`, `gen_ai.provider.name`,
//!   `gen_ai.request.model` (the model the run starts with).
//! * `turn`: `pi_tool.turn`, the turn's number in the run, from 1.
//!
//! **Content is off by default**: [`CallPolicy::trace_content`](pi_tool_core::CallPolicy)
//! turns on the arguments, results and progress text of the tool spans, redacted first.
//!
//! **Cost.** With no subscriber, or one that filters these spans out, building a span is
//! `tracing`'s callsite check (one atomic load) and recording into it is a branch on an
//! empty span: nothing is formatted, serialised or allocated.

use tracing::Span;
use tracing::field::Empty;

use crate::model::AssistantMessage;
use crate::model::Model;

/// The span of one agent run (`invoke_agent`), starting with `model`.
pub fn agent_span(model: &Model) -> Span {
    tracing::info_span!(
        "invoke_agent",
        "otel.name" = "invoke_agent",
        "gen_ai.operation.name" = "invoke_agent",
        "gen_ai.provider.name" = model.provider.as_str(),
        "gen_ai.request.model" = model.id.as_str(),
    )
}

/// The span of one turn of a run; `number` counts from 1.
pub fn turn_span(number: u64) -> Span {
    tracing::info_span!("turn", "pi_tool.turn" = number)
}

/// The span of one model request (`chat {model}`); record the answer with
/// [`record_chat_response`].
pub fn chat_span(model: &Model) -> Span {
    tracing::info_span!(
        "chat",
        "otel.name" = %format_args!("chat {}", model.id),
        "otel.kind" = "client",
        "otel.status_code" = Empty,
        "gen_ai.operation.name" = "chat",
        "gen_ai.provider.name" = model.provider.as_str(),
        "gen_ai.request.model" = model.id.as_str(),
        "gen_ai.response.id" = Empty,
        "gen_ai.response.model" = Empty,
        "gen_ai.response.finish_reasons" = Empty,
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
        "gen_ai.usage.cache_read.input_tokens" = Empty,
        "gen_ai.usage.cache_creation.input_tokens" = Empty,
        "error.type" = Empty,
    )
}

/// Records the final assistant message of a model request on its [`chat_span`].
pub fn record_chat_response(span: &Span, message: &AssistantMessage) {
    if span.is_disabled() {
        return;
    }
    let reason = message.stop_reason.name();
    span.record("gen_ai.response.finish_reasons", reason);
    if let Some(id) = &message.response_id {
        span.record("gen_ai.response.id", id.as_str());
    }
    let model = message.response_model.as_deref().unwrap_or(&message.model);
    if !model.is_empty() {
        span.record("gen_ai.response.model", model);
    }
    let usage = &message.usage;
    // OpenTelemetry counts every input token, cached ones included; pi-ai's `input`
    // leaves out what was read from or written to the cache.
    let input = usage
        .input
        .saturating_add(usage.cache_read)
        .saturating_add(usage.cache_write);
    span.record("gen_ai.usage.input_tokens", input);
    span.record("gen_ai.usage.output_tokens", usage.output);
    span.record("gen_ai.usage.cache_read.input_tokens", usage.cache_read);
    span.record(
        "gen_ai.usage.cache_creation.input_tokens",
        usage.cache_write,
    );
    if message.stop_reason.is_failure() {
        span.record("error.type", reason);
        span.record("otel.status_code", "ERROR");
    }
}
