//! Does every tool accept what its own schema allows? [`check_schema`] runs a
//! [`SchemaModel`] through the real agent loop and sorts the results;
//! [`assert_pack_accepts_its_schema`] panics with the report.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::agent::{Agent, AgentOptions};
use crate::model::Message;
use pi_tool_core::AgentTool;

use super::model::{GeneratedCall, IntoTools, SchemaModel, SkippedCase};

/// How long one generated call may run (tools without a timeout of their own).
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// What became of one generated call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// The tool returned a result.
    Accepted,
    /// The tool ran and returned its own error (a business rule: `Unsupported city`):
    /// it accepted the arguments' shape.
    ToolError,
    /// The arguments were refused although the schema allows them: serde (or the tool's
    /// `prepare_arguments`) disagrees with the schema.
    Rejected,
    /// The tool panicked on arguments its schema allows.
    Panicked,
    /// The call ran out of time (not counted as a failure).
    TimedOut,
    /// No result came back for the call.
    Missing,
}

impl Verdict {
    /// Whether this verdict fails the check.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Verdict::Rejected | Verdict::Panicked | Verdict::Missing
        )
    }
}

/// One generated call and what became of it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CheckedCall {
    /// The call.
    pub call: GeneratedCall,
    /// What became of it.
    pub verdict: Verdict,
    /// The text of the tool's result (the error text for a failure).
    pub text: String,
}

/// The result of [`check_schema`]: every generated call with its verdict, the cases the
/// generator could not make valid, and the tools it could make no call for. Its
/// `Display` is the report [`assert_pack_accepts_its_schema`] panics with.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct SchemaReport {
    /// Every generated call, in order.
    pub calls: Vec<CheckedCall>,
    /// Cases the generator could not make valid (never sent).
    pub skipped: Vec<SkippedCase>,
    /// Tools for which no valid case could be generated (a failure: nothing tested them).
    pub untested: Vec<String>,
    /// The warnings of each tool's schema normalisation (a merged root union ...), which
    /// often explain a disagreement.
    pub warnings: Vec<(String, Vec<String>)>,
    /// The agent run's own failure, if it had one.
    pub run_error: Option<String>,
}

impl SchemaReport {
    /// The calls that fail the check.
    pub fn failures(&self) -> Vec<&CheckedCall> {
        self.calls
            .iter()
            .filter(|o| o.verdict.is_failure())
            .collect()
    }

    /// Whether every tool accepted every generated call (and each tool got one).
    pub fn is_ok(&self) -> bool {
        self.failures().is_empty() && self.untested.is_empty() && self.run_error.is_none()
    }

    /// The names of the tools that fail the check, each once, in order.
    pub fn failing_tools(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        let failing = self
            .failures()
            .into_iter()
            .map(|o| o.call.tool.as_str())
            .chain(self.untested.iter().map(String::as_str));
        for name in failing {
            if !out.contains(&name) {
                out.push(name);
            }
        }
        out
    }
}

impl fmt::Display for SchemaReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let failures = self.failures();
        writeln!(
            f,
            "{} of {} generated calls failed on arguments their tool's own schema allows{}",
            failures.len(),
            self.calls.len(),
            if self.untested.is_empty() {
                String::new()
            } else {
                format!("; {} tools could not be tested", self.untested.len())
            }
        )?;
        if let Some(error) = &self.run_error {
            writeln!(f, "\nthe agent run failed: {error}")?;
        }
        for tool in self.failing_tools() {
            let refused: Vec<&&CheckedCall> =
                failures.iter().filter(|o| o.call.tool == tool).collect();
            let calls = self.calls.iter().filter(|o| o.call.tool == tool).count();
            writeln!(f)?;
            if refused.is_empty() {
                writeln!(
                    f,
                    "tool `{tool}`: no valid arguments could be generated from its schema"
                )?;
                for skip in self.skipped.iter().filter(|s| s.tool == tool) {
                    writeln!(f, "  case {}: {}", skip.case, indent(&skip.reason, "    "))?;
                }
            } else {
                writeln!(
                    f,
                    "tool `{tool}`: {} of {calls} calls failed",
                    refused.len()
                )?;
            }
            for outcome in refused {
                let call = &outcome.call;
                writeln!(
                    f,
                    "  case {} (optional properties {}), {}:",
                    call.case,
                    if call.optional_present() {
                        "present"
                    } else {
                        "absent"
                    },
                    match outcome.verdict {
                        Verdict::Rejected => "the schema allows it, the tool refused it",
                        Verdict::Panicked => "the tool panicked",
                        _ => "no result came back",
                    }
                )?;
                writeln!(f, "    arguments: {}", call.arguments)?;
                writeln!(f, "    {}", indent(&outcome.text, "    "))?;
            }
            if let Some((_, warnings)) = self.warnings.iter().find(|(name, _)| name == tool) {
                for warning in warnings {
                    writeln!(f, "  schema warning: {warning}")?;
                }
            }
        }
        Ok(())
    }
}

