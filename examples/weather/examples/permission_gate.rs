//! Registration path 3: an extension (`WeatherGate`) that registers `get_weather` and
//! asks before every call. Runs the same prompt three times: without a UI, with a UI
//! that denies, with a UI that approves.
//! Run: `cargo run -p weather-example --example permission_gate`.

use std::sync::Arc;

use pi_tool::context::{ExtensionUi, Mode};
use pi_tool::model::AssistantContent;
use pi_tool::session::AgentSession;
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{async_trait, json};
use weather_example::gate::WeatherGate;

/// A terminal stand-in that always gives the same answer.
struct FixedAnswer(bool);

#[async_trait]
impl ExtensionUi for FixedAnswer {
    async fn confirm(&self, title: &str, message: &str) -> bool {
        println!(
            "  [ui] {title} {message} -> {}",
            if self.0 { "yes" } else { "no" }
        );
        self.0
    }
}

async fn run(label: &str, ui: Option<bool>) {
    let model = FauxModel::new(vec![FauxTurn::new(vec![AssistantContent::tool_call(
        "call-1",
        "get_weather",
        json!({"city": "Paris"}),
    )])]);
    let mut builder = AgentSession::builder(Arc::new(model)).extension(WeatherGate);
    if let Some(answer) = ui {
        builder = builder.mode(Mode::Tui).ui(Arc::new(FixedAnswer(answer)));
    }
    let session = match builder.build() {
        Ok(session) => session,
        Err(error) => {
            eprintln!("session refused to build: {error}");
            return;
        }
    };
    println!("{label}:");
    if let Err(error) = session.prompt("What's the weather in Paris?").await {
        eprintln!("prompt failed: {error}");
        return;
    }
    // `prompt` is `Ok` once the run ended, even after a failed model call (Pi's semantics).
    if let Err(failed) = session.ensure_ok() {
        eprintln!("{failed}");
        return;
    }
    for message in session.agent().messages() {
        if let Some(r) = message.as_tool_result() {
            let text: String = r.content.iter().filter_map(|c| c.as_text()).collect();
            println!("  toolResult (error: {}): {text}", r.is_error);
        }
    }
    session.dispose();
}

#[tokio::main]
async fn main() {
    run("no UI", None).await;
    run("UI denies", Some(false)).await;
    run("UI approves", Some(true)).await;
}
