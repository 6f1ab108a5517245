//! How `buildParams` asks for reasoning: pi's level clamped to the model
//! (`clampThinkingLevel`), each `thinkingFormat`'s fields, chat-template values and the
//! thinking-token budget.

use serde_json::{Map, Value, json};

use super::compat::Compat;
use crate::model::{Model, ThinkingLevel};
use crate::providers::openai_sse::js_truthy;
use crate::providers::options::{clamp_thinking_budget_to_answer_room, thinking_budget_for_level};

/// pi-ai's `EXTENDED_THINKING_LEVELS`. Pi has no `max` level to ask for, but a model
/// that maps it is clamped up to it, as in pi-ai.
const LEVELS: [&str; 7] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

fn level_name(level: ThinkingLevel) -> &'static str {
    match level {
        ThinkingLevel::Off => "off",
        ThinkingLevel::Minimal => "minimal",
        ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        ThinkingLevel::High => "high",
        ThinkingLevel::Xhigh => "xhigh",
    }
}

fn level_from_name(name: &str) -> ThinkingLevel {
    match name {
        "minimal" => ThinkingLevel::Minimal,
        "low" => ThinkingLevel::Low,
        "medium" => ThinkingLevel::Medium,
        "high" => ThinkingLevel::High,
        // `clampReasoning` gives both the budget of `high`.
        "xhigh" | "max" => ThinkingLevel::Xhigh,
        _ => ThinkingLevel::Off,
    }
}

/// pi-ai's `clampThinkingLevel`: the requested level if the model has it, else the next
/// higher one it has, else the next lower.
pub(super) fn clamp_thinking_level(model: &Model, level: ThinkingLevel) -> &'static str {
    let mapped = |name: &str| model.thinking_level_map.as_ref().and_then(|m| m.get(name));
    let available: Vec<&str> = if model.reasoning {
        LEVELS
            .into_iter()
            .filter(|name| match mapped(name) {
                Some(Value::Null) => false,
                other => !matches!(*name, "xhigh" | "max") || other.is_some(),
            })
            .collect()
    } else {
        vec!["off"]
    };
    let requested = level_name(level);
    if available.contains(&requested) {
        return requested;
    }
    let index = LEVELS.iter().position(|l| *l == requested).unwrap_or(0);
    LEVELS[index..]
        .iter()
        .chain(LEVELS[..index].iter().rev())
        .find(|l| available.contains(l))
        .copied()
        .unwrap_or("off")
}

/// `resolveClampedThinkingBudget`: the level's budget, capped to leave room for the
/// answer under the output limit; `None` without reasoning or when nothing is left.
pub(super) fn thinking_budget(model: &Model, effort: Option<&str>, ceiling: u64) -> Option<u64> {
    let effort = effort.filter(|_| model.reasoning)?;
    let ceiling = if ceiling > 0 {
        ceiling
    } else {
        model.max_tokens
    };
    let budget = clamp_thinking_budget_to_answer_room(
        thinking_budget_for_level(level_from_name(effort), None),
        ceiling,
    );
    (budget > 0).then_some(budget)
}

