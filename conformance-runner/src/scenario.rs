//! Running one scenario file (FORMAT.md §3.8–§3.10, §5.6).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_tool::agent::{Agent, AgentEvent, AgentOptions, LoopConfig, run_agent_loop};
use pi_tool::model::{Context, Message, StopReason};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{AbortController, AgentTool, ToolExecutionMode};
use serde_json::{Map, Value, json};

use crate::record::{Recorder, normalise_message, summarise_message};
use crate::tools::{Aborter, AfterRules, BeforeRules, DataTool, Host};

/// Tags whose scenarios pi-tool reports as skipped (FORMAT.md §9), with the reason.
pub const SKIPPED_TAGS: &[(&str, &str)] = &[
    (
        "untyped-result",
        "tool results outside the typed result shape cannot be expressed by JsonToolResult",
    ),
    (
        "listener-throws",
        "a failing listener does not fail the run in pi-tool (docs/differences-from-pi.md)",
    ),
];

/// How a scenario turned out before comparison.
pub enum Outcome {
    /// The normalised output (canonical JSON text).
    Output(String),
    /// Not run, with the reason.
    Skipped(String),
}

/// Why a scenario is skipped, if it is.
pub fn skip_reason(scenario: &Value) -> Option<String> {
    let tags = scenario.get("tags").and_then(Value::as_array);
    for tag in tags.into_iter().flatten().filter_map(Value::as_str) {
        if let Some((_, reason)) = SKIPPED_TAGS.iter().find(|(t, _)| *t == tag) {
            return Some(format!("tag {tag}: {reason}"));
        }
    }
    match scenario.get("driver").and_then(Value::as_str) {
        Some("agent") | Some("loop") | Some("session") => None,
        other => Some(format!("unknown driver {other:?}")),
    }
}

struct Trigger {
    on: Value,
    action: String,
    message: String,
    seen: u64,
    fired: bool,
}

fn event_matches(on: &Value, event: &AgentEvent) -> bool {
    if on.get("type").and_then(Value::as_str) != Some(event.name()) {
        return false;
    }
    if let Some(id) = on.get("toolCallId")
        && id.as_str() != event.tool_call_id()
    {
        return false;
    }
    if let Some(role) = on.get("role")
        && role.as_str() != event.message_role()
    {
        return false;
    }
    true
}

/// The one listener of §3.8: records the event, then fires matching triggers.
/// Returns the message of a `throw` trigger.
fn on_event(
    recorder: &Recorder,
    host: &Host,
    triggers: &Mutex<Vec<Trigger>>,
    event: &AgentEvent,
) -> Option<String> {
    recorder.event(event);
    let mut triggers = triggers.lock().unwrap_or_else(|p| p.into_inner());
    for t in triggers.iter_mut() {
        if t.fired || !event_matches(&t.on, event) {
            continue;
        }
        t.seen += 1;
        let nth = t.on.get("nth").and_then(Value::as_u64).unwrap_or(1);
        if t.seen == nth {
            t.fired = true;
            if t.action == "abort" {
                host.abort("trigger");
            } else {
                return Some(t.message.clone());
            }
        }
    }
    None
}

/// Runs an agent/loop scenario and returns its normalised output, or why it is skipped.
pub async fn run_scenario(scenario: &Value) -> Outcome {
    if let Some(reason) = skip_reason(scenario) {
        return Outcome::Skipped(reason);
    }
    let output = if scenario.get("driver").and_then(Value::as_str) == Some("session") {
        crate::session::run_session_layer(scenario).await
    } else {
        run_agent_layer(scenario).await
    };
    Outcome::Output(crate::canon::canonical_json(&output))
}

