//! Data-described behaviour: templates (FORMAT.md §3.5), argument ops (§3.6) and rule
//! matching (§3.7).

use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Value};

use crate::canon::js_stringify;

/// Replaces `${args}`, `${args.NAME}` and `${toolCallId}` in every string of `value`.
pub fn render(value: &Value, args: &Value, tool_call_id: &str) -> Value {
    match value {
        Value::String(s) => render_string(s, args, tool_call_id),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| render(v, args, tool_call_id))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), render(v, args, tool_call_id)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn token_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"\$\{(args\.[A-Za-z_][A-Za-z0-9_]*|toolCallId)\}")
            .unwrap_or_else(|e| panic!("{e}"))
    })
}

/// One string: `${args}` alone becomes the arguments value; tokens are replaced.
pub fn render_string(s: &str, args: &Value, tool_call_id: &str) -> Value {
    if s == "${args}" {
        return args.clone();
    }
    Value::String(render_text(s, args, tool_call_id))
}

/// Token replacement only (a `throw` message).
pub fn render_text(s: &str, args: &Value, tool_call_id: &str) -> String {
    token_re()
        .replace_all(s, |caps: &regex::Captures<'_>| {
            let token = &caps[1];
            if token == "toolCallId" {
                return tool_call_id.to_owned();
            }
            let key = &token["args.".len()..];
            match args.as_object().and_then(|o| o.get(key)) {
                None => "undefined".to_owned(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => js_stringify(other),
            }
        })
        .into_owned()
}

/// Applies argument ops in place (§3.6). An op that throws gives its message.
pub fn apply_ops(obj: &mut Map<String, Value>, ops: &[Value]) -> Result<(), String> {
    for op in ops {
        let key = op.get("key").and_then(Value::as_str);
        match op.get("op").and_then(Value::as_str) {
            Some("set") => {
                if let Some(key) = key {
                    obj.insert(
                        key.to_owned(),
                        op.get("value").cloned().unwrap_or(Value::Null),
                    );
                }
            }
            Some("delete") => {
                if let Some(key) = key {
                    obj.shift_remove(key);
                }
            }
            Some("rename") => {
                let from = op.get("from").and_then(Value::as_str);
                let to = op.get("to").and_then(Value::as_str);
                if let (Some(from), Some(to)) = (from, to)
                    && let Some(v) = obj.shift_remove(from)
                {
                    obj.insert(to.to_owned(), v);
                }
            }
            Some("default") => {
                if let Some(key) = key
                    && !obj.contains_key(key)
                {
                    obj.insert(
                        key.to_owned(),
                        op.get("value").cloned().unwrap_or(Value::Null),
                    );
                }
            }
            Some("map") => {
                if let Some(key) = key
                    && let Some(Value::String(current)) = obj.get(key)
                    && let Some(replacement) = op.get("map").and_then(|m| m.get(current.as_str()))
                {
                    let replacement = replacement.clone();
                    obj.insert(key.to_owned(), replacement);
                }
            }
            Some("throwIfPresent") => {
                if let Some(key) = key
                    && obj.contains_key(key)
                {
                    return Err(op
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned());
                }
            }
            _ => return Err(format!("unknown arg op {op}")),
        }
    }
    Ok(())
}

/// Whether a rule's `match` applies to a call (§3.7).
pub fn rule_matches(rule: &Value, tool_call_id: &str, tool_name: &str) -> bool {
    let Some(m) = rule.get("match").and_then(Value::as_object) else {
        return true;
    };
    if let Some(id) = m.get("toolCallId")
        && id.as_str() != Some(tool_call_id)
    {
        return false;
    }
    if let Some(name) = m.get("toolName")
        && name.as_str() != Some(tool_name)
    {
        return false;
    }
    true
}

/// The first matching rule.
pub fn first_rule<'a>(
    rules: &'a [Value],
    tool_call_id: &str,
    tool_name: &str,
) -> Option<&'a Value> {
    rules
        .iter()
        .find(|r| rule_matches(r, tool_call_id, tool_name))
}

/// A rule's replacement `content` (`return.content`), read as typed content blocks; absent
/// or `null` keeps the result's own. `hook` names the hook in the error text.
pub fn rule_content(
    ret: &Value,
    hook: &str,
) -> Result<Option<Vec<pi_tool::Content>>, pi_tool::ToolError> {
    match ret.get("content") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone())
            .map(Some)
            .map_err(|e| pi_tool::ToolError::new(format!("untyped {hook} content: {e}"))),
    }
}

/// JSON equality with object key order ignored.
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| deep_equal(v, w))
        }
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// JavaScript truthiness of a JSON value.
pub fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ops_of_scenario_13() {
        let mut obj = json!({"location": "Paris", "unit": "F"})
            .as_object()
            .cloned()
            .unwrap();
        let ops = json!([
            {"op": "throwIfPresent", "key": "explode", "message": "boom"},
            {"op": "rename", "from": "location", "to": "city"},
            {"op": "map", "key": "unit", "map": {"F": "fahrenheit"}}
        ]);
        apply_ops(&mut obj, ops.as_array().unwrap()).unwrap();
        assert_eq!(
            serde_json::to_string(&obj).unwrap(),
            r#"{"unit":"fahrenheit","city":"Paris"}"#
        );
    }

    #[test]
    fn templates() {
        let args = json!({"city": "Paris", "n": 3.0, "flag": true});
        assert_eq!(
            render(
                &json!({"t": "${toolCallId}: ${args.city} ${args.n} ${args.flag} ${args.x}", "a": "${args}"}),
                &args,
                "c1"
            ),
            json!({"t": "c1: Paris 3 true undefined", "a": {"city": "Paris", "n": 3.0, "flag": true}})
        );
    }
}
