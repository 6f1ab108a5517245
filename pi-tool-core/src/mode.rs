//! `ToolExecutionMode`: whether a tool may overlap with the other calls of its batch;
//! `TaskSupport`: whether it may run as an MCP task.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How the calls of one assistant message run (Pi's `ToolExecutionMode`).
///
/// The agent default is [`Parallel`](Self::Parallel). One call to a `Sequential` tool
/// makes its whole batch sequential (Pi's batch rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolExecutionMode {
    /// Calls run one after another, in source order.
    Sequential,
    /// Calls are prepared in order, then run concurrently.
    Parallel,
}

impl ToolExecutionMode {
    /// Pi's spelling: `"sequential"` or `"parallel"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolExecutionMode::Sequential => "sequential",
            ToolExecutionMode::Parallel => "parallel",
        }
    }
}

impl fmt::Display for ToolExecutionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ToolExecutionMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "sequential" => Ok(ToolExecutionMode::Sequential),
            "parallel" => Ok(ToolExecutionMode::Parallel),
            other => Err(format!(
                "unknown execution mode `{other}`: expected `sequential` or `parallel`"
            )),
        }
    }
}

/// Whether a tool may or must run as a task (MCP's `execution.taskSupport`, the
/// `io.modelcontextprotocol/tasks` extension, SEP-2663): `#[pi_tool(task_support =
/// "optional")]`, or [`ToolSpec::task_support`](crate::ToolSpec::task_support).
///
/// Only MCP servers read it (pi-tool-mcp's `PackServer`); the agent loop runs every tool
/// the same way. A tool that declares nothing runs as a plain call, as `Forbidden` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum TaskSupport {
    /// It never runs as a task.
    Forbidden,
    /// It runs as a task for a client that declared the tasks extension, as a plain call
    /// for others.
    Optional,
    /// It runs only as a task: a client without the extension is refused (-32021).
    Required,
}

impl TaskSupport {
    /// MCP's spelling: `"forbidden"`, `"optional"` or `"required"`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

impl fmt::Display for TaskSupport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TaskSupport {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "forbidden" => Ok(TaskSupport::Forbidden),
            "optional" => Ok(TaskSupport::Optional),
            "required" => Ok(TaskSupport::Required),
            other => Err(format!(
                "unknown task support `{other}`: expected `forbidden`, `optional` or `required`"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_support_reads_and_writes_mcp_spelling() {
        for support in [
            TaskSupport::Forbidden,
            TaskSupport::Optional,
            TaskSupport::Required,
        ] {
            assert_eq!(support.as_str().parse::<TaskSupport>(), Ok(support));
            assert_eq!(
                serde_json::to_value(support).unwrap(),
                serde_json::Value::String(support.to_string())
            );
        }
        assert!("Optional".parse::<TaskSupport>().is_err());
    }
}

/// The concurrency class a tool's calls belong to, and how much of the class one call
/// takes: `#[pi_tool(concurrency = "browser")]` (weight 1) or `#[pi_tool(concurrency =
/// ("browser", 2))]`, or [`ToolSpec::concurrency`](crate::ToolSpec::concurrency).
///
/// A host sets a limit per class and in total (pi-tool's `RunPolicy::concurrency`); a
/// call then runs only while its class and the total have room for its weight. A class
/// no host limits, and a tool without a class, take only from the total.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConcurrencyClass {
    name: std::borrow::Cow<'static, str>,
    weight: u32,
}

impl ConcurrencyClass {
    /// The class `name`, each call weighing `weight` (0 reads as 1: every call takes
    /// room).
    pub const fn new(name: &'static str, weight: u32) -> Self {
        ConcurrencyClass {
            name: std::borrow::Cow::Borrowed(name),
            weight: if weight == 0 { 1 } else { weight },
        }
    }

    /// A class whose name is made at run time (a host's own tools).
    pub fn named(name: impl Into<String>, weight: u32) -> Self {
        ConcurrencyClass {
            name: std::borrow::Cow::Owned(name.into()),
            weight: weight.max(1),
        }
    }

    /// The class's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How much of the class (and of the total) one call takes.
    pub fn weight(&self) -> u32 {
        self.weight
    }
}