fn indent(text: &str, prefix: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
            if !line.is_empty() {
                out.push_str(prefix);
            }
        }
        out.push_str(line);
    }
    out
}

/// Runs a [`SchemaModel`] over `tools` through a real [`Agent`] (each call through the
/// loop's call path, 30 s at most per call unless the tool has its own timeout) and sorts
/// each result: accepted, the tool's own error, refused, panicked.
pub async fn check_schema(tools: impl IntoTools) -> SchemaReport {
    let tools = tools.into_tools();
    let model = SchemaModel::new(tools.clone());
    let warnings = tools
        .iter()
        .filter(|t| !t.spec().parameters.warnings().is_empty())
        .map(|t| (t.name().to_owned(), t.spec().parameters.warnings().to_vec()))
        .collect();
    let untested = tools
        .iter()
        .map(|t| t.name())
        .filter(|name| !model.calls().iter().any(|c| c.tool == *name))
        .map(str::to_owned)
        .collect();
    let agent = Agent::new(
        AgentOptions::new(Arc::new(model.clone()))
            .model(SchemaModel::model())
            .system_prompt("Call every tool with arguments its schema allows.")
            .tools(tools.clone())
            .tool_timeout(CALL_TIMEOUT),
    );
    let mut run_error = agent
        .prompt("Call every tool.")
        .await
        .err()
        .map(|e| e.to_string());
    if run_error.is_none() {
        run_error = agent.error_message();
    }
    let messages = agent.messages();
    let outcomes = model
        .calls()
        .iter()
        .map(|call| outcome(call, &messages, &tools))
        .collect();
    SchemaReport {
        calls: outcomes,
        skipped: model.skipped().to_vec(),
        untested,
        warnings,
        run_error,
    }
}

fn outcome(
    call: &GeneratedCall,
    messages: &[Message],
    tools: &[Arc<dyn AgentTool>],
) -> CheckedCall {
    let result = messages
        .iter()
        .filter_map(Message::as_tool_result)
        .find(|r| *r.tool_call_id == *call.id);
    let Some(result) = result else {
        return CheckedCall {
            call: call.clone(),
            verdict: Verdict::Missing,
            text: "no tool result in the transcript".to_owned(),
        };
    };
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<Vec<_>>()
        .join("\n");
    let name = &call.tool;
    let verdict = if !result.is_error {
        Verdict::Accepted
    } else if text.starts_with(&format!("Validation failed for tool \"{name}\"")) {
        Verdict::Rejected
    } else if text.starts_with(&format!("Tool {name} panicked")) {
        Verdict::Panicked
    } else if text.starts_with(&format!("Tool {name} timed out")) {
        Verdict::TimedOut
    } else if !tools.iter().any(|t| t.name() == name) {
        Verdict::Missing
    } else {
        Verdict::ToolError
    };
    CheckedCall {
        call: call.clone(),
        verdict,
        text,
    }
}

/// Fails (panics with a readable report) when a tool refuses arguments its own schema
/// allows: a validation or serde error on generated-valid arguments (serde and the schema
/// disagree), a panic, or a tool for which no valid arguments could be generated.
///
/// Takes a [`ToolPack`](crate::pack::ToolPack) or a list of `Arc<dyn AgentTool>`. The tools
/// really run: give it tools whose side effects a test may have. See [`check_schema`]
/// for the report without the panic.
pub async fn assert_pack_accepts_its_schema(tools: impl IntoTools) {
    let report = check_schema(tools).await;
    if !report.is_ok() {
        panic!("assert_pack_accepts_its_schema: {report}");
    }
}
