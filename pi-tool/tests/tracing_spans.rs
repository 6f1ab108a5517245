//! The `tracing` spans of a run (issue 12 §3): names, OpenTelemetry GenAI fields and
//! nesting, recorded by a real `Registry` with a recording layer. A run is
//! `invoke_agent` → `turn` → `chat {model}` / `execute_tool {tool}`; parallel calls are
//! siblings under their turn and overlap in time; failures set `error.type`; arguments
//! and results appear only when the policy asks, redacted.

mod tracing_support;

use std::sync::Arc;
use std::time::Duration;

use pi_tool::agent::{Agent, AgentOptions, RunPolicy};
use pi_tool::model::AssistantContent;
use pi_tool::safety::Redactor;
use pi_tool::session::AgentSession;
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{AbortSignal, AgentToolResult, CallPolicy, OnUpdate, ToolError, json, pi_tool};
use tracing_support::{Recorder, SpanRecord};

#[pi_tool::params]
pub struct EchoParams {
    /// What to say back.
    pub text: String,
}

/// Says the text back after a short wait, reporting progress first.
#[pi_tool(name = "slow_echo")]
async fn slow_echo(
    params: EchoParams,
    signal: AbortSignal,
    on_update: OnUpdate<()>,
) -> Result<AgentToolResult<()>, ToolError> {
    on_update.send(AgentToolResult::text(
        format!("echoing {}", params.text),
        (),
    ));
    signal.sleep(Duration::from_millis(20)).await?;
    Ok(AgentToolResult::text(params.text, ()))
}

/// Always fails.
#[pi_tool(name = "broken")]
async fn broken(_params: pi_tool::NoParams) -> Result<String, ToolError> {
    Err(ToolError::new("the disk is full"))
}

fn echo_call(id: &str, text: &str) -> AssistantContent {
    AssistantContent::tool_call(id, "slow_echo", json!({ "text": text }))
}

fn agent(turns: Vec<FauxTurn>, policy: RunPolicy) -> Agent {
    let pack = pi_tool::tool_pack![SlowEcho, Broken];
    Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(turns)))
            .model(FauxModel::model())
            .tools(pack.tools())
            .policy(policy),
    )
}

fn only(recorder: &Recorder, name: &str) -> SpanRecord {
    let spans = recorder.named(name);
    assert_eq!(spans.len(), 1, "one {name} span: {spans:#?}");
    spans.into_iter().next().unwrap()
}

fn tool_span(recorder: &Recorder, call_id: &str) -> SpanRecord {
    let spans: Vec<_> = recorder
        .named("execute_tool")
        .into_iter()
        .filter(|s| s.field("gen_ai.tool.call.id") == Some(call_id))
        .collect();
    assert_eq!(spans.len(), 1, "one span for {call_id}: {spans:#?}");
    spans.into_iter().next().unwrap()
}

