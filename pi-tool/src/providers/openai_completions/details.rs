//! OpenRouter's `reasoning_details`: which entries pi-ai accepts, how streamed entries
//! merge, and how a replayed signature is read back.

use serde_json::{Map, Value};

use crate::providers::openai_sse::js_truthy;

/// `isOpenAIReasoningDetail`: one entry of OpenRouter's `reasoning_details`.
pub(super) fn is_reasoning_detail(detail: &Value) -> bool {
    let Value::Object(d) = detail else {
        return false;
    };
    let string_or_absent = |key: &str| d.get(key).is_none_or(Value::is_string);
    let common = d.get("id").is_none_or(|v| v.is_null() || v.is_string())
        && string_or_absent("format")
        && d.get("index").is_none_or(Value::is_number);
    if !common {
        return false;
    }
    let is_string = |key: &str| d.get(key).is_some_and(Value::is_string);
    match d.get("type").and_then(Value::as_str) {
        Some("reasoning.summary") => is_string("summary"),
        Some("reasoning.encrypted") => is_string("data"),
        Some("reasoning.text") => {
            is_string("text")
                && d.get("signature")
                    .is_none_or(|v| v.is_null() || v.is_string())
        }
        _ => false,
    }
}

/// `parseOpenAIReasoningDetails`: a signature that is a non-empty array of details.
pub(super) fn parse_reasoning_details(signature: Option<&str>) -> Option<Vec<Value>> {
    let parsed: Value = serde_json::from_str(signature.filter(|s| !s.is_empty())?).ok()?;
    match parsed {
        Value::Array(items) if !items.is_empty() && items.iter().all(is_reasoning_detail) => {
            Some(items)
        }
        _ => None,
    }
}

/// `parseLegacyEncryptedReasoningDetail`: a tool call's signature holding one
/// encrypted detail with an id and data.
pub(super) fn parse_legacy_encrypted_detail(signature: Option<&str>) -> Option<Value> {
    let parsed: Value = serde_json::from_str(signature.filter(|s| !s.is_empty())?).ok()?;
    let ok = is_reasoning_detail(&parsed)
        && parsed.get("type").and_then(Value::as_str) == Some("reasoning.encrypted")
        && parsed
            .get("id")
            .and_then(Value::as_str)
            .is_some_and(|id| !id.is_empty())
        && parsed
            .get("data")
            .and_then(Value::as_str)
            .is_some_and(|d| !d.is_empty());
    ok.then_some(parsed)
}

/// `appendOpenAIReasoningDetail`: consecutive text (or summary) deltas merge into one
/// entry; encrypted entries stay separate.
pub(super) fn append_reasoning_detail(details: &mut Vec<Value>, detail: &Value) {
    let kind = |v: &Value| v.get("type").and_then(Value::as_str).map(str::to_owned);
    let detail_kind = kind(detail);
    if let Some(Value::Object(last)) = details.last_mut()
        && let Value::Object(source) = detail
        && detail_kind == kind(&Value::Object(last.clone()))
        && let Some(field) = match detail_kind.as_deref() {
            Some("reasoning.text") => Some("text"),
            Some("reasoning.summary") => Some("summary"),
            _ => None,
        }
    {
        let added = source
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or_default();
        let merged = format!(
            "{}{added}",
            last.get(field).and_then(Value::as_str).unwrap_or_default()
        );
        last.insert(field.to_owned(), Value::String(merged));
        if field == "text" {
            or_assign(last, source, "signature");
        }
        // `id ??=`, `format ||=`, `index ??=`.
        nullish_assign(last, source, "id");
        or_assign(last, source, "format");
        nullish_assign(last, source, "index");
        return;
    }
    details.push(detail.clone());
}

/// `target[key] ??= source[key]` (an absent source value leaves the key undefined,
/// which JSON drops).
fn nullish_assign(target: &mut Map<String, Value>, source: &Map<String, Value>, key: &str) {
    if target.get(key).is_none_or(Value::is_null) {
        assign(target, source, key);
    }
}

/// `target[key] ||= source[key]`.
fn or_assign(target: &mut Map<String, Value>, source: &Map<String, Value>, key: &str) {
    if !target.get(key).is_some_and(js_truthy) {
        assign(target, source, key);
    }
}

fn assign(target: &mut Map<String, Value>, source: &Map<String, Value>, key: &str) {
    match source.get(key) {
        Some(value) => {
            target.insert(key.to_owned(), value.clone());
        }
        None => {
            target.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reasoning_details_are_validated() {
        assert!(is_reasoning_detail(
            &json!({"type": "reasoning.text", "text": "t", "signature": null})
        ));
        assert!(!is_reasoning_detail(&json!({"type": "reasoning.text"})));
        assert!(!is_reasoning_detail(
            &json!({"type": "reasoning.summary", "summary": "s", "index": "0"})
        ));
        assert_eq!(parse_reasoning_details(Some("[]")), None);
        assert!(
            parse_reasoning_details(Some(r#"[{"type":"reasoning.encrypted","data":"x"}]"#))
                .is_some()
        );
    }
    #[test]
    fn reasoning_text_deltas_merge() {
        let mut details = Vec::new();
        append_reasoning_detail(
            &mut details,
            &json!({"type": "reasoning.text", "text": "a", "format": ""}),
        );
        append_reasoning_detail(
            &mut details,
            &json!({"type": "reasoning.text", "text": "b", "signature": "s", "format": "f", "id": "r1"}),
        );
        append_reasoning_detail(
            &mut details,
            &json!({"type": "reasoning.encrypted", "data": "x"}),
        );
        assert_eq!(
            details,
            [
                json!({"type": "reasoning.text", "text": "ab", "format": "f", "signature": "s", "id": "r1"}),
                json!({"type": "reasoning.encrypted", "data": "x"})
            ]
        );
    }
}
