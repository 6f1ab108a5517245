//! Per-call cost of one tool batch through the whole agent loop (faux model), without
//! criterion: used by `bench/compare-with-pi.mjs` for the side-by-side with Pi.
//!
//! `cargo run --release -p pi-tool --example batch_timing -- [CALLS] [ROUNDS]`
//! prints one JSON line: `{"calls", "rounds", "parallelNsPerCall", "sequentialNsPerCall"}`
//! (the median over the rounds).

use std::sync::Arc;
use std::time::Instant;

use pi_tool::ToolInvocation;
use pi_tool::agent::{Agent, AgentOptions};
use pi_tool::model::AssistantContent;
use pi_tool::schema::ToolSchema;
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{
    AgentTool, JsonToolResult, ToolError, ToolExecutionMode, ToolSpec, async_trait, json,
};

struct Echo(ToolSpec);

#[async_trait]
impl AgentTool for Echo {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let _tool_call_id = call.id;
        let _params = call.params;
        let _signal = call.signal;
        let _on_update = call.on_update;
        Ok(JsonToolResult::text("ok", None))
    }
}

fn turn(calls: usize) -> FauxTurn {
    FauxTurn::new(
        (0..calls)
            .map(|i| AssistantContent::tool_call(format!("call_{i}"), "echo", json!({"i": i})))
            .collect(),
    )
}

async fn run(calls: usize, mode: ToolExecutionMode, template: &FauxTurn) -> f64 {
    let tool: Arc<dyn AgentTool> = Arc::new(Echo(ToolSpec::new(
        "echo",
        "echo",
        Arc::new(ToolSchema::from_json(
            json!({"type": "object", "properties": {"i": {"type": "number"}}}),
        )),
    )));
    let faux = FauxModel::new(vec![template.clone()]).without_recording();
    let agent = Agent::new(
        AgentOptions::new(Arc::new(faux))
            .tools(vec![tool])
            .tool_execution(mode),
    );
    if std::env::var_os("PHASES").is_some() {
        let t0 = Instant::now();
        agent.subscribe(move |e, _| {
            let name = e.name();
            let id = e.tool_call_id().unwrap_or("");
            let edge = id == "call_0"
                || id.ends_with("_99") && id.len() == 7
                || id == "call_999"
                || id == "call_9999";
            if edge
                || matches!(
                    name,
                    "message_end" | "turn_end" | "agent_end" | "turn_start"
                ) && e.message_role() != Some("toolResult")
            {
                eprintln!(
                    "{:>10.3}ms {name} {} {id}",
                    t0.elapsed().as_secs_f64() * 1000.0,
                    e.message_role().unwrap_or("")
                );
            }
            Ok(())
        });
    } else {
        agent.subscribe(|_, _| Ok(()));
    }
    let started = Instant::now();
    let _ = agent.prompt("go").await;
    started.elapsed().as_nanos() as f64 / calls as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let calls: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let rounds: usize = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(30)
        .max(1);
    let template = turn(calls);
    // Warm-up.
    run(calls, ToolExecutionMode::Parallel, &template).await;
    let mut parallel = Vec::new();
    let mut sequential = Vec::new();
    for _ in 0..rounds {
        parallel.push(run(calls, ToolExecutionMode::Parallel, &template).await);
        sequential.push(run(calls, ToolExecutionMode::Sequential, &template).await);
    }
    println!(
        "{}",
        json!({
            "calls": calls,
            "rounds": rounds,
            "parallelNsPerCall": median(parallel),
            "sequentialNsPerCall": median(sequential),
        })
    );
}
