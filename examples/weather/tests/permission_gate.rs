//! The permission gate with a scripted UI: no UI, the user denies, the user approves.

use std::sync::{Arc, Mutex};

use pi_tool::context::{ExtensionUi, Mode};
use pi_tool::model::AssistantContent;
use pi_tool::session::AgentSession;
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{async_trait, json};
use weather_example::gate::{NEEDS_APPROVAL, USER_DENIED, WeatherGate};

/// A UI that answers every confirmation with a fixed answer and records the questions.
struct ScriptedUi {
    answer: bool,
    asked: Mutex<Vec<(String, String)>>,
}

#[async_trait]
impl ExtensionUi for ScriptedUi {
    async fn confirm(&self, title: &str, message: &str) -> bool {
        self.asked
            .lock()
            .unwrap()
            .push((title.to_owned(), message.to_owned()));
        self.answer
    }
}

/// Runs one prompt where the model calls get_weather for Paris; returns the result
/// text, whether it is an error, and the questions the UI was asked.
async fn run(ui: Option<bool>) -> (String, bool, Vec<(String, String)>) {
    let model = FauxModel::new(vec![FauxTurn::new(vec![AssistantContent::tool_call(
        "call-1",
        "get_weather",
        json!({"city": "Paris"}),
    )])]);
    let mut builder = AgentSession::builder(Arc::new(model)).extension(WeatherGate);
    let scripted = ui.map(|answer| {
        Arc::new(ScriptedUi {
            answer,
            asked: Mutex::default(),
        })
    });
    if let Some(ui) = &scripted {
        builder = builder.mode(Mode::Tui).ui(ui.clone());
    }
    let session = builder.build().unwrap();
    assert_eq!(session.active_tool_names(), ["get_weather"]);
    session
        .prompt("What's the weather in Paris?")
        .await
        .unwrap();
    let messages = session.agent().messages();
    let result = messages
        .iter()
        .find_map(|m| m.as_tool_result())
        .expect("a tool result");
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<String>();
    let asked = scripted
        .map(|ui| ui.asked.lock().unwrap().clone())
        .unwrap_or_default();
    (text, result.is_error, asked)
}

#[tokio::test]
async fn without_a_ui_the_call_is_blocked() {
    let (text, is_error, _) = run(None).await;
    assert_eq!(text, NEEDS_APPROVAL);
    assert!(is_error);
}

#[tokio::test]
async fn a_denial_blocks_the_call() {
    let (text, is_error, asked) = run(Some(false)).await;
    assert_eq!(text, USER_DENIED);
    assert!(is_error);
    assert_eq!(
        asked,
        [(
            "Run get_weather?".to_owned(),
            "Look up the demo weather for Paris?".to_owned()
        )]
    );
}

#[tokio::test]
async fn an_approval_runs_the_tool() {
    let (text, is_error, asked) = run(Some(true)).await;
    assert_eq!(text, "Paris: 18 degrees celsius");
    assert!(!is_error);
    assert_eq!(asked.len(), 1);
}
