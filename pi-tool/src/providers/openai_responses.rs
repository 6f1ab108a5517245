//! The `openai-responses` wire API: pi-ai 0.85.0's `streamSimple` in
//! `api/openai-responses.js` with `api/openai-responses-shared.js`.
//!
//! One call is one `POST {baseUrl}/responses` with `stream: true` and `store: false`:
//! the transcript becomes Responses input items (reasoning items replayed from their
//! signatures), the SSE stream of output items becomes pi's message events, and every
//! failure ends the stream with one `error` event carrying pi-ai's text.
//!
//! Where it differs from pi-ai, on purpose:
//! - Without an API key pi-ai's `streamSimple` throws `No API key for provider: <p>`;
//!   here the stream is one `error` event whose text also names the environment
//!   variable to set.
//! - An error text that contains the API key (a server echoing it) shows `<redacted>`
//!   in its place.
//! - [`StreamOptions::timeout`] also ends a body that stalls (the SDK's timeout covers
//!   only the wait for the response headers, which reads `Request timed out.` here too).
//! - pi-tool's tools carry no constrained-sampling settings, so no tool is sent as a
//!   grammar tool and `strict` (where the endpoint supports it) is always `false`, as
//!   pi-ai does for such tools. There is no `serviceTier` option; a `service_tier`
//!   the server reports is still priced as pi-ai prices it.
//! - The SDK's `x-stainless-*` telemetry headers are not sent.

mod convert;
mod events;
mod request;
mod send;
mod value;

use serde::{Deserialize, Serialize};

use crate::model::{
    ApiKey, AssistantMessageStream, Context, Model, StopReason, StreamFn, StreamOptions,
};
use crate::providers::env::resolve_api_key;
use crate::providers::error_body::{format_provider_error, normalize_api_error};
use crate::providers::http::{Http, HttpError, HttpResponse};
use crate::providers::openai_sse::{OpenAiSse, SseError, SseItem, SseMessage, SseStream};
use crate::providers::stream::{self, Output, event_stream};

use events::ResponsesEvents;

/// The `openai-responses` provider (pi-ai's `streamSimple` for this API).
///
/// Reads its compatibility switches from `model.compat` as an [`OpenAiResponsesCompat`].
/// The API key is [`StreamOptions::api_key`] or the provider's environment variable
/// (`OPENAI_API_KEY` for `openai`); without one the stream is a single `error` event
/// naming the variable (pi-ai throws instead).
#[derive(Clone, Debug, Default)]
pub struct OpenAiResponses {
    http: Http,
}

impl OpenAiResponses {
    /// A provider with its own pooled HTTP client.
    pub fn new() -> Self {
        OpenAiResponses::default()
    }

    /// A provider on a shared client (the router's).
    pub(crate) fn with_http(http: Http) -> Self {
        OpenAiResponses { http }
    }
}

/// Compatibility switches of an OpenAI Responses endpoint (pi-ai's
/// `OpenAIResponsesCompat`), read from `model.compat`. Unset switches take pi-ai's
/// defaults; unknown keys are ignored. A `compat` whose known keys have the wrong JSON
/// type is ignored as a whole (all defaults). It serialises to the JSON `model.compat`
/// holds, unset switches left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct OpenAiResponsesCompat {
    /// Whether the endpoint takes the `developer` role for a reasoning model's system
    /// prompt (otherwise `system`). Default: true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_developer_role: Option<bool>,
    /// Session-affinity headers sent with a session id: `openai` sends `session_id` and
    /// `x-client-request-id`, `openai-nosession` only `x-client-request-id`,
    /// `openrouter` `x-session-id`. Default: `openrouter` for OpenRouter, else `openai`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_affinity_format: Option<String>,
    /// Whether the endpoint takes `prompt_cache_retention: "24h"` (sent for long cache
    /// retention). Default: true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_long_cache_retention: Option<bool>,
    /// Whether function tools carry `strict` (always `false` here: pi-tool's tools ask
    /// for no constrained sampling). Default: false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_strict_mode: Option<bool>,
    /// Whether grammar (Lark/regex) custom tools may be sent. pi-tool's tools have no
    /// grammar, so this changes nothing in the request. Default: false.
    #[serde(
        rename = "supportsOpenAIGrammarTools",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub supports_openai_grammar_tools: Option<bool>,
    /// Whether tools activated by a tool result are announced in an `additional_tools`
    /// item after it instead of being listed up front. Default: false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_additional_tools: Option<bool>,
    /// Whether such tools are announced as a client-executed tool search instead.
    /// Default: false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_tool_search: Option<bool>,
    /// Whether the endpoint takes `prompt_cache_options: {mode: "explicit"}` (sent when
    /// cache retention is `none`). Default: false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_explicit_prompt_cache_mode: Option<bool>,
    /// Whether the endpoint takes `max_output_tokens`. Default: true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_max_output_tokens: Option<bool>,
}

impl OpenAiResponsesCompat {
    /// The switches of `model.compat` (`model.compat = Some(serde_json::to_value(&compat)?)`
    /// sets them).
    pub fn of(model: &Model) -> Self {
        model
            .compat
            .as_ref()
            .and_then(|compat| serde_json::from_value(compat.clone()).ok())
            .unwrap_or_default()
    }
}

