//! The real-LLM end-to-end harness shared by `examples/weather/tests/local_llm.rs` (the
//! `#[pi_tool]` tool in process) and `examples/weather-mcp/tests/local_llm_mcp.rs` (the
//! same tool served by `weather-mcp` and consumed over MCP): an `Agent` against
//! SmolLM2-135M-Instruct under llama.cpp's `llama-server` on 127.0.0.1, on each of
//! pi-ai's three wire APIs.
//!
//! Without `PI_TOOL_LOCAL_LLM` the tests skip loudly, except under CI (`CI` set), where
//! they fail: `.ci/run` starts the server. The assertions are about structure (a call to
//! `get_weather` with a city, the tool's result, a text answer, an abort's stop reason),
//! never about the model's words.

#[path = "../../src/small_model.rs"]
mod small_model;

use std::future::Future;
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard, Once};
use std::time::{Duration, Instant};

use pi_tool::AgentTool;
use pi_tool::agent::{Agent, AgentEvent, AgentOptions};
use pi_tool::model::{ApiKey, AssistantMessageEvent, Message, Model, StopReason, StreamOptions};
use pi_tool::providers::Providers;

const SERVER_ENV: &str = "PI_TOOL_LOCAL_LLM";

/// A whole run (two model calls and the 200 ms lookup) takes about 2 s warm; the bound
/// only keeps a wedged server from hanging the suite.
const RUN_BOUND: Duration = Duration::from_secs(120);

/// How long an aborted run may take to end after the abort.
const ABORT_BOUND: Duration = Duration::from_secs(5);

/// The server's origin, or `None` (after a loud message) when no server is configured.
fn server() -> Option<String> {
    match std::env::var(SERVER_ENV) {
        Ok(origin) if !origin.trim().is_empty() => {
            Some(origin.trim().trim_end_matches('/').to_owned())
        }
        _ if std::env::var_os("CI").is_some() => panic!(
            "{SERVER_ENV} is not set under CI: run `export {SERVER_ENV}=$(scripts/local-llm/local-llm start)` \
             before the tests (.ci/run does)"
        ),
        _ => {
            // Once per test binary, and past libtest's capture (which takes `eprintln!`
            // output of a passing test): a skip must be seen.
            static BANNER: Once = Once::new();
            BANNER.call_once(|| {
                let _ = writeln!(
                    std::io::stderr(),
                    "\n\
                     ###################################################################\n\
                     ## SKIPPED: the real-LLM end-to-end tests (examples/weather/tests/local_llm.rs,\n\
                     ## examples/weather-mcp/tests/local_llm_mcp.rs)\n\
                     ## need a local llama-server. Start it (the first time builds it, ~15 min):\n\
                     ##     export {SERVER_ENV}=$(scripts/local-llm/local-llm start)\n\
                     ## then run the tests again. Under CI (CI set) they fail instead.\n\
                     ###################################################################\n"
                );
            });
            None
        }
    }
}

/// llama-server has one slot (`-np 1`): one run at a time keeps each run's timing its own.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static SERVER: Mutex<()> = Mutex::new(());
    SERVER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// pi-ai's Anthropic client appends `/v1/messages` to the base URL; the OpenAI ones
/// append `/chat/completions` and `/responses`.
fn base_url(api: &str, origin: &str) -> String {
    if api == "anthropic-messages" {
        origin.to_owned()
    } else {
        format!("{origin}/v1")
    }
}

