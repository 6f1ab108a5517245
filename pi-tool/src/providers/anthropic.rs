//! The `anthropic-messages` API: pi-ai 0.85.0's `streamSimple` for Anthropic's Messages
//! API (and compatible servers: llama.cpp, proxies, GitHub Copilot's Claude models).
//!
//! The request is the one pi-ai sends through `@anthropic-ai/sdk` 0.123.0
//! (`POST {baseUrl}/v1/messages?beta=true`); the response is read with pi-ai's own SSE
//! reader, quirks included, and turned into pi-ai's events.

mod body;
mod compat;
mod events;
mod failure;
mod headers;
mod messages;
mod request;
mod sse;
mod tools;

use self::events::Events;
use self::failure::http_error_message;
use self::request::Prepared;
use self::sse::SseDecoder;
use super::http::{Http, HttpError, HttpResponse, Timeouts};
use super::retry::{Attempt, RetryFailure, with_retries};
use super::stream::{Output, event_stream, failed};
use crate::model::{
    ApiKey, AssistantMessageStream, Context, Model, StopReason, StreamFn, StreamOptions,
};
use pi_tool_core::AbortSignal;

/// The most of an error body that is read (pi-ai reads it all; a cap keeps a hostile
/// server from filling memory).
const ERROR_BODY_LIMIT: usize = 4 << 20;

/// pi-ai's `anthropic-messages` provider as a [`StreamFn`].
///
/// The key comes from [`StreamOptions::api_key`], else `ANTHROPIC_OAUTH_TOKEN` /
/// `ANTHROPIC_API_KEY` (per `model.provider`); an OAuth token (`sk-ant-oat…`) switches to
/// pi-ai's Claude Code identity, as pi-ai does. Every failure ends the stream with one
/// `error` event carrying pi-ai's text; the key never appears in it.
///
/// ```no_run
/// use futures::StreamExt;
/// use pi_tool::model::{Context, Message, Model, StreamFn, StreamOptions};
/// use pi_tool::providers::AnthropicMessages;
///
/// # async fn run() {
/// let mut model = Model::new("claude-sonnet-4-5", "anthropic-messages", "anthropic");
/// model.base_url = "https://api.anthropic.com".into();
/// model.max_tokens = 64000;
/// model.context_window = 200000;
/// let context = Context {
///     system_prompt: "You are terse.".into(),
///     messages: vec![Message::user_text("Hello")],
///     ..Context::default()
/// };
/// let mut events = AnthropicMessages::new().stream(&model, &context, StreamOptions::default());
/// while let Some(event) = events.next().await {
///     println!("{}", event.name());
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct AnthropicMessages {
    http: Http,
}

impl AnthropicMessages {
    /// A provider with its own pooled HTTP client.
    pub fn new() -> Self {
        AnthropicMessages::default()
    }

    /// A provider that shares `http`'s connection pool.
    pub(crate) fn with_http(http: Http) -> Self {
        AnthropicMessages { http }
    }
}

impl StreamFn for AnthropicMessages {
    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageStream {
        // pi-ai throws here when there is no key; a stream reports it as its one event.
        let prepared = match request::prepare(model, context, &options) {
            Ok(prepared) => prepared,
            Err(message) => return failed(model, message),
        };
        let http = self.http.clone();
        let model = model.clone();
        event_stream(move |emitter| async move {
            let mut out = Output::new(&model, emitter);
            out.message.stop_reason = StopReason::Pending;
            out.message.provider_thinking_level = prepared.provider_thinking_level.clone();
            if let Err(message) = run(&http, &model, &prepared, &options, &mut out).await {
                let message = redact(message, prepared.secret.as_ref());
                out.fail(options.signal.is_aborted(), message);
            }
        })
    }
}

/// The error text with every occurrence of the key replaced: pi-ai passes a server's
/// error body on verbatim, and a server may echo the key it refused.
fn redact(message: String, secret: Option<&ApiKey>) -> String {
    match secret.map(ApiKey::expose) {
        Some(key) if !key.is_empty() && message.contains(key) => message.replace(key, "<redacted>"),
        _ => message,
    }
}

