//! The API key stays secret on every path a user can see, for each provider, through the
//! whole `Agent`: no event, no final message, no error text, no `Debug` output and no log
//! line holds it, even when a hostile server echoes it back in its error body.
#![cfg(feature = "providers")]

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use pi_tool::agent::{Agent, AgentOptions};
use pi_tool::model::{Model, StreamOptions};
use pi_tool::providers::Providers;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const KEY: &str = "sk-live-SECRET-0123456789abcdef";

/// Answers every request 401 with a body that repeats the request's headers, key included.
async fn echoing_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                let mut len = 0;
                while !buf[..len].windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf[len..]).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => len += n,
                    }
                }
                let head = String::from_utf8_lossy(&buf[..len]).into_owned();
                let echoed = head.replace('"', "'").replace("\r\n", " | ");
                let body = format!(
                    r#"{{"error":{{"message":"Incorrect API key provided: {echoed}","type":"invalid_request_error"}}}}"#
                );
                let response = format!(
                    "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    origin
}

/// Every log line, as text.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<String>>);

struct Fields<'a>(&'a mut String);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={:?}", field.name(), value);
    }
}

impl tracing::Subscriber for Logs {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut text = self.0.lock().unwrap();
        span.record(&mut Fields(&mut text));
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        values.record(&mut Fields(&mut self.0.lock().unwrap()));
    }
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut text = self.0.lock().unwrap();
        event.record(&mut Fields(&mut text));
        text.push('\n');
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

async fn run(api: &str, base_url: String) -> String {
    let mut model = Model::new("some-model", api, "openai");
    model.base_url = base_url;
    model.context_window = 128_000;
    model.max_tokens = 1024;
    let options = StreamOptions {
        api_key: Some(KEY.into()),
        ..StreamOptions::default()
    };
    let agent_options = AgentOptions::new(Arc::new(Providers::new()))
        .model(model)
        .stream_options(options);
    let mut seen = format!("{:?}\n", agent_options.stream_options);
    let agent = Agent::new(agent_options);
    let events = Arc::new(Mutex::new(String::new()));
    let sink = events.clone();
    agent.subscribe(move |event, _| {
        let _ = writeln!(sink.lock().unwrap(), "{event:?}");
        Ok(())
    });
    let outcome = agent.prompt("Hello").await;
    let _ = writeln!(seen, "{outcome:?}");
    seen.push_str(&events.lock().unwrap());
    let state = agent.state();
    let _ = writeln!(seen, "{state:?}");
    for message in agent.messages() {
        let _ = writeln!(seen, "{}", serde_json::to_string(&message).unwrap());
    }
    // The run did fail, with the server's text.
    let last = agent.messages().pop().expect("an assistant message");
    let failed = last
        .as_assistant()
        .and_then(|m| m.error_message.clone())
        .expect("an error message");
    assert!(
        failed.contains("Incorrect API key provided"),
        "{api}: {failed}"
    );
    seen
}

#[tokio::test]
async fn no_provider_shows_the_key_anywhere() {
    let logs = Logs::default();
    let _guard = tracing::subscriber::set_default(logs.clone());
    let origin = echoing_server().await;
    for (api, base) in [
        ("anthropic-messages", origin.clone()),
        ("openai-completions", format!("{origin}/v1")),
        ("openai-responses", format!("{origin}/v1")),
    ] {
        let seen = run(api, base).await;
        assert!(!seen.contains(KEY), "{api} showed the key:\n{seen}");
        assert!(
            seen.contains("<redacted>"),
            "{api}: the echoed key was not redacted:\n{seen}"
        );
    }
    let logs = logs.0.lock().unwrap();
    assert!(!logs.contains(KEY), "a log line showed the key:\n{logs}");
}
