//! Durable approvals on the command line (docs/durable-runs.md), on the faux model: the
//! model calls the tool named on the command line with the JSON arguments given, then
//! answers with one text that quotes the tool's result or error.
//!
//! ```text
//! durable-approvals --store URL --dir DATA [--approval-ttl SECS] run RUN_ID TOOL ARGS_JSON
//! durable-approvals --store URL pending
//! durable-approvals --store URL approve RUN_ID CALL_ID DIGEST [--by NAME]
//! durable-approvals --store URL deny RUN_ID CALL_ID DIGEST [--reason TEXT]
//! durable-approvals --store URL --dir DATA resume RUN_ID
//! durable-approvals --store URL audit verify
//! durable-approvals --store URL audit export
//! ```
//!
//! `URL` is `sqlite:PATH` or `postgres://...`. The one tool, `transfer {to, amount,
//! hold_ms?}`, is destructive: it appends `to amount` as one line to `DATA/ledger.txt`,
//! then waits `hold_ms` before it returns. `run` and `resume` print one JSON line last:
//! `{"run", "status": "suspended", "pending": [{"call", "tool", "digest", "expires_at"}]}`
//! or `{"run", "status": "finished", "final"}`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use pi_tool::agent::{Agent, AgentOptions, ApprovalPolicy, DurableRuns, RunOutcome};
use pi_tool::durable::{Decision, DurableStore, Verdict, export_jsonl, verify_chain};
use pi_tool::model::{
    AssistantContent, AssistantMessageStream, Context, Message, Model, StreamFn, StreamOptions,
};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{IntoAgentTool, ToolError, pi_tool, pi_tools};
use serde_json::{Value, json};

/// The id of the one call the model makes.
const CALL_ID: &str = "call-1";

/// Where `transfer` writes.
pub struct Ledger {
    path: PathBuf,
}

/// What `transfer` takes.
#[pi_tool::params]
pub struct TransferParams {
    /// Who receives the amount.
    pub to: String,
    /// How much.
    pub amount: f64,
    /// How long to hold (ms) after writing, before returning; 0 when left out.
    pub hold_ms: Option<u64>,
}

#[pi_tools]
impl Ledger {
    /// Moves `amount` to `to`: appends one line to the ledger.
    #[pi_tool(name = "transfer", destructive, open_world = false)]
    async fn transfer(&self, params: TransferParams) -> Result<String, ToolError> {
        use tokio::io::AsyncWriteExt;
        let line = format!("{} {}\n", params.to, params.amount);
        let mut file = tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .await
            .map_err(|e| ToolError::new(format!("the ledger cannot be opened: {e}")))?;
        file.write_all(line.as_bytes())
            .await
            .map_err(|e| ToolError::new(format!("the ledger cannot be written: {e}")))?;
        file.sync_all()
            .await
            .map_err(|e| ToolError::new(format!("the ledger cannot be synced: {e}")))?;
        tokio::time::sleep(Duration::from_millis(params.hold_ms.unwrap_or(0))).await;
        Ok(format!("moved {} to {}", params.amount, params.to))
    }
}

/// The faux model of the example: the first request calls `tool` with `args`; a request
/// after a tool result answers with a text quoting it.
struct Script {
    tool: String,
    args: Value,
}

impl StreamFn for Script {
    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageStream {
        let answer = context
            .messages
            .iter()
            .rev()
            .find_map(Message::as_tool_result)
            .map(|r| {
                let text: String = r.content.iter().filter_map(|c| c.as_text()).collect();
                if r.is_error {
                    format!("The tool failed: {text}")
                } else {
                    format!("The tool said: {text}")
                }
            });
        let turn = match answer {
            Some(text) => FauxTurn::text(text),
            None => FauxTurn::new(vec![AssistantContent::tool_call(
                CALL_ID,
                &*self.tool,
                self.args.clone(),
            )]),
        };
        FauxModel::new(vec![turn])
            .without_recording()
            .stream(model, context, options)
    }
}

struct Cli {
    store: String,
    dir: Option<PathBuf>,
    approval_ttl: Option<Duration>,
    command: Vec<String>,
    by: Option<String>,
    reason: Option<String>,
}

fn parse(args: Vec<String>) -> Result<Cli, String> {
    let mut cli = Cli {
        store: String::new(),
        dir: None,
        approval_ttl: None,
        command: Vec::new(),
        by: None,
        reason: None,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--store" => cli.store = value("--store")?,
            "--dir" => cli.dir = Some(PathBuf::from(value("--dir")?)),
            "--approval-ttl" => {
                let secs = value("--approval-ttl")?;
                let secs: f64 = secs
                    .parse()
                    .map_err(|_| format!("--approval-ttl: not a number of seconds: {secs}"))?;
                cli.approval_ttl = Some(Duration::from_secs_f64(secs.max(0.0)));
            }
            "--by" => cli.by = Some(value("--by")?),
            "--reason" => cli.reason = Some(value("--reason")?),
            _ => cli.command.push(arg),
        }
    }
    if cli.store.is_empty() {
        return Err("--store URL is required (sqlite:PATH or postgres://...)".to_owned());
    }
    Ok(cli)
}