impl StreamFn for OpenAiResponses {
    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageStream {
        let api_key = match client_api_key(model, &options) {
            Ok(key) => key,
            Err(message) => return stream::failed(model, message),
        };
        let compat = OpenAiResponsesCompat::of(model);
        let request = request::build_request(model, context, &options, &compat, &api_key);
        let http = self.http.clone();
        let model = model.clone();
        event_stream(move |emitter| async move {
            let mut out = Output::new(&model, emitter);
            out.message.stop_reason = StopReason::Pending;
            let result = match request {
                Ok(request) => run(&http, &model, &request, &options, &mut out).await,
                Err(message) => Err(message),
            };
            match result {
                Ok(()) => out.done(),
                Err(message) => {
                    let message = redact_key(message, &api_key);
                    out.fail(options.signal.is_aborted(), message)
                }
            }
        })
    }
}

/// An error text with the key cut out: a server that echoes the key in its error body
/// (pi-ai would show it) must not put it in the message.
fn redact_key(message: String, key: &ApiKey) -> String {
    let key = key.expose();
    if key.is_empty() || key == "unused" || !message.contains(key) {
        return message;
    }
    message.replace(key, "<redacted>")
}

/// `getClientApiKey`: the key, or `unused` when the caller sends its own
/// `authorization` (or `cf-aig-authorization`) header.
fn client_api_key(model: &Model, options: &StreamOptions) -> Result<ApiKey, String> {
    resolve_api_key(model, options).or_else(|message| {
        let has_auth = options.headers.iter().any(|(name, value)| {
            (name.eq_ignore_ascii_case("authorization")
                || name.eq_ignore_ascii_case("cf-aig-authorization"))
                && value.as_deref().is_some_and(|v| !v.trim().is_empty())
        });
        if has_auth {
            Ok(ApiKey::from("unused"))
        } else {
            Err(message)
        }
    })
}

/// The call after the request is built: send, stream, and the checks pi-ai makes after
/// the stream. Err is the final message's `errorMessage`.
async fn run(
    http: &Http,
    model: &Model,
    request: &request::Request,
    options: &StreamOptions,
    out: &mut Output,
) -> Result<(), String> {
    let response = send::send(http, request, options).await?;
    out.start();
    let mut events = ResponsesEvents::new();
    read_stream(response, model, options, out, &mut events).await?;
    if !events.saw_terminal() {
        return Err("OpenAI Responses stream ended before a terminal response event".to_owned());
    }
    if options.signal.is_aborted() {
        return Err("Request was aborted".to_owned());
    }
    match out.message.stop_reason {
        StopReason::Pending => {
            Err("OpenAI Responses stream ended without a stop reason".to_owned())
        }
        StopReason::Aborted | StopReason::Error => Err(out
            .message
            .error_message
            .clone()
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "An unknown error occurred".to_owned())),
        _ => Ok(()),
    }
}

/// The SDK's `Stream` over the body, each event handed to the processor. An abort ends
/// the iteration quietly, as the SDK's iterator does.
async fn read_stream(
    mut response: HttpResponse,
    model: &Model,
    options: &StreamOptions,
    out: &mut Output,
    events: &mut ResponsesEvents,
) -> Result<(), String> {
    let mut sse = OpenAiSse::new();
    let mut stream = SseStream::new();
    loop {
        let messages = match response.chunk(&options.signal).await {
            Ok(Some(chunk)) => sse.push(&chunk),
            Ok(None) => {
                let rest = sse.finish();
                dispatch(&rest, &mut stream, model, out, events).await?;
                return Ok(());
            }
            Err(HttpError::Aborted) => return Ok(()),
            Err(error) => return Err(error.to_string()),
        };
        dispatch(&messages, &mut stream, model, out, events).await?;
    }
}

async fn dispatch(
    messages: &[SseMessage],
    stream: &mut SseStream,
    model: &Model,
    out: &mut Output,
    events: &mut ResponsesEvents,
) -> Result<(), String> {
    for message in messages {
        match stream.item(message) {
            Ok(SseItem::Data(event)) => {
                events.handle(out, model, &event)?;
                out.drained().await;
            }
            Ok(SseItem::Skip) => {}
            Err(SseError::Json(message)) => return Err(message),
            Err(SseError::Api(error)) => {
                return Err(format_provider_error(
                    &normalize_api_error(&error),
                    Some("OpenAI API error"),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compat_reads_pi_ai_keys_and_writes_only_what_is_set() {
        let mut model = Model::new("m", "openai-responses", "openai");
        model.compat = Some(json!({
            "supportsStrictMode": true,
            "supportsOpenAIGrammarTools": false,
            "sessionAffinityFormat": "openrouter",
            "someOtherApiKey": 1
        }));
        let compat = OpenAiResponsesCompat::of(&model);
        assert_eq!(compat.supports_strict_mode, Some(true));
        assert_eq!(compat.supports_openai_grammar_tools, Some(false));
        assert_eq!(
            compat.session_affinity_format.as_deref(),
            Some("openrouter")
        );
        assert_eq!(compat.supports_developer_role, None);
        assert_eq!(
            serde_json::to_value(&compat).unwrap(),
            json!({"supportsStrictMode": true, "supportsOpenAIGrammarTools": false,
                   "sessionAffinityFormat": "openrouter"})
        );
        model.compat = Some(json!({"supportsStrictMode": "yes"}));
        assert_eq!(
            OpenAiResponsesCompat::of(&model),
            OpenAiResponsesCompat::default()
        );
    }

    #[test]
    fn an_echoed_key_is_cut_out_of_error_texts() {
        let key = ApiKey::from("sk-abc-123");
        assert_eq!(
            redact_key("401 bad key sk-abc-123.".into(), &key),
            "401 bad key <redacted>."
        );
        assert_eq!(
            redact_key("unused".into(), &ApiKey::from("unused")),
            "unused"
        );
    }
}
