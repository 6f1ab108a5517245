//! What issue 30's policy boundary costs a call, for callgrind (bench/README.md, "Nested
//! calls and concurrency classes"): one agent run over a batch of `CALLS` calls, in one of
//! five shapes.
//!
//! ```sh
//! cargo build --release -p pi-tool --example policy_count
//! valgrind --tool=callgrind target/release/examples/policy_count direct 2000
//! valgrind --tool=callgrind target/release/examples/policy_count nested 1000
//! valgrind --tool=callgrind target/release/examples/policy_count cap 2000
//! valgrind --tool=callgrind target/release/examples/policy_count classes 2000
//! valgrind --tool=callgrind target/release/examples/policy_count none 0
//! ```
//!
//! `direct N`: N calls of `echo`. `nested N`: N calls of `relay`, each making one nested
//! call of `echo` (2N calls in all, N of them nested), so `nested N` less `direct 2N`,
//! over N, is what a nested call costs beyond a direct one. `cap N` bounds the batch with
//! `max_concurrency(16)`; `classes N` puts `echo` in a class limited to 16 and the total to
//! 16: their difference over N is the class scheduler's cost per call against the single
//! cap. `none 0` is the run without calls, to subtract.

use std::num::NonZeroUsize;
use std::sync::Arc;

use pi_tool::agent::{Agent, AgentOptions, ConcurrencyLimits, RunPolicy};
use pi_tool::model::AssistantContent;
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{AgentTool, ConcurrencyClass, json};

#[path = "../benches/support/policy_tools.rs"]
mod policy_tools;
use policy_tools::{Echo, Relay, spec};

fn main() {
    let mut args = std::env::args().skip(1);
    let shape = args.next().unwrap_or_else(|| "direct".to_owned());
    let calls: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
    let mut echo = spec("echo");
    let mut policy = RunPolicy::new();
    let name = match shape.as_str() {
        "nested" => "relay",
        "cap" => {
            policy = policy.max_concurrency(NonZeroUsize::new(16).unwrap_or(NonZeroUsize::MIN));
            "echo"
        }
        "classes" => {
            echo = echo.concurrency(ConcurrencyClass::new("c", 1));
            policy = policy.concurrency(ConcurrencyLimits::new().class("c", 16).total(16));
            "echo"
        }
        _ => "echo",
    };
    let tools: Vec<Arc<dyn AgentTool>> = vec![
        Arc::new(Echo(echo)),
        Arc::new(Relay(spec("relay").reaches(["echo"]))),
    ];
    let turn = FauxTurn::new(
        (0..calls)
            .map(|i| AssistantContent::tool_call(format!("call_{i}"), name, json!({"i": i})))
            .collect(),
    );
    let faux = FauxModel::new(vec![turn]).without_recording();
    let agent = Agent::new(
        AgentOptions::new(Arc::new(faux))
            .tools(tools)
            .policy(policy),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    match runtime {
        Ok(runtime) => {
            let _ = runtime.block_on(agent.prompt("go"));
        }
        Err(error) => eprintln!("no runtime: {error}"),
    }
}