/// An agent on the local model with the recipe of `small_model` and `tools`.
fn agent(api: &str, origin: &str, tools: Vec<Arc<dyn AgentTool>>) -> Agent {
    let mut model = Model::custom("llama.cpp", api, base_url(api, origin), "smol");
    // Not the server's `-c 4096`: pi-ai asks for `context_window - input - 4096` output
    // tokens at most, which a 4096 window turns into one.
    model.context_window = 32_768;
    model.max_tokens = 128;
    let mut options =
        AgentOptions::new(small_model::tool_choice_by_turn(Arc::new(Providers::new())))
            .model(model.clone())
            .system_prompt(small_model::SYSTEM_PROMPT)
            .tools(tools)
            .stream_options(StreamOptions {
                temperature: Some(0.0),
                api_key: Some(ApiKey::new("none")),
                ..StreamOptions::default()
            });
    options.initial_state.messages = small_model::example_exchange(&model);
    Agent::new(options)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn describe(messages: &[Message]) -> String {
    messages
        .iter()
        .map(|m| serde_json::to_string(m).unwrap_or_else(|e| e.to_string()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Question, tool call, the Rust tool's result, text answer. `tools` gives the agent's
/// tools (one of them `get_weather`) and what must live as long as the run (an MCP
/// connection, say).
pub fn weather_round_trip<F, Fut, Keep>(api: &str, tools: F)
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = (Vec<Arc<dyn AgentTool>>, Keep)>,
{
    let Some(origin) = server() else { return };
    let _slot = one_at_a_time();
    runtime().block_on(async {
        let (tools, _keep) = tools().await;
        let agent = agent(api, &origin, tools);
        let history = agent.messages().len();
        let executed = Arc::new(Mutex::new(Vec::<(String, bool)>::new()));
        let seen = executed.clone();
        agent.subscribe(move |event, _signal| {
            if let AgentEvent::ToolExecutionEnd {
                tool_call_id,
                is_error,
                ..
            } = event
            {
                seen.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((tool_call_id.to_string(), *is_error));
            }
            Ok(())
        });

        let started = Instant::now();
        tokio::time::timeout(RUN_BOUND, agent.prompt("What is the weather in Tokyo?"))
            .await
            .unwrap_or_else(|_| panic!("{api}: the run did not end within {RUN_BOUND:?}"))
            .expect("the agent accepts the prompt");
        let elapsed = started.elapsed();

        let all = agent.messages();
        let run = &all[history..];
        let transcript = describe(run);
        assert_eq!(
            agent.error_message(),
            None,
            "{api}: the run failed:\n{transcript}"
        );
        assert_eq!(
            run.iter().map(Message::role).collect::<Vec<_>>(),
            ["user", "assistant", "toolResult", "assistant"],
            "{api}: expected question, tool call, result, answer:\n{transcript}"
        );

        // The model called get_weather with a city.
        let asked = run[1].as_assistant().expect("an assistant message");
        assert_eq!(
            asked.stop_reason,
            StopReason::ToolUse,
            "{api}:\n{transcript}"
        );
        assert_eq!(asked.api, api);
        let calls: Vec<_> = asked.tool_calls().collect();
        assert_eq!(calls.len(), 1, "{api}: one tool call:\n{transcript}");
        let call = calls[0];
        assert_eq!(&*call.name, "get_weather", "{api}:\n{transcript}");
        assert!(!call.id.is_empty(), "{api}: the call has an id");
        let city = call.arguments.get("city").and_then(|c| c.as_str());
        assert!(
            city.is_some_and(|c| !c.trim().is_empty()),
            "{api}: get_weather needs a city, got {}",
            call.arguments
        );

        // The Rust tool ran on that call, and its result went back to the model.
        let result = run[2].as_tool_result().expect("a tool result");
        assert_eq!(
            result.tool_call_id, call.id,
            "{api}: the result answers the call"
        );
        let executed = executed.lock().unwrap_or_else(|p| p.into_inner()).clone();
        assert_eq!(
            executed,
            [(call.id.to_string(), result.is_error)],
            "{api}: the tool ran once, on the model's call"
        );
        assert!(
            !result.content.is_empty(),
            "{api}: the tool's result has content"
        );

        // Then the model answered in text.
        let answer = run[3].as_assistant().expect("an assistant message");
        assert_eq!(answer.stop_reason, StopReason::Stop, "{api}:\n{transcript}");
        assert_eq!(answer.tool_calls().count(), 0, "{api}:\n{transcript}");
        assert!(
            !answer.text().trim().is_empty(),
            "{api}: the answer has text:\n{transcript}"
        );
        assert!(
            asked.usage.output > 0 && answer.usage.output > 0,
            "{api}: the server reported output tokens:\n{transcript}"
        );

        eprintln!(
            "local_llm {api}: get_weather({}) -> {:?} -> {:?} in {elapsed:.2?}",
            call.arguments,
            result
                .content
                .first()
                .and_then(|c| c.as_text())
                .unwrap_or_default(),
            answer.text()
        );
    });
}

/// An abort at the first streamed delta ends the message as aborted, and the run ends
/// promptly: the HTTP request is dropped, not read to its end.
#[allow(dead_code, reason = "the MCP test binary runs the round trip only")]
pub fn abort_mid_stream(api: &str, tools: Vec<Arc<dyn AgentTool>>) {
    let Some(origin) = server() else { return };
    let _slot = one_at_a_time();
    runtime().block_on(async {
        let agent = agent(api, &origin, tools);
        let history = agent.messages().len();
        let abort = agent.abort_handle();
        let aborted_at = Arc::new(Mutex::new(None::<(Instant, &'static str)>));
        let mark = aborted_at.clone();
        agent.subscribe(move |event, _signal| {
            if let AgentEvent::MessageUpdate {
                assistant_message_event:
                    delta @ (AssistantMessageEvent::TextDelta { .. }
                    | AssistantMessageEvent::ToolcallDelta { .. }),
                ..
            } = event
            {
                let mut mark = mark.lock().unwrap_or_else(|p| p.into_inner());
                if mark.is_none() {
                    *mark = Some((Instant::now(), delta.name()));
                    abort.abort();
                }
            }
            Ok(())
        });

        tokio::time::timeout(RUN_BOUND, agent.prompt("What is the weather in Tokyo?"))
            .await
            .unwrap_or_else(|_| panic!("{api}: the run did not end within {RUN_BOUND:?}"))
            .expect("the agent accepts the prompt");
        let ended = Instant::now();

        let all = agent.messages();
        let run = &all[history..];
        let transcript = describe(run);
        let Some((at, on)) = *aborted_at.lock().unwrap_or_else(|p| p.into_inner()) else {
            panic!("{api}: the stream sent no delta to abort on:\n{transcript}");
        };
        assert_eq!(
            run.iter().map(Message::role).collect::<Vec<_>>(),
            ["user", "assistant"],
            "{api}: an aborted message runs no tool:\n{transcript}"
        );
        let message = run[1].as_assistant().expect("an assistant message");
        assert_eq!(
            message.stop_reason,
            StopReason::Aborted,
            "{api}:\n{transcript}"
        );
        assert!(
            message.error_message.is_some(),
            "{api}: an aborted message says why:\n{transcript}"
        );
        let after_abort = ended.duration_since(at);
        assert!(
            after_abort < ABORT_BOUND,
            "{api}: the run took {after_abort:?} to end after the abort"
        );
        eprintln!(
            "local_llm {api}: aborted on the first {on}, run ended {after_abort:.2?} later ({:?})",
            message.error_message.as_deref().unwrap_or_default()
        );
    });
}