#[tokio::test]
async fn a_run_nests_agent_turn_chat_and_parallel_tool_spans() {
    let recorder = Recorder::default();
    let _guard = recorder.install();
    let agent = agent(
        vec![FauxTurn::new(vec![
            echo_call("call_a", "one"),
            echo_call("call_b", "two"),
        ])],
        RunPolicy::default(),
    );
    agent.prompt("go").await.unwrap();

    let run = only(&recorder, "invoke_agent");
    assert_eq!(run.parent, None);
    assert_eq!(run.field("gen_ai.operation.name"), Some("invoke_agent"));
    assert_eq!(run.field("gen_ai.provider.name"), Some("fake"));
    assert_eq!(run.field("gen_ai.request.model"), Some("fake-1"));

    // Two turns: the tool calls, then the faux model's closing `Done.`.
    let turns = recorder.named("turn");
    assert_eq!(turns.len(), 2, "{turns:#?}");
    for (number, turn) in turns.iter().enumerate() {
        assert_eq!(turn.parent, Some(run.index));
        assert_eq!(turn.field("pi_tool.turn"), Some(&*(number + 1).to_string()));
    }

    let chats = recorder.named("chat");
    assert_eq!(chats.len(), 2, "{chats:#?}");
    for (chat, turn) in chats.iter().zip(&turns) {
        assert_eq!(chat.parent, Some(turn.index));
        assert_eq!(chat.field("otel.name"), Some("chat fake-1"));
        assert_eq!(chat.field("otel.kind"), Some("client"));
        assert_eq!(chat.field("gen_ai.operation.name"), Some("chat"));
        assert_eq!(chat.field("gen_ai.provider.name"), Some("fake"));
        assert_eq!(chat.field("gen_ai.request.model"), Some("fake-1"));
        assert_eq!(chat.field("gen_ai.response.model"), Some("fake-1"));
        // The faux model reports zero usage; the fields are there all the same.
        assert_eq!(chat.field("gen_ai.usage.input_tokens"), Some("0"));
        assert_eq!(chat.field("gen_ai.usage.output_tokens"), Some("0"));
        assert_eq!(chat.field("error.type"), None);
        assert!(chat.closed.is_some());
    }
    assert_eq!(
        chats[0].field("gen_ai.response.finish_reasons"),
        Some("toolUse")
    );
    assert_eq!(
        chats[1].field("gen_ai.response.finish_reasons"),
        Some("stop")
    );

    let (a, b) = (
        tool_span(&recorder, "call_a"),
        tool_span(&recorder, "call_b"),
    );
    for span in [&a, &b] {
        assert_eq!(span.parent, Some(turns[0].index), "{span:#?}");
        assert_eq!(recorder.ancestry(span), ["turn", "invoke_agent"]);
        assert_eq!(span.field("otel.name"), Some("execute_tool slow_echo"));
        assert_eq!(span.field("gen_ai.operation.name"), Some("execute_tool"));
        assert_eq!(span.field("gen_ai.tool.name"), Some("slow_echo"));
        assert_eq!(span.field("gen_ai.tool.type"), Some("function"));
        assert_eq!(span.field("error.type"), None);
        assert_eq!(span.field("otel.status_code"), None);
        // Content is off by default.
        assert_eq!(span.field("gen_ai.tool.call.arguments"), None);
        assert_eq!(span.field("gen_ai.tool.call.result"), None);
        // Each call's span ends with the call, inside its turn.
        assert!(span.closed.unwrap() < turns[0].closed.unwrap());
    }
    // The calls ran at the same time: each opened before the other closed.
    assert!(a.opened < b.closed.unwrap() && b.opened < a.closed.unwrap());

    // One progress event per update, inside its call's span.
    let progress: Vec<_> = recorder
        .events()
        .into_iter()
        .filter(|e| e.fields.get("message").map(String::as_str) == Some("tool progress"))
        .collect();
    assert_eq!(progress.len(), 2, "{progress:#?}");
    let mut parents: Vec<_> = progress.iter().map(|e| e.parent).collect();
    parents.sort();
    assert_eq!(parents, [Some(a.index), Some(b.index)]);
    assert!(progress.iter().all(|e| e.level == tracing::Level::DEBUG));
    assert!(
        progress
            .iter()
            .all(|e| !e.fields.contains_key("gen_ai.tool.call.update"))
    );
}

#[tokio::test]
async fn failed_calls_set_error_type_and_status() {
    let recorder = Recorder::default();
    let _guard = recorder.install();
    let agent = agent(
        vec![FauxTurn::new(vec![
            AssistantContent::tool_call("call_broken", "broken", json!({})),
            AssistantContent::tool_call("call_missing", "missing", json!({})),
            AssistantContent::tool_call("call_invalid", "slow_echo", json!({ "text": [1] })),
            echo_call("call_ok", "fine"),
        ])],
        RunPolicy::default(),
    );
    agent.prompt("go").await.unwrap();

    let cases = [
        ("call_broken", "broken", Some("tool_error")),
        ("call_missing", "missing", Some("tool_not_found")),
        ("call_invalid", "slow_echo", Some("invalid_arguments")),
        ("call_ok", "slow_echo", None),
    ];
    for (id, tool, error_type) in cases {
        let span = tool_span(&recorder, id);
        assert_eq!(span.field("gen_ai.tool.name"), Some(tool));
        assert_eq!(span.field("error.type"), error_type, "{span:#?}");
        let status = error_type.map(|_| "ERROR");
        assert_eq!(span.field("otel.status_code"), status, "{span:#?}");
        assert_eq!(recorder.ancestry(&span), ["turn", "invoke_agent"]);
        // The error's text is the model's to read; it is not in the span.
        assert!(!span.fields.values().any(|v| v.contains("disk is full")));
    }
}

