//! Per-call cost of a tool batch through the whole agent loop with the faux model:
//! a parallel batch of 100 / 1 000 / 10 000 trivial calls (the cost per call must stay
//! flat), and a sequential batch of 1 000.

use std::sync::Arc;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
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

fn echo() -> Arc<dyn AgentTool> {
    Arc::new(Echo(ToolSpec::new(
        "echo",
        "echo",
        Arc::new(ToolSchema::from_json(
            json!({"type": "object", "properties": {"i": {"type": "number"}}}),
        )),
    )))
}

fn turn(calls: usize) -> FauxTurn {
    FauxTurn::new(
        (0..calls)
            .map(|i| AssistantContent::tool_call(format!("call_{i}"), "echo", json!({"i": i})))
            .collect(),
    )
}

fn bench_batches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("tokio runtime");
    let tool = echo();
    let cases = [
        ("parallel", ToolExecutionMode::Parallel, 100),
        ("parallel", ToolExecutionMode::Parallel, 1_000),
        ("parallel", ToolExecutionMode::Parallel, 10_000),
        ("sequential", ToolExecutionMode::Sequential, 1_000),
    ];
    let mut group = c.benchmark_group("agent_batch");
    group.sample_size(20);
    for (name, mode, calls) in cases {
        let template = turn(calls);
        group.throughput(Throughput::Elements(calls as u64));
        group.bench_function(format!("{name}/{calls}"), |b| {
            b.iter_batched(
                || {
                    let faux = FauxModel::new(vec![template.clone()]).without_recording();
                    let agent = Agent::new(
                        AgentOptions::new(Arc::new(faux))
                            .tools(vec![tool.clone()])
                            .tool_execution(mode),
                    );
                    agent.subscribe(|_, _| Ok(()));
                    agent
                },
                |agent| rt.block_on(async { agent.prompt("go").await }),
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, bench_batches);
criterion_main!(benches);