/// The request, then the stream; `Err` is the final error message.
async fn run(
    http: &Http,
    model: &Model,
    prepared: &Prepared,
    options: &StreamOptions,
    out: &mut Output,
) -> Result<(), String> {
    let signal = &options.signal;
    let mut response = send(http, prepared, options).await?;
    out.start();
    // fetch gives a 204 or 205 response no body at all (not an empty one).
    if matches!(response.status, 204 | 205) {
        return Err("Attempted to iterate over an Anthropic response with no body".to_owned());
    }
    let mut events = Events::new(
        model,
        &prepared.compat,
        prepared.oauth,
        &prepared.tool_names,
    );
    let mut decoder = SseDecoder::new();
    // Whether the consumer aborted while this producer waited for it to take the events.
    // In pi-ai the consumer runs while the reader awaits the next read, so such an abort
    // lands in that read (undici's text, below), not in the check before it.
    let mut aborted_while_drained = false;
    loop {
        if signal.is_aborted() && !aborted_while_drained {
            return Err("Request was aborted".to_owned());
        }
        let chunk = match response.chunk(signal).await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            // undici's text when the body's signal aborts mid-read.
            Err(HttpError::Aborted) => return Err("This operation was aborted".to_owned()),
            Err(error) => return Err(error.to_string()),
        };
        for sse in decoder.push(&chunk) {
            events.on_sse(&sse, out)?;
            out.drained().await;
            aborted_while_drained |= signal.is_aborted();
        }
    }
    for sse in decoder.finish() {
        events.on_sse(&sse, out)?;
    }
    events.finish(out, signal.is_aborted())?;
    out.done();
    Ok(())
}

/// A failed attempt: its status and retry headers, and the SDK's error text.
struct Failure {
    status: Option<u16>,
    headers: Vec<(&'static str, String)>,
    message: String,
}

impl RetryFailure for Failure {
    fn with_attempt<T>(&self, f: impl FnOnce(&Attempt<'_>) -> T) -> T {
        let header = |name: &str| {
            self.headers
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.clone())
        };
        f(&Attempt {
            status: self.status,
            header: &header,
            message: &self.message,
        })
    }

    fn into_message(self) -> String {
        self.message
    }
}

/// Sends the request, retrying as pi-ai's `retryProviderRequest` does (only with
/// `max_retries`); returns a 2xx response.
async fn send(
    http: &Http,
    prepared: &Prepared,
    options: &StreamOptions,
) -> Result<HttpResponse, String> {
    with_retries(options, || {
        attempt(http, prepared, &options.signal, Timeouts::of(options))
    })
    .await
}

/// One request; a non-2xx status is read into the SDK's error text.
async fn attempt(
    http: &Http,
    prepared: &Prepared,
    signal: &AbortSignal,
    timeouts: Timeouts,
) -> Result<HttpResponse, Failure> {
    let connection = |message: &str| Failure {
        status: None,
        headers: Vec::new(),
        message: message.to_owned(),
    };
    let response = match http
        .post(
            &prepared.url,
            &prepared.headers,
            prepared.body.clone(),
            signal,
            timeouts,
        )
        .await
    {
        Ok(response) => response,
        // The SDK's APIConnectionTimeoutError / APIConnectionError texts.
        Err(HttpError::Idle(_)) => return Err(connection("Request timed out.")),
        Err(HttpError::Aborted) => return Err(connection("Request was aborted.")),
        Err(_) => return Err(connection("Connection error.")),
    };
    if (200..300).contains(&response.status) {
        return Ok(response);
    }
    let status = response.status;
    let headers = ["x-should-retry", "retry-after-ms", "retry-after"]
        .into_iter()
        .filter_map(|name| Some((name, response.header(name)?.to_owned())))
        .collect();
    let body = match response.text(signal, ERROR_BODY_LIMIT).await {
        Ok(body) => body,
        // The SDK reads a failed body as that error's message.
        Err(HttpError::Aborted) => "This operation was aborted".to_owned(),
        Err(error) => error.to_string(),
    };
    Err(Failure {
        status: Some(status),
        headers,
        message: http_error_message(status, &body),
    })
}
