//! Per-call cost of the session layer: a parallel batch of 1 000 trivial calls through
//! an `AgentSession` without extension handlers, and with two `tool_call` handlers and
//! one `tool_result` handler (the chains, a fresh context per execute and per emission).
//! Compare with `agent_batch/parallel/1000` for the session's overhead.

use std::sync::Arc;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use pi_tool::AgentTool;
use pi_tool::ToolInvocation;
use pi_tool::context::ExtensionContext;
use pi_tool::model::AssistantContent;
use pi_tool::schema::ToolSchema;
use pi_tool::session::{
    AgentSession, ExtensionApi, FnExtension, SessionError, ToolCallDecision, ToolCallEvent,
    ToolResultEvent, ToolResultPatch,
};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{JsonToolResult, ToolError, ToolSpec, async_trait, json};

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
        let _ctx = call.context.unwrap_or_else(ExtensionContext::detached);
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

fn handlers(api: &ExtensionApi) -> Result<(), SessionError> {
    api.on_tool_call(|e: &mut ToolCallEvent, _: &ExtensionContext| {
        if e.input.get("i").is_none() {
            return Err(ToolError::new("missing i"));
        }
        Ok(ToolCallDecision::Allow)
    })?;
    api.on_tool_call(|_: &mut ToolCallEvent, ctx: &ExtensionContext| {
        let _ = ctx.has_ui();
        Ok(ToolCallDecision::Allow)
    })?;
    api.on_tool_result(|_: &ToolResultEvent, _: &ExtensionContext| Ok(ToolResultPatch::default()))
}

fn bench_session(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("tokio runtime");
    let calls = 1_000;
    let template = turn(calls);
    let mut group = c.benchmark_group("session_batch");
    group.sample_size(20);
    group.throughput(Throughput::Elements(calls as u64));
    for with_handlers in [false, true] {
        let name = if with_handlers {
            "handlers"
        } else {
            "no_handlers"
        };
        group.bench_function(format!("{name}/{calls}"), |b| {
            b.iter_batched(
                || {
                    let faux = FauxModel::new(vec![template.clone()]).without_recording();
                    let mut builder = AgentSession::builder(Arc::new(faux)).custom_tool(echo());
                    if with_handlers {
                        builder = builder.extension(FnExtension::new("bench", handlers));
                    }
                    builder.build().expect("session")
                },
                |session| rt.block_on(async { session.prompt("go").await }),
                BatchSize::PerIteration,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, bench_session);
criterion_main!(benches);
