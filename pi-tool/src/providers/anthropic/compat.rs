//! The Anthropic switches of `model.compat` (pi-ai's `getAnthropicCompat` and the flags
//! `buildParams` reads directly), with pi-ai's defaults.

use serde_json::Value;

use crate::model::{Model, ModelCost};

/// A model the server may fall back to (`compat.allowedFallbackModels[]`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FallbackModel {
    pub(super) provider: Option<String>,
    pub(super) model: String,
    pub(super) cost: Option<ModelCost>,
}

/// The switches, read leniently: a key of the wrong type counts as absent.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct AnthropicCompat {
    pub(super) supports_eager_tool_input_streaming: bool,
    pub(super) supports_long_cache_retention: bool,
    pub(super) send_session_affinity_headers: bool,
    pub(super) supports_cache_control_on_tools: bool,
    pub(super) supports_temperature: bool,
    pub(super) allow_empty_signature: bool,
    pub(super) supports_tool_references: bool,
    /// `compat.supportsMidConvoEffort === true`: managed adaptive effort.
    pub(super) mid_convo_effort: bool,
    /// `compat.forceAdaptiveThinking === true`.
    pub(super) force_adaptive_thinking: bool,
    pub(super) allowed_fallback_models: Vec<FallbackModel>,
}

impl AnthropicCompat {
    pub(super) fn of(model: &Model) -> Self {
        let compat = model.compat.as_ref();
        let flag = |key: &str| compat.and_then(|c| c.get(key)).and_then(Value::as_bool);
        AnthropicCompat {
            supports_eager_tool_input_streaming: flag("supportsEagerToolInputStreaming")
                .unwrap_or(true),
            supports_long_cache_retention: flag("supportsLongCacheRetention").unwrap_or(true),
            send_session_affinity_headers: flag("sendSessionAffinityHeaders").unwrap_or(false),
            supports_cache_control_on_tools: flag("supportsCacheControlOnTools").unwrap_or(true),
            supports_temperature: flag("supportsTemperature").unwrap_or(true),
            allow_empty_signature: flag("allowEmptySignature").unwrap_or(false),
            supports_tool_references: flag("supportsToolReferences")
                .unwrap_or_else(|| default_supports_tool_references(model)),
            mid_convo_effort: flag("supportsMidConvoEffort") == Some(true),
            force_adaptive_thinking: flag("forceAdaptiveThinking") == Some(true),
            allowed_fallback_models: compat
                .and_then(|c| c.get("allowedFallbackModels"))
                .and_then(Value::as_array)
                .map(|list| list.iter().filter_map(fallback_model).collect())
                .unwrap_or_default(),
        }
    }
}

fn fallback_model(value: &Value) -> Option<FallbackModel> {
    Some(FallbackModel {
        provider: value
            .get("provider")
            .and_then(Value::as_str)
            .map(str::to_owned),
        model: value.get("model")?.as_str()?.to_owned(),
        cost: value
            .get("cost")
            .and_then(|c| serde_json::from_value(c.clone()).ok()),
    })
}

/// pi-ai's `defaultSupportsToolReferences`: first-party Anthropic models from Opus/Sonnet
/// 4.5 on, except Haiku.
fn default_supports_tool_references(model: &Model) -> bool {
    if model.provider != "anthropic" || model.id.contains("haiku") {
        return false;
    }
    // /^claude-(?:opus|sonnet|fable)-(\d+)(?:-(\d+))?(?:-|$)/
    let Some(rest) = ["claude-opus-", "claude-sonnet-", "claude-fable-"]
        .iter()
        .find_map(|prefix| model.id.strip_prefix(prefix))
    else {
        return false;
    };
    let (major, rest) = split_digits(rest);
    let Some(major) = major else {
        return false;
    };
    let (minor, tail) = match rest.strip_prefix('-') {
        Some(after) => match split_digits(after) {
            (Some(minor), tail) if tail.is_empty() || tail.starts_with('-') => (Some(minor), tail),
            // `-` then no digits: the optional group is skipped and `-` ends the match.
            _ => (None, rest),
        },
        None => (None, rest),
    };
    if !(tail.is_empty() || tail.starts_with('-')) {
        return false;
    }
    let major: f64 = major.parse().unwrap_or(f64::NAN);
    // A date-like second group (8+ digits) is not a minor version.
    let minor: f64 = minor
        .filter(|m| m.len() < 8)
        .map_or(0.0, |m| m.parse().unwrap_or(f64::NAN));
    major > 4.0 || (major == 4.0 && minor >= 5.0)
}

fn split_digits(text: &str) -> (Option<&str>, &str) {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    if end == 0 {
        (None, text)
    } else {
        (Some(&text[..end]), &text[end..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(id: &str) -> bool {
        default_supports_tool_references(&Model::new(id, "anthropic-messages", "anthropic"))
    }

    #[test]
    fn tool_references_follow_pi_ais_model_rule() {
        assert!(refs("claude-sonnet-4-5"));
        assert!(refs("claude-sonnet-4-5-20250929"));
        assert!(refs("claude-opus-5"));
        assert!(refs("claude-opus-4-6"));
        assert!(!refs("claude-opus-4-1"));
        assert!(!refs("claude-sonnet-4-20250514"));
        assert!(!refs("claude-haiku-4-5"));
        assert!(!refs("claude-3-7-sonnet"));
        assert!(!refs("claude-sonnet-45x"));
        assert!(!default_supports_tool_references(&Model::new(
            "claude-sonnet-4-5",
            "anthropic-messages",
            "other"
        )));
    }

    #[test]
    fn defaults_and_wrong_types() {
        let mut model = Model::new("m", "anthropic-messages", "x");
        model.compat = Some(serde_json::json!({
            "supportsTemperature": false,
            "supportsEagerToolInputStreaming": "no",
            "forceAdaptiveThinking": true,
            "allowedFallbackModels": [{"model": "b", "provider": "x"}, {"provider": "y"}]
        }));
        let compat = AnthropicCompat::of(&model);
        assert!(!compat.supports_temperature);
        assert!(compat.supports_eager_tool_input_streaming);
        assert!(compat.force_adaptive_thinking);
        assert_eq!(compat.allowed_fallback_models.len(), 1);
    }
}
