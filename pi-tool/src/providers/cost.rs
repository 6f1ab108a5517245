//! Usage cost, computed as pi-ai computes it (`calculateCost` in pi-ai's `models.js`),
//! in the same order of floating-point operations so that the bits match.

use crate::model::{Model, Usage};

/// Fills `usage.cost` from the model's prices: the highest price tier whose threshold the
/// request's input (input + cache read + cache write) exceeds, else the base prices;
/// one-hour cache writes cost twice the input price.
pub(crate) fn calculate_cost(model: &Model, usage: &mut Usage) {
    // Counts come from the provider (pi-ai adds doubles): saturate instead of overflowing.
    let input_tokens = usage
        .input
        .saturating_add(usage.cache_read)
        .saturating_add(usage.cache_write);
    let base = &model.cost;
    let (mut input, mut output, mut cache_read, mut cache_write) =
        (base.input, base.output, base.cache_read, base.cache_write);
    let mut matched: Option<u64> = None;
    for tier in base.tiers.iter().flatten() {
        if input_tokens > tier.input_tokens_above
            && matched.is_none_or(|m| tier.input_tokens_above > m)
        {
            (input, output, cache_read, cache_write) =
                (tier.input, tier.output, tier.cache_read, tier.cache_write);
            matched = Some(tier.input_tokens_above);
        }
    }
    let long_write = usage.cache_write_1h.unwrap_or(0) as f64;
    let short_write = usage.cache_write as f64 - long_write;
    usage.cost.input = (input / 1_000_000.0) * usage.input as f64;
    usage.cost.output = (output / 1_000_000.0) * usage.output as f64;
    usage.cost.cache_read = (cache_read / 1_000_000.0) * usage.cache_read as f64;
    usage.cost.cache_write = (cache_write * short_write + input * 2.0 * long_write) / 1_000_000.0;
    usage.cost.total =
        usage.cost.input + usage.cost.output + usage.cost.cache_read + usage.cost.cache_write;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ModelCost, ModelCostTier};

    #[test]
    fn the_bits_are_pi_ais() {
        let mut model = Model::new("m", "anthropic-messages", "anthropic");
        model.cost = ModelCost::new(3.0, 15.0, 0.3, 3.75);
        let mut usage = Usage {
            input: 1234,
            output: 56,
            ..Usage::default()
        };
        calculate_cost(&model, &mut usage);
        // pi-ai: (3 / 1000000) * 1234 = 0.003702, (15 / 1000000) * 56 = 0.00084
        assert_eq!(usage.cost.input, (3.0 / 1_000_000.0) * 1234.0);
        assert_eq!(usage.cost.total, usage.cost.input + usage.cost.output);
    }

    #[test]
    fn the_highest_exceeded_tier_applies() {
        let mut model = Model::new("m", "openai-responses", "openai");
        model.cost.input = 1.0;
        model.cost.tiers = Some(vec![
            ModelCostTier::new(100, 2.0, 0.0, 0.0, 0.0),
            ModelCostTier::new(1000, 4.0, 0.0, 0.0, 0.0),
        ]);
        let mut usage = Usage {
            input: 500,
            ..Usage::default()
        };
        calculate_cost(&model, &mut usage);
        assert_eq!(usage.cost.input, (2.0 / 1_000_000.0) * 500.0);
    }
}