#[tokio::test]
async fn content_is_recorded_on_request_and_redacted_first() {
    const SECRET: &str = "sk-live-0123456789abcdef";
    let recorder = Recorder::default();
    let _guard = recorder.install();
    let policy = RunPolicy::new().call(
        CallPolicy::new()
            .trace_content(true)
            .redact_secrets(Redactor::new([SECRET]).unwrap()),
    );
    let agent = agent(
        vec![FauxTurn::new(vec![
            echo_call("call_secret", &format!("the key is {SECRET}")),
            echo_call("call_plain", "hello"),
        ])],
        policy,
    );
    agent.prompt("go").await.unwrap();

    let secret = tool_span(&recorder, "call_secret");
    let arguments = secret.field("gen_ai.tool.call.arguments").unwrap();
    assert_eq!(arguments, r#"{"text":"the key is [REDACTED]"}"#);
    let result = secret.field("gen_ai.tool.call.result").unwrap();
    assert!(result.contains("the key is [REDACTED]"), "{result}");
    let plain = tool_span(&recorder, "call_plain");
    assert_eq!(
        plain.field("gen_ai.tool.call.arguments"),
        Some(r#"{"text":"hello"}"#)
    );
    let result: serde_json::Value =
        serde_json::from_str(plain.field("gen_ai.tool.call.result").unwrap()).unwrap();
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "hello"}])
    );

    let updates: Vec<_> = recorder
        .events()
        .into_iter()
        .filter_map(|e| e.fields.get("gen_ai.tool.call.update").cloned())
        .collect();
    assert_eq!(updates.len(), 2, "{updates:?}");
    assert!(
        updates
            .iter()
            .any(|u| u.contains("echoing the key is [REDACTED]"))
    );

    // Nowhere in any span or event.
    let everything = format!("{:?}{:?}", recorder.spans(), recorder.events());
    assert!(!everything.contains(SECRET));
}

#[tokio::test]
async fn a_session_runs_inside_the_same_spans() {
    let recorder = Recorder::default();
    let _guard = recorder.install();
    let session = AgentSession::builder(Arc::new(FauxModel::new(vec![FauxTurn::new(vec![
        echo_call("call_s", "session"),
    ])])))
    .custom_tool(SlowEcho)
    .build()
    .unwrap();
    session.prompt("go").await.unwrap();
    let span = tool_span(&recorder, "call_s");
    assert_eq!(span.field("otel.name"), Some("execute_tool slow_echo"));
    assert_eq!(recorder.ancestry(&span), ["turn", "invoke_agent"]);
}

#[tokio::test]
async fn a_call_cut_off_by_the_token_limit_is_a_truncated_span() {
    let recorder = Recorder::default();
    let _guard = recorder.install();
    let agent = agent(
        vec![
            FauxTurn::new(vec![echo_call("call_cut", "par")])
                .with_stop_reason(pi_tool::model::StopReason::Length),
        ],
        RunPolicy::default(),
    );
    agent.prompt("go").await.unwrap();
    let span = tool_span(&recorder, "call_cut");
    assert_eq!(span.field("error.type"), Some("truncated"));
    assert_eq!(recorder.ancestry(&span), ["turn", "invoke_agent"]);
}

#[tokio::test]
async fn a_failed_model_request_sets_error_type_on_its_chat_span() {
    let recorder = Recorder::default();
    let _guard = recorder.install();
    let agent = agent(
        vec![
            FauxTurn::text("")
                .with_stop_reason(pi_tool::model::StopReason::Error)
                .with_error_message("the provider is down"),
        ],
        RunPolicy::default(),
    );
    agent.prompt("go").await.unwrap();
    let chat = only(&recorder, "chat");
    assert_eq!(chat.field("error.type"), Some("error"));
    assert_eq!(chat.field("otel.status_code"), Some("ERROR"));
    assert_eq!(chat.field("gen_ai.response.finish_reasons"), Some("error"));
    assert_eq!(recorder.named("turn").len(), 1);
    assert!(recorder.named("execute_tool").is_empty());
}

