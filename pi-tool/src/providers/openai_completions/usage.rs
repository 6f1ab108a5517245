//! `parseChunkUsage`: a chunk's `usage` as pi's token counts and cost.

use serde_json::Value;

use crate::model::{Model, Usage};
use crate::providers::cost::calculate_cost;

/// `parseChunkUsage`: input excludes cache reads and writes; `reasoning` is the
/// reasoning share of the output.
pub(super) fn parse_usage(raw: &Value, model: &Model) -> Usage {
    // `x || 0`: a missing, null, zero or non-number value counts as 0.
    let or_zero = |v: Option<&Value>| v.and_then(Value::as_f64).unwrap_or(0.0);
    // `a ?? b`: only a missing or null value falls through.
    fn present(v: Option<&Value>) -> Option<&Value> {
        v.filter(|v| !v.is_null())
    }
    let details = raw.get("prompt_tokens_details");
    let prompt = or_zero(raw.get("prompt_tokens"));
    let cache_read = present(details.and_then(|d| d.get("cached_tokens")))
        .or_else(|| present(raw.get("prompt_cache_hit_tokens")))
        .or_else(|| present(raw.get("cached_tokens")))
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let cache_write = or_zero(details.and_then(|d| d.get("cache_write_tokens")));
    let input = (prompt - cache_read - cache_write).max(0.0);
    let output = or_zero(raw.get("completion_tokens"));
    let reasoning = or_zero(
        raw.get("completion_tokens_details")
            .and_then(|d| d.get("reasoning_tokens")),
    );
    // Token counts are whole numbers in practice; a fraction or a negative count from a
    // broken server is truncated (and floored at zero) here.
    let tokens = |f: f64| f as u64;
    let mut usage = Usage {
        input: tokens(input),
        output: tokens(output),
        cache_read: tokens(cache_read),
        cache_write: tokens(cache_write),
        reasoning: Some(tokens(reasoning)),
        total_tokens: tokens(input + output + cache_read + cache_write),
        ..Usage::default()
    };
    calculate_cost(model, &mut usage);
    usage
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn usage_subtracts_cache_reads_and_writes() {
        let model = Model::new("m", "openai-completions", "openai");
        let usage = parse_usage(
            &json!({
                "prompt_tokens": 100,
                "completion_tokens": 20,
                "prompt_tokens_details": {"cached_tokens": 30, "cache_write_tokens": 10},
                "completion_tokens_details": {"reasoning_tokens": 5}
            }),
            &model,
        );
        assert_eq!(
            (
                usage.input,
                usage.output,
                usage.cache_read,
                usage.cache_write
            ),
            (60, 20, 30, 10)
        );
        assert_eq!((usage.reasoning, usage.total_tokens), (Some(5), 120));
        let deepseek = parse_usage(
            &json!({"prompt_tokens": 10, "prompt_cache_hit_tokens": 4, "completion_tokens": 1}),
            &model,
        );
        assert_eq!((deepseek.input, deepseek.cache_read), (6, 4));
    }
}
