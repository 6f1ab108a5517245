//! Durable runs, measured (bench/README.md, "Durable runs"):
//!
//! - `run/no_approval`: one read-only call through the agent, without a store and with
//!   one; a run that asks nothing never reaches the store (tests/durable_agent.rs counts
//!   its queries: zero), so the two should be one figure.
//! - `suspend_resume/{sqlite,postgres}`: one approval cycle, as a host runs it: a run
//!   that suspends at a destructive call, the decision, a fresh agent that resumes and
//!   finishes. Its time minus `run/no_approval` is the overhead per approval.
//! - `later_batch/{sqlite,postgres}`: the same cycle whose resumed run calls a read-only
//!   tool in its next turn: that batch saves a checkpoint and marks its call (issue 31).
//!   Its time minus `suspend_resume` is the cost of one later batch.
//! - `audit_append/{sqlite,postgres}`: one record appended to the hash chain.
//!
//! The PostgreSQL rows run when `PI_TOOL_POSTGRES_URL` names a server
//! (`scripts/postgres/pg-test start`).

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use pi_tool::agent::{Agent, AgentOptions, ApprovalPolicy, DurableRuns, RunOutcome};
use pi_tool::durable::{AuditEvent, AuditKind, Decision, DurableStore, Verdict, now_ms};
use pi_tool::model::{AssistantContent, Message};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{IntoAgentTool, ToolError, json, pi_tool};

#[pi_tool::params]
struct PayParams {
    /// Who is paid.
    to: String,
}

/// Pays.
#[pi_tool(destructive)]
async fn pay(p: PayParams) -> Result<String, ToolError> {
    Ok(format!("paid {}", p.to))
}

/// Reads.
#[pi_tool(read_only)]
async fn read() -> Result<String, ToolError> {
    Ok("read".to_owned())
}

fn agent(store: Option<Arc<dyn DurableStore>>, turns: Vec<FauxTurn>) -> Agent {
    let mut options = AgentOptions::new(Arc::new(FauxModel::new(turns).without_recording()))
        .tools(vec![Pay.into_agent_tool(), Read.into_agent_tool()])
        .before_tool_call(Arc::new(ApprovalPolicy::new().defer()));
    if let Some(store) = store {
        options = options.durable(DurableRuns::new(store));
    }
    Agent::new(options)
}

fn turn(name: &str, args: serde_json::Value) -> FauxTurn {
    FauxTurn::new(vec![AssistantContent::tool_call("call-1", name, args)])
}

/// One approval cycle; panics if the run does not suspend and then finish. With
/// `later`, the resumed run calls `read` in its next turn before it answers.
async fn cycle(store: &Arc<dyn DurableStore>, run: &str, later: bool) {
    let first = agent(Some(store.clone()), vec![turn("pay", json!({"to": "bob"}))]);
    let outcome = first
        .run(run, vec![Message::user_text("pay")])
        .await
        .unwrap();
    let RunOutcome::Suspended(s) = outcome else {
        panic!("not suspended")
    };
    let d = Decision::new(run, "call-1", &s.pending[0].digest, Verdict::Approve);
    store.decide(&d, &d.audit_event()).await.unwrap();
    let mut turns = vec![FauxTurn::text("done")];
    if later {
        let read = AssistantContent::tool_call("call-2", "read", json!({}));
        turns.insert(0, FauxTurn::new(vec![read]));
    }
    let second = agent(Some(store.clone()), turns);
    let outcome = second.resume_run(run).await.unwrap();
    assert!(matches!(outcome, RunOutcome::Finished { .. }));
}

fn stores(rt: &tokio::runtime::Runtime) -> Vec<(&'static str, Arc<dyn DurableStore>)> {
    let dir = std::env::temp_dir().join(format!("pi-tool-store-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut stores = vec![(
        "sqlite",
        rt.block_on(pi_tool_store::open(&format!(
            "sqlite:{}",
            dir.join("bench.db").display()
        )))
        .unwrap(),
    )];
    if let Ok(url) = std::env::var("PI_TOOL_POSTGRES_URL") {
        let db = format!("bench_{}", std::process::id());
        rt.block_on(async {
            let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .unwrap();
            let task = tokio::spawn(conn);
            client
                .batch_execute(&format!("DROP DATABASE IF EXISTS {db}"))
                .await
                .unwrap();
            client
                .batch_execute(&format!("CREATE DATABASE {db}"))
                .await
                .unwrap();
            drop(client);
            let _ = task.await;
        });
        let (prefix, _) = url.rsplit_once('/').unwrap();
        stores.push((
            "postgres",
            rt.block_on(pi_tool_store::open(&format!("{prefix}/{db}")))
                .unwrap(),
        ));
    } else {
        eprintln!("!!! PI_TOOL_POSTGRES_URL is not set: the PostgreSQL rows are left out");
    }
    stores
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let stores = stores(&rt);
    let sqlite = stores[0].1.clone();

    let mut group = c.benchmark_group("run/no_approval");
    for (name, store) in [
        ("without_store", None),
        ("with_store", Some(sqlite.clone())),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| {
                let store = store.clone();
                async move {
                    let a = agent(store, vec![turn("read", json!({})), FauxTurn::text("done")]);
                    let outcome = a
                        .run("no-approval", vec![Message::user_text("read")])
                        .await
                        .unwrap();
                    assert!(matches!(outcome, RunOutcome::Finished { .. }));
                }
            });
        });
    }
    group.finish();

    for (group_name, later) in [("suspend_resume", false), ("later_batch", true)] {
        let mut group = c.benchmark_group(group_name);
        group.measurement_time(Duration::from_secs(8));
        for (name, store) in &stores {
            let mut n = 0u64;
            group.bench_function(*name, |b| {
                b.to_async(&rt).iter(|| {
                    n += 1;
                    let run = format!("{group_name}-{}-{n}", now_ms());
                    let store = store.clone();
                    async move { cycle(&store, &run, later).await }
                });
            });
        }
        group.finish();
    }

    let mut group = c.benchmark_group("audit_append");
    for (name, store) in &stores {
        group.bench_function(*name, |b| {
            b.to_async(&rt).iter(|| {
                let store = store.clone();
                async move {
                    let e =
                        AuditEvent::new(AuditKind::Started, "bench", now_ms()).with("call", "c");
                    store.append_audit(&[e]).await.unwrap();
                }
            });
        });
    }
    group.finish();
}

criterion_group!(durable, benches);
criterion_main!(durable);