fn agent(
    cli: &Cli,
    store: Arc<dyn DurableStore>,
    tool: &str,
    args: Value,
) -> Result<Agent, String> {
    let dir = cli
        .dir
        .clone()
        .ok_or("--dir DATA is required for run and resume")?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("--dir {}: {e}", dir.display()))?;
    let ledger = Arc::new(Ledger {
        path: dir.join("ledger.txt"),
    });
    let mut policy = ApprovalPolicy::new().defer();
    if let Some(ttl) = cli.approval_ttl {
        policy = policy.approval_ttl(ttl);
    }
    let script = Script {
        tool: tool.to_owned(),
        args,
    };
    Ok(Agent::new(
        AgentOptions::new(Arc::new(script))
            .model(FauxModel::model())
            .tools(vec![ledger.transfer_tool().into_agent_tool()])
            .before_tool_call(Arc::new(policy))
            // A process killed mid-call holds its run this long.
            .durable(DurableRuns::new(store).lease(Duration::from_secs(5))),
    ))
}

fn outcome_line(agent: &Agent, outcome: RunOutcome) -> Value {
    match outcome {
        RunOutcome::Suspended(s) => json!({
            "run": s.run_id,
            "status": "suspended",
            "pending": s.pending.iter().map(|p| json!({
                "call": p.call_id, "tool": p.tool, "digest": p.digest, "expires_at": p.expires_at_ms,
            })).collect::<Vec<_>>(),
        }),
        RunOutcome::Finished { run_id } => {
            let last = agent.messages().iter().rev().find_map(|m| match m {
                Message::Assistant(a) => Some(a.text()),
                _ => None,
            });
            json!({"run": run_id, "status": "finished", "final": last.unwrap_or_default()})
        }
        _ => json!({"status": "unknown"}),
    }
}

async fn main_result(cli: Cli) -> Result<ExitCode, String> {
    let store = pi_tool_store::open(&cli.store)
        .await
        .map_err(|e| e.to_string())?;
    let words: Vec<&str> = cli.command.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["run", run_id, tool, args] => {
            let args: Value = serde_json::from_str(args).map_err(|e| format!("ARGS_JSON: {e}"))?;
            let agent = agent(&cli, store, tool, args)?;
            let outcome = agent
                .run(
                    run_id,
                    vec![Message::user_text(format!("Please call {tool}."))],
                )
                .await
                .map_err(|e| e.to_string())?;
            println!("{}", outcome_line(&agent, outcome));
        }
        ["resume", run_id] => {
            // The resumed run's model only answers: it is asked after the tool ran.
            let agent = agent(&cli, store, "transfer", json!({}))?;
            let outcome = agent.resume_run(run_id).await.map_err(|e| e.to_string())?;
            println!("{}", outcome_line(&agent, outcome));
        }
        ["pending"] => {
            for p in store.pending().await.map_err(|e| e.to_string())? {
                let line = json!({
                    "run": p.run_id, "call": p.call_id, "tool": p.tool, "digest": p.digest,
                    "title": p.title, "message": p.message, "expires_at": p.expires_at_ms,
                });
                println!("{line}");
            }
        }
        [verb @ ("approve" | "deny"), run_id, call_id, digest] => {
            let verdict = if *verb == "approve" {
                Verdict::Approve
            } else {
                Verdict::Deny
            };
            let mut decision = Decision::new(*run_id, *call_id, *digest, verdict);
            if let Some(by) = &cli.by {
                decision = decision.by(by.clone());
            }
            if let Some(reason) = &cli.reason {
                decision = decision.reason(reason.clone());
            }
            store
                .decide(&decision, &decision.audit_event())
                .await
                .map_err(|e| e.to_string())?;
        }
        ["audit", "verify"] => {
            let report = verify_chain(&store.audit_log().await.map_err(|e| e.to_string())?);
            match &report.first_bad {
                None => println!(
                    "{}",
                    json!({"ok": true, "records": report.records, "head": report.head})
                ),
                Some(bad) => {
                    println!(
                        "{}",
                        json!({"ok": false, "first_bad": bad.seq, "reason": bad.reason})
                    );
                    return Ok(ExitCode::FAILURE);
                }
            }
        }
        ["audit", "export"] => {
            print!(
                "{}",
                export_jsonl(&store.audit_log().await.map_err(|e| e.to_string())?)
            );
        }
        _ => return Err(format!("unknown command: {}", cli.command.join(" "))),
    }
    Ok(ExitCode::SUCCESS)
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = match parse(std::env::args().skip(1).collect()) {
        Ok(cli) => cli,
        Err(error) => {
            eprintln!("durable-approvals: {error}");
            return ExitCode::from(2);
        }
    };
    match main_result(cli).await {
        Ok(code) => code,
        Err(error) => {
            eprintln!("durable-approvals: {error}");
            ExitCode::FAILURE
        }
    }
}
