//! The `openai-completions` API: pi-ai 0.85.0's `streamSimple` for OpenAI Chat
//! Completions and the servers that speak it (llama.cpp, Ollama, vLLM, LM Studio,
//! OpenRouter, DeepSeek, z.ai, ...).
//!
//! The request is the one pi-ai sends through the `openai` SDK 6.40.0
//! (`POST {baseUrl}/chat/completions`, the switches of [`OpenAiCompletionsCompat`]
//! detected from the provider and URL); the response is read with the SDK's SSE reader
//! and turned into pi-ai's events. Blocks end only when the stream ends, as in pi-ai.

mod cache;
mod compat;
mod details;
mod events;
mod messages;
mod request;
mod send;
mod thinking;
mod usage;

use self::events::Events;
use self::request::Prepared;
use super::http::{Http, HttpError};
use super::openai_sse::{OpenAiSse, SseError, SseItem, SseMessage, SseStream};
use super::stream::{Output, event_stream, failed};
use crate::model::{
    ApiKey, AssistantMessageStream, Context, Model, StopReason, StreamFn, StreamOptions,
};

pub use self::compat::OpenAiCompletionsCompat;

/// pi-ai's `openai-completions` provider as a [`StreamFn`].
///
/// The key comes from [`StreamOptions::api_key`], else the provider's environment
/// variable (`OPENAI_API_KEY`, `DEEPSEEK_API_KEY`, ...); a caller `authorization` (or
/// `cf-aig-authorization`) header stands in for it, as in pi-ai. Without either, the
/// stream is one `error` event naming the variable (pi-ai throws instead). Every other
/// failure ends the stream with one `error` event carrying pi-ai's text; the key never
/// appears in it (a server that echoes it in an error body gets `<redacted>` in its
/// place, where pi-ai would show the key).
///
/// ```no_run
/// use futures::StreamExt;
/// use pi_tool::model::{Context, Message, Model, StreamFn, StreamOptions};
/// use pi_tool::providers::OpenAiCompletions;
///
/// # async fn run() {
/// let mut model = Model::new("qwen2.5-coder", "openai-completions", "llama-cpp");
/// model.base_url = "http://127.0.0.1:8080/v1".into();
/// model.max_tokens = 4096;
/// model.context_window = 32768;
/// let context = Context {
///     messages: vec![Message::user_text("Hello")],
///     ..Context::default()
/// };
/// let options = StreamOptions {
///     api_key: Some("unused".into()),
///     ..StreamOptions::default()
/// };
/// let mut events = OpenAiCompletions::new().stream(&model, &context, options);
/// while let Some(event) = events.next().await {
///     println!("{}", event.name());
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct OpenAiCompletions {
    http: Http,
}

impl OpenAiCompletions {
    /// A provider with its own pooled HTTP client.
    pub fn new() -> Self {
        OpenAiCompletions::default()
    }

    /// A provider that shares `http`'s connection pool.
    pub(crate) fn with_http(http: Http) -> Self {
        OpenAiCompletions { http }
    }
}

/// `getClientApiKey`: the key, a placeholder when the caller authorises by header, or
/// the error naming what to set.
fn client_api_key(model: &Model, options: &StreamOptions) -> Result<ApiKey, String> {
    match super::env::resolve_api_key(model, options) {
        Ok(key) => Ok(key),
        Err(_)
            if request::has_header(options, "authorization")
                || request::has_header(options, "cf-aig-authorization") =>
        {
            Ok(ApiKey::from("unused"))
        }
        Err(message) => Err(message),
    }
}

impl StreamFn for OpenAiCompletions {
    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageStream {
        let prepared = match client_api_key(model, &options)
            .and_then(|key| request::prepare(model, context, &options, &key))
        {
            Ok(prepared) => prepared,
            Err(message) => return failed(model, message),
        };
        let http = self.http.clone();
        let model = model.clone();
        event_stream(move |emitter| async move {
            let mut out = Output::new(&model, emitter);
            out.message.stop_reason = StopReason::Pending;
            let mut events = Events::new(&model);
            let result = run(&http, &prepared, &options, &mut events, &mut out).await;
            if let Err(message) = result {
                // pi-ai's catch: the reasoning details still become the signature.
                events.apply_reasoning_details(&mut out);
                let message = redact_key(message, &prepared.api_key);
                out.fail(options.signal.is_aborted(), message);
            }
        })
    }
}

/// A server may echo the key in its error body; pi-ai would show it, we do not.
fn redact_key(message: String, key: &ApiKey) -> String {
    let key = key.expose();
    if key.is_empty() || !message.contains(key) {
        return message;
    }
    message.replace(key, "<redacted>")
}

/// The request, then the stream; `Err` is the final error message.
async fn run(
    http: &Http,
    prepared: &Prepared,
    options: &StreamOptions,
    events: &mut Events<'_>,
    out: &mut Output,
) -> Result<(), String> {
    let signal = &options.signal;
    let mut response = send::send(http, prepared, options).await?;
    out.start();
    let mut decoder = OpenAiSse::new();
    let mut stream = SseStream::new();
    let mut aborted = false;
    loop {
        let chunk = match response.chunk(signal).await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            // The SDK ends its iterator quietly when the request is aborted.
            Err(HttpError::Aborted) => {
                aborted = true;
                break;
            }
            Err(error) => return Err(error.to_string()),
        };
        for message in decoder.push(&chunk) {
            on_message(&mut stream, &message, events, out)?;
            out.drained().await;
        }
    }
    if !aborted {
        for message in decoder.finish() {
            on_message(&mut stream, &message, events, out)?;
        }
    }
    events.finish_blocks(out)?;
    if signal.is_aborted() {
        return Err("Request was aborted".to_owned());
    }
    events.finish(out, &prepared.compat)?;
    out.done();
    Ok(())
}

fn on_message(
    stream: &mut SseStream,
    message: &SseMessage,
    events: &mut Events<'_>,
    out: &mut Output,
) -> Result<(), String> {
    match stream.item(message) {
        Ok(SseItem::Data(chunk)) => events.on_chunk(&chunk, out),
        Ok(SseItem::Skip) => Ok(()),
        Err(SseError::Json(message)) => Err(message),
        Err(SseError::Api(error)) => Err(send::api_error_message(&error)),
    }
}
