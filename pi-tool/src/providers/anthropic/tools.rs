//! The tools of the request: pi-ai's `splitDeferredTools` and `convertTools`, and the
//! Claude Code tool names an OAuth request uses (`toClaudeCodeName`/`fromClaudeCodeName`).

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::compat::AnthropicCompat;
use crate::AgentTool;
use crate::model::Message;

/// Claude Code's tool names (pi-ai's stealth mode for OAuth tokens), canonical casing.
const CLAUDE_CODE_TOOLS: [&str; 17] = [
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

/// `toClaudeCodeName`: a Claude Code tool name in its casing, else the name.
pub(super) fn to_claude_code_name(name: &str) -> String {
    let lower = name.to_lowercase();
    CLAUDE_CODE_TOOLS
        .iter()
        .find(|t| t.to_lowercase() == lower)
        .map_or_else(|| name.to_owned(), |t| (*t).to_owned())
}

/// `fromClaudeCodeName`: the context's tool whose name matches case-insensitively.
pub(super) fn from_claude_code_name(name: &str, tools: &[String]) -> String {
    let lower = name.to_lowercase();
    tools
        .iter()
        .find(|t| t.to_lowercase() == lower)
        .cloned()
        .unwrap_or_else(|| name.to_owned())
}

type Tools = Vec<Arc<dyn AgentTool>>;

/// `splitDeferredTools`: tools first loaded by a tool result's `addedToolNames` (and never
/// called before) are sent with `defer_loading`; the rest up front. Names dedupe by their
/// normalised form, the last definition winning at the first position.
pub(super) fn split_deferred_tools(
    tools: &[Arc<dyn AgentTool>],
    messages: &[Message],
    enabled: bool,
    normalize: &dyn Fn(&str) -> String,
) -> (Tools, Tools) {
    let mut unique: Vec<(String, Arc<dyn AgentTool>)> = Vec::new();
    for tool in tools {
        let name = normalize(tool.name());
        match unique.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = tool.clone(),
            None => unique.push((name, tool.clone())),
        }
    }
    if !enabled {
        return (unique.into_iter().map(|(_, t)| t).collect(), Vec::new());
    }
    let mut deferred_names: Vec<String> = Vec::new();
    let mut used: HashSet<String> = HashSet::new();
    for message in messages {
        match message {
            Message::Assistant(assistant) => {
                for call in assistant.tool_calls() {
                    used.insert(normalize(&call.name));
                }
            }
            Message::ToolResult(result) => {
                for name in result.added_tool_names.iter().flatten() {
                    let name = normalize(name);
                    if !used.contains(&name) && !deferred_names.contains(&name) {
                        deferred_names.push(name);
                    }
                }
            }
            Message::User(_) => {}
        }
    }
    let mut immediate = Vec::new();
    let mut deferred = Vec::new();
    for (name, tool) in unique {
        if deferred_names.contains(&name) {
            deferred.push(tool);
        } else {
            immediate.push(tool);
        }
    }
    (immediate, deferred)
}

/// `convertTools`. No tool here asks for constrained sampling, so the schema is always
/// pi-ai's legacy `{type: "object", properties, required}`.
pub(super) fn convert_tools(
    tools: &[Arc<dyn AgentTool>],
    normalize: &dyn Fn(&str) -> String,
    compat: &AnthropicCompat,
    cache_control: Option<&Value>,
    defer_loading: bool,
) -> Vec<Value> {
    let last = tools.len().saturating_sub(1);
    tools
        .iter()
        .enumerate()
        .map(|(index, tool)| {
            let spec = tool.spec();
            let schema = spec.parameters.json();
            let field = |key: &str, default: Value| match schema.get(key) {
                None | Some(Value::Null) => default,
                Some(value) => value.clone(),
            };
            let mut out = Map::new();
            out.insert("name".into(), json!(normalize(tool.name())));
            out.insert("description".into(), json!(spec.description));
            if compat.supports_eager_tool_input_streaming {
                out.insert("eager_input_streaming".into(), json!(true));
            }
            out.insert(
                "input_schema".into(),
                json!({
                    "type": "object",
                    "properties": field("properties", json!({})),
                    "required": field("required", json!([])),
                }),
            );
            if defer_loading {
                out.insert("defer_loading".into(), json!(true));
            }
            if let Some(cache) = cache_control
                && index == last
            {
                out.insert("cache_control".into(), cache.clone());
            }
            Value::Object(out)
        })
        .collect()
}