/// A real provider over a real local HTTP server: the `chat` span carries the provider,
/// the model, the response id and model, the usage and the finish reason, and the API
/// key is nowhere in the trace.
#[cfg(feature = "openai-completions")]
#[tokio::test]
async fn a_provider_request_records_usage_in_its_chat_span() {
    use pi_tool::model::{Model, StreamOptions};
    use pi_tool::providers::Providers;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const KEY: &str = "sk-tracing-test-0123456789";
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        // The request: read until its JSON body is complete (one small request).
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        while !request.ends_with(b"}") {
            let n = socket.read(&mut buf).await.unwrap();
            assert!(n > 0, "the client closed early");
            request.extend_from_slice(&buf[..n]);
        }
        let events = [
            json!({"id": "chatcmpl-7", "model": "gpt-4o-mini-2024-07-18", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}, "finish_reason": null}]}),
            json!({"id": "chatcmpl-7", "model": "gpt-4o-mini-2024-07-18", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            json!({"id": "chatcmpl-7", "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 4}}}),
        ];
        let mut body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
        body.push_str("data: [DONE]\n\n");
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        socket.write_all(response.as_bytes()).await.unwrap();
        socket.shutdown().await.unwrap();
    });

    let mut model = Model::new("gpt-4o-mini", "openai-completions", "openai");
    model.base_url = base_url;
    let recorder = Recorder::default();
    let _guard = recorder.install();
    let agent = Agent::new(
        AgentOptions::new(Arc::new(Providers::new()))
            .model(model)
            .stream_options(StreamOptions {
                api_key: Some(KEY.into()),
                ..StreamOptions::default()
            }),
    );
    agent.prompt("Hello").await.unwrap();

    let chat = only(&recorder, "chat");
    assert_eq!(recorder.ancestry(&chat), ["turn", "invoke_agent"]);
    assert_eq!(chat.field("otel.name"), Some("chat gpt-4o-mini"));
    assert_eq!(chat.field("gen_ai.provider.name"), Some("openai"));
    assert_eq!(chat.field("gen_ai.request.model"), Some("gpt-4o-mini"));
    assert_eq!(chat.field("gen_ai.response.id"), Some("chatcmpl-7"));
    assert_eq!(
        chat.field("gen_ai.response.model"),
        Some("gpt-4o-mini-2024-07-18")
    );
    assert_eq!(chat.field("gen_ai.response.finish_reasons"), Some("stop"));
    // All 12 prompt tokens, as OpenTelemetry counts them (pi-ai's `input` is the 8 that
    // were not cached); the 4 cached ones are their own field too.
    assert_eq!(chat.field("gen_ai.usage.input_tokens"), Some("12"));
    assert_eq!(
        chat.field("gen_ai.usage.cache_read.input_tokens"),
        Some("4")
    );
    assert_eq!(chat.field("gen_ai.usage.output_tokens"), Some("3"));
    assert_eq!(chat.field("error.type"), None);
    let everything = format!("{:?}{:?}", recorder.spans(), recorder.events());
    assert!(!everything.contains(KEY));
}

/// Says the text back through a nested call of `slow_echo`.
#[pi_tool(name = "relay_echo", reaches = ["slow_echo"])]
async fn relay_echo(
    params: EchoParams,
    ctx: pi_tool::context::ExtensionContext,
) -> Result<String, ToolError> {
    let result = ctx
        .call_tool("slow_echo", json!({ "text": params.text }))
        .await?;
    Ok(result.text_content())
}

#[tokio::test]
async fn a_nested_call_s_span_is_a_child_of_the_outer_call_s() {
    let recorder = Recorder::default();
    let _guard = recorder.install();
    let pack = pi_tool::tool_pack![SlowEcho, RelayEcho];
    let agent = Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(vec![
            FauxTurn::new(vec![AssistantContent::tool_call(
                "call_1",
                "relay_echo",
                json!({ "text": "hi" }),
            )]),
            FauxTurn::text("done"),
        ])))
        .model(FauxModel::model())
        .tools(pack.tools()),
    );
    agent.prompt("go").await.unwrap();
    let outer = tool_span(&recorder, "call_1");
    let nested = tool_span(&recorder, "call_1/1");
    assert_eq!(nested.parent, Some(outer.index));
    assert_eq!(nested.field("gen_ai.tool.name"), Some("slow_echo"));
    assert!(nested.closed < outer.closed, "the nested call ends first");
}