async fn run_agent_layer(s: &Value) -> Value {
    let id = s.get("id").cloned().unwrap_or(Value::Null);
    let host = Arc::new(Host::default());
    let recorder = host.recorder.clone();
    let config = s.get("config").cloned().unwrap_or_else(|| json!({}));
    let system_prompt = config
        .get("systemPrompt")
        .and_then(Value::as_str)
        .unwrap_or("You are a test assistant.")
        .to_owned();
    let prompt = config
        .get("prompt")
        .and_then(Value::as_str)
        .unwrap_or("What's the weather?")
        .to_owned();
    let tool_execution = config
        .get("toolExecution")
        .and_then(Value::as_str)
        .and_then(|m| m.parse::<ToolExecutionMode>().ok());
    let tools: Vec<Arc<dyn AgentTool>> = s
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|def| Arc::new(DataTool::new(def.clone(), host.clone())) as Arc<dyn AgentTool>)
        .collect();
    let faux = scripted_model(s, &recorder, |prompt| Value::from(prompt));
    let hooks = s.get("hooks");
    let rules = |key: &str| {
        hooks
            .and_then(|h| h.get(key))
            .and_then(Value::as_array)
            .cloned()
    };
    let before = rules("beforeToolCall").map(|rules| {
        Arc::new(BeforeRules {
            rules,
            host: host.clone(),
        })
    });
    let after = rules("afterToolCall").map(|rules| {
        Arc::new(AfterRules {
            rules,
            host: host.clone(),
        })
    });
    let triggers: Arc<Mutex<Vec<Trigger>>> = Arc::new(Mutex::new(
        s.get("triggers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|t| Trigger {
                on: t.get("on").cloned().unwrap_or(Value::Null),
                action: t
                    .get("action")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                message: t
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                seen: 0,
                fired: false,
            })
            .collect(),
    ));

    let mut final_ = Map::new();
    let transcript: Vec<Message>;
    if s.get("driver").and_then(Value::as_str) == Some("loop") {
        let controller = AbortController::new();
        host.set_aborter(Aborter::Controller(controller.clone()));
        let mut loop_config = LoopConfig::new(FauxModel::model());
        if let Some(mode) = tool_execution {
            loop_config.policy.tool_execution = mode;
        }
        loop_config.policy.before_tool_call = before.map(|b| b as _);
        loop_config.policy.after_tool_call = after.map(|a| a as _);
        let context = Context {
            system_prompt,
            messages: Vec::new(),
            tools,
        };
        let (r, h, t) = (recorder.clone(), host.clone(), triggers.clone());
        let mut sink = move |event: AgentEvent| {
            if let Some(message) = on_event(&r, &h, &t, &event) {
                tracing::warn!("listener throws: {message}");
            }
        };
        let signal = controller.signal();
        transcript = run_agent_loop(
            vec![Message::user_text(prompt)],
            context,
            &loop_config,
            &mut sink,
            &signal,
            &faux,
        )
        .await;
    } else {
        let mut options = AgentOptions::new(Arc::new(faux))
            .system_prompt(system_prompt)
            .model(FauxModel::model())
            .tools(tools);
        if let Some(mode) = tool_execution {
            options = options.tool_execution(mode);
        }
        if let Some(b) = before {
            options = options.before_tool_call(b);
        }
        if let Some(a) = after {
            options = options.after_tool_call(a);
        }
        let agent = Agent::new(options);
        host.set_aborter(Aborter::Agent(agent.abort_handle()));
        let (r, h, t) = (recorder.clone(), host.clone(), triggers.clone());
        agent.subscribe(move |event, _signal| match on_event(&r, &h, &t, event) {
            Some(message) => Err(message.into()),
            None => Ok(()),
        });
        if let Err(error) = agent.prompt(prompt).await {
            final_.insert("promptError".to_owned(), Value::String(error.to_string()));
        }
        transcript = agent.messages();
        if let Some(error) = agent.error_message() {
            final_.insert("errorMessage".to_owned(), Value::String(error));
        }
    }
    host.wait_late_timers().await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    final_.insert(
        "messages".to_owned(),
        Value::Array(transcript.iter().map(summarise_message).collect()),
    );
    let tool_results: Vec<Value> = transcript
        .iter()
        .filter(|m| matches!(m, Message::ToolResult(_)))
        .map(normalise_message)
        .collect();
    json!({
        "id": id,
        "events": recorder.entries(),
        "toolResults": tool_results,
        "final": Value::Object(final_),
    })
}

/// The faux model of a scenario's `model` script (FORMAT.md §4), recording each request
/// as `harness:model_call` with the system prompt shown through `prompt_view`.
///
/// A turn that cannot be read becomes an `error` turn saying why, at its own index, so
/// that a broken scenario fails its comparison instead of silently shifting the script.
pub(crate) fn scripted_model(
    s: &Value,
    recorder: &Recorder,
    prompt_view: fn(&str) -> Value,
) -> FauxModel {
    let turns: Vec<FauxTurn> = s
        .get("model")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(index, turn)| {
            serde_json::from_value(turn.clone()).unwrap_or_else(|error| {
                FauxTurn::new(Vec::new())
                    .with_stop_reason(StopReason::Error)
                    .with_error_message(format!("unreadable scripted turn {index}: {error}"))
            })
        })
        .collect();
    let recorder = recorder.clone();
    FauxModel::new(turns).on_request(move |request| {
        recorder.harness(
            "model_call",
            json!({
                "index": request.index,
                "aborted": request.aborted,
                "systemPrompt": prompt_view(&request.system_prompt),
                "tools": request.tools,
                "messages": request.messages.iter().map(summarise_message).collect::<Vec<_>>(),
            }),
        );
    })
}