/// The reasoning fields of each `thinkingFormat` (the long `if` chain of `buildParams`).
pub(super) fn apply_thinking(
    params: &mut Map<String, Value>,
    model: &Model,
    compat: &Compat,
    effort: Option<&str>,
    budget: Option<u64>,
) {
    let map = model.thinking_level_map.as_ref();
    // `thinkingLevelMap?.[level]`: `None` when absent, `Some(Null)` when marked unsupported.
    let mapped = |level: &str| map.and_then(|m| m.get(level)).cloned();
    // `map?.[level] ?? level`.
    let mapped_or = |level: &str| match mapped(level) {
        Some(Value::Null) | None => json!(level),
        Some(value) => value,
    };
    let off_not_null = !matches!(mapped("off"), Some(Value::Null));
    let format = compat.thinking_format.as_str();
    let reasoning = model.reasoning;
    let mut set = |key: &str, value: Value| {
        params.insert(key.to_owned(), value);
    };
    match (format, effort) {
        ("zai", _) if reasoning => {
            set(
                "thinking",
                if effort.is_some() {
                    json!({"type": "enabled", "clear_thinking": false})
                } else {
                    json!({"type": "disabled"})
                },
            );
            if let Some(effort) = effort.filter(|_| compat.supports_reasoning_effort) {
                let value = mapped(effort).unwrap_or_else(|| json!(effort));
                if value.is_string() {
                    set("reasoning_effort", value);
                }
            }
        }
        ("qwen", _) if reasoning => {
            set("enable_thinking", json!(effort.is_some()));
            if let Some(effort) = effort.filter(|_| compat.supports_reasoning_effort) {
                let value = mapped_or(effort);
                if value.is_string() {
                    set("reasoning_effort", value);
                }
            }
        }
        ("qwen-chat-template", _) if reasoning => {
            set(
                "chat_template_kwargs",
                json!({"enable_thinking": effort.is_some(), "preserve_thinking": true}),
            );
        }
        ("chat-template", _) if reasoning => {
            if let Some(values) =
                chat_template_values(model, effort, &compat.chat_template_kwargs, budget)
            {
                set("chat_template_kwargs", Value::Object(values));
            }
        }
        ("baseten", _) if reasoning => {
            if let Some(values) =
                chat_template_values(model, effort, &compat.chat_template_args, budget)
            {
                set("chat_template_args", Value::Object(values));
            }
            if compat.supports_reasoning_effort {
                let value = match effort {
                    Some(effort) => mapped(effort).unwrap_or_else(|| json!(effort)),
                    None => mapped("off").unwrap_or(Value::Null),
                };
                if value.is_string() {
                    set("reasoning_effort", value);
                }
            }
        }
        ("deepseek", _) if reasoning => {
            if effort.is_some() {
                set("thinking", json!({"type": "enabled"}));
            } else if off_not_null {
                set("thinking", json!({"type": "disabled"}));
            }
            if let Some(effort) = effort.filter(|_| compat.supports_reasoning_effort) {
                set("reasoning_effort", mapped_or(effort));
            }
        }
        ("openrouter", _) if reasoning => {
            if let Some(effort) = effort {
                set("reasoning", json!({"effort": mapped_or(effort)}));
            } else if off_not_null {
                let off = mapped("off").unwrap_or_else(|| json!("none"));
                set("reasoning", json!({"effort": off}));
            }
        }
        ("ant-ling", Some(effort)) if reasoning => {
            if let Some(value) = mapped(effort).filter(Value::is_string) {
                set("reasoning", json!({"effort": value}));
            }
        }
        ("together", _) if reasoning => {
            set("reasoning", json!({"enabled": effort.is_some()}));
            if let Some(effort) = effort.filter(|_| compat.supports_reasoning_effort) {
                set("reasoning_effort", mapped_or(effort));
            }
        }
        ("string-thinking", _) if reasoning => {
            if let Some(effort) = effort {
                set("thinking", mapped_or(effort));
            } else if off_not_null {
                set("thinking", mapped("off").unwrap_or_else(|| json!("none")));
            }
        }
        (_, Some(effort)) if reasoning && compat.supports_reasoning_effort => {
            set("reasoning_effort", mapped_or(effort));
        }
        (_, None) if reasoning && compat.supports_reasoning_effort => {
            if let Some(off) = mapped("off").filter(Value::is_string) {
                set("reasoning_effort", off);
            }
        }
        _ => {}
    }
}

/// `buildChatTemplateValues`: each configured value, with `{"$var": ...}` placeholders
/// filled; `None` when nothing is left.
fn chat_template_values(
    model: &Model,
    effort: Option<&str>,
    values: &Map<String, Value>,
    budget: Option<u64>,
) -> Option<Map<String, Value>> {
    let mut out = Map::new();
    for (key, value) in values {
        let resolved = match value {
            Value::Object(_) | Value::Array(_) => {
                let flag = |name: &str| value.get(name).is_some_and(js_truthy);
                let var = value.get("$var").and_then(Value::as_str);
                if effort.is_none() && flag("omitWhenOff") {
                    None
                } else if var == Some("thinking.enabled") {
                    Some(json!(effort.is_some()))
                } else if var == Some("thinking.budget") {
                    budget.map(|b| json!(b))
                } else {
                    let map = model.thinking_level_map.as_ref();
                    let mapped = map.and_then(|m| m.get(effort.unwrap_or("off")));
                    match mapped {
                        None => effort.map(|e| json!(e)),
                        Some(Value::String(s)) => Some(json!(s)),
                        Some(_) => None,
                    }
                }
            }
            scalar => Some(scalar.clone()),
        };
        if let Some(resolved) = resolved {
            out.insert(key.clone(), resolved);
        }
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinking_levels_clamp_like_pi_ai() {
        let mut model = Model::new("m", "openai-completions", "x");
        assert_eq!(clamp_thinking_level(&model, ThinkingLevel::High), "off");
        model.reasoning = true;
        assert_eq!(clamp_thinking_level(&model, ThinkingLevel::Low), "low");
        // xhigh needs an explicit mapping.
        assert_eq!(clamp_thinking_level(&model, ThinkingLevel::Xhigh), "high");
        let mut map = Map::new();
        map.insert("high".into(), Value::Null);
        map.insert("medium".into(), Value::Null);
        model.thinking_level_map = Some(map);
        assert_eq!(clamp_thinking_level(&model, ThinkingLevel::High), "low");
        // A mapped `max` is the next level up from an unsupported xhigh.
        let mut map = Map::new();
        map.insert("xhigh".into(), Value::Null);
        map.insert("max".into(), json!("max"));
        model.thinking_level_map = Some(map);
        assert_eq!(clamp_thinking_level(&model, ThinkingLevel::Xhigh), "max");
        assert_eq!(thinking_budget(&model, Some("max"), 64_000), Some(16_384));
    }
}
