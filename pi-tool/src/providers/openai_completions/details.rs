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

/// One entry of the streamed `reasoning_details`, as pi-ai's object holds it.
///
/// pi-ai merges deltas with `target.id ??= source.id` and the like. When the source has
/// no such key, JavaScript still assigns `undefined`: the key takes (or keeps) its place
/// among the object's keys, `JSON.stringify` skips it while it is `undefined`, and a later
/// assignment fills that same place. So the entry keeps a slot for each such key, and
/// serialises without them.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct StreamedDetail {
    /// Every key in JavaScript's order; an `undefined` one holds `null` here.
    slots: Map<String, Value>,
    /// The keys of `slots` that are `undefined`.
    undefined: Vec<String>,
}

impl StreamedDetail {
    /// `{ ...detail }`: a copy of an entry as it arrived.
    fn copy_of(detail: &Map<String, Value>) -> Self {
        Self {
            slots: detail.clone(),
            undefined: Vec::new(),
        }
    }

    /// `detail[key]`, `None` for `undefined`.
    fn get(&self, key: &str) -> Option<&Value> {
        if self.undefined.iter().any(|k| k == key) {
            return None;
        }
        self.slots.get(key)
    }

    /// `detail[key] = value`; `None` assigns `undefined`, which keeps (or takes) the slot.
    fn set(&mut self, key: &str, value: Option<&Value>) {
        self.undefined.retain(|k| k != key);
        match value {
            Some(value) => {
                self.slots.insert(key.to_owned(), value.clone());
            }
            None => {
                self.slots.insert(key.to_owned(), Value::Null);
                self.undefined.push(key.to_owned());
            }
        }
    }

    /// What `JSON.stringify` writes: the defined keys, in their places.
    pub(super) fn to_json(&self) -> Value {
        Value::Object(
            self.slots
                .iter()
                .filter(|(key, _)| !self.undefined.contains(key))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect(),
        )
    }
}

/// `appendOpenAIReasoningDetail`: consecutive text (or summary) deltas merge into one
/// entry; encrypted entries stay separate.
pub(super) fn append_reasoning_detail(details: &mut Vec<StreamedDetail>, detail: &Value) {
    let Value::Object(source) = detail else {
        return;
    };
    let kind = source.get("type").and_then(Value::as_str);
    if let Some(last) = details.last_mut()
        && kind == last.get("type").and_then(Value::as_str)
        && let Some(field) = match kind {
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
        last.set(field, Some(&Value::String(merged)));
        if field == "text" {
            or_assign(last, source, "signature");
        }
        // `fillMissingCommonReasoningDetailFields`: `id ??=`, `format ||=`, `index ??=`.
        nullish_assign(last, source, "id");
        or_assign(last, source, "format");
        nullish_assign(last, source, "index");
        return;
    }
    details.push(StreamedDetail::copy_of(source));
}

/// `target[key] ??= source[key]`.
fn nullish_assign(target: &mut StreamedDetail, source: &Map<String, Value>, key: &str) {
    if target.get(key).is_none_or(Value::is_null) {
        target.set(key, source.get(key));
    }
}

/// `target[key] ||= source[key]`.
fn or_assign(target: &mut StreamedDetail, source: &Map<String, Value>, key: &str) {
    if !target.get(key).is_some_and(js_truthy) {
        target.set(key, source.get(key));
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
            details
                .iter()
                .map(StreamedDetail::to_json)
                .collect::<Vec<_>>(),
            [
                json!({"type": "reasoning.text", "text": "ab", "format": "f", "signature": "s", "id": "r1"}),
                json!({"type": "reasoning.encrypted", "data": "x"})
            ]
        );
    }

    /// pi-ai's merge assigns `undefined` for a key the delta lacks; the key keeps that
    /// place, so a later value lands there, and a `null` made `undefined` does not move
    /// the keys after it (as serde_json's `remove` would).
    #[test]
    fn an_undefined_key_keeps_its_place() {
        let mut details = Vec::new();
        for delta in [
            json!({"type": "reasoning.text", "text": "a"}),
            // signature, id and index become undefined slots, in that order, format is set.
            json!({"type": "reasoning.text", "text": "b", "format": "f"}),
            json!({"type": "reasoning.text", "text": "c", "index": 0, "id": "r1", "signature": "s"}),
        ] {
            append_reasoning_detail(&mut details, &delta);
        }
        assert_eq!(
            crate::js::stringify(&details[0].to_json()),
            r#"{"type":"reasoning.text","text":"abc","signature":"s","id":"r1","format":"f","index":0}"#
        );

        let mut details = Vec::new();
        for delta in [
            json!({"type": "reasoning.summary", "id": null, "summary": "a", "format": "f"}),
            json!({"type": "reasoning.summary", "summary": "b"}),
        ] {
            append_reasoning_detail(&mut details, &delta);
        }
        assert_eq!(
            crate::js::stringify(&details[0].to_json()),
            r#"{"type":"reasoning.summary","summary":"ab","format":"f"}"#
        );
        append_reasoning_detail(
            &mut details,
            &json!({"type": "reasoning.summary", "summary": "c", "id": "r2"}),
        );
        assert_eq!(
            crate::js::stringify(&details[0].to_json()),
            r#"{"type":"reasoning.summary","id":"r2","summary":"abc","format":"f"}"#
        );
    }
}
