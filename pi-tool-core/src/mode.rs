//! `ToolExecutionMode`: whether a tool may overlap with the other calls of its batch.

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
