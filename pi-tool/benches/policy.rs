//! What issue 30's policy boundary costs a call, in wall time, side by side in one run
//! (bench/README.md, "Nested calls and concurrency classes"; the same shapes as the
//! callgrind counts of `examples/policy_count.rs`): one agent run over one parallel batch
//! of the faux model.
//!
//! * `direct/2000`: 2 000 calls of `echo`.
//! * `nested/1000`: 1 000 calls of `relay`, each making one nested call of `echo`: 2 000
//!   calls in all, as `direct/2000`, half of them nested.
//! * `cap/2000`: `direct/2000` under `max_concurrency(16)`, the single cap.
//! * `classes/2000`: `direct/2000` with `echo` in a class limited to 16 and a total of 16.
//!
//! ```sh
//! cargo bench -p pi-tool --bench policy
//! ```

use std::num::NonZeroUsize;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use pi_tool::agent::{Agent, AgentOptions, ConcurrencyLimits, RunPolicy};
use pi_tool::model::AssistantContent;
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{AgentTool, ConcurrencyClass, json};

#[path = "support/policy_tools.rs"]
mod policy_tools;
use policy_tools::{Echo, Relay, spec};

fn turn(tool: &str, calls: usize) -> FauxTurn {
    FauxTurn::new(
        (0..calls)
            .map(|i| AssistantContent::tool_call(format!("call_{i}"), tool, json!({"i": i})))
            .collect(),
    )
}

fn bench_policy(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("tokio runtime");
    let plain: Vec<Arc<dyn AgentTool>> = vec![
        Arc::new(Echo(spec("echo"))),
        Arc::new(Relay(spec("relay").reaches(["echo"]))),
    ];
    let classed: Vec<Arc<dyn AgentTool>> = vec![Arc::new(Echo(
        spec("echo").concurrency(ConcurrencyClass::new("c", 1)),
    ))];
    let cap = RunPolicy::new().max_concurrency(NonZeroUsize::new(16).expect("16 is not zero"));
    let classes = RunPolicy::new().concurrency(ConcurrencyLimits::new().class("c", 16).total(16));
    let cases = [
        ("direct/2000", turn("echo", 2_000), &plain, RunPolicy::new()),
        (
            "nested/1000",
            turn("relay", 1_000),
            &plain,
            RunPolicy::new(),
        ),
        ("cap/2000", turn("echo", 2_000), &plain, cap),
        ("classes/2000", turn("echo", 2_000), &classed, classes),
    ];
    let mut group = c.benchmark_group("policy");
    group.sample_size(20);
    // Every case executes 2 000 calls.
    group.throughput(Throughput::Elements(2_000));
    for (name, template, tools, policy) in cases {
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    let faux = FauxModel::new(vec![template.clone()]).without_recording();
                    Agent::new(
                        AgentOptions::new(Arc::new(faux))
                            .tools(tools.clone())
                            .policy(policy.clone()),
                    )
                },
                |agent| rt.block_on(async { agent.prompt("go").await }),
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, bench_policy);
criterion_main!(benches);
