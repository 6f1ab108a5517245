//! Schema work: normalisation and a profile run happen once per tool; stripping
//! OpenAI strict's injected nulls happens on every call.

use criterion::{Criterion, criterion_group, criterion_main};
use pi_tool::JsonSchema;
use pi_tool::profiles::{Profile, openai_strict};
use pi_tool::schema::{generate, normalize};
use serde_json::json;

#[allow(dead_code)]
#[derive(JsonSchema)]
struct Filter {
    from: String,
    to: Option<String>,
}

/// A search tool's parameters.
#[allow(dead_code)]
#[derive(JsonSchema)]
struct SearchArgs {
    /// The query
    query: String,
    #[serde(default)]
    limit: u32,
    site: Option<String>,
    filters: Vec<Filter>,
    #[serde(default)]
    verbose: bool,
}

fn benches(c: &mut Criterion) {
    let raw = generate::<SearchArgs>();
    c.bench_function("normalize SearchArgs", |b| {
        b.iter(|| normalize(raw.clone()))
    });
    let Ok(normalized) = normalize(raw) else {
        return;
    };
    let canonical = normalized.schema;
    c.bench_function("profile openai-strict SearchArgs", |b| {
        b.iter(|| Profile::OpenAiStrict.apply(&canonical))
    });
    let reverse = openai_strict(&canonical).reverse;
    let args = json!({
        "query": "rust", "limit": null, "site": null, "verbose": null,
        "filters": [{"from": "2024", "to": null}, {"from": "2025", "to": "2026"}]
    });
    c.bench_function("strip_injected_nulls (per call)", |b| {
        b.iter(|| {
            let mut a = args.clone();
            reverse.strip_injected_nulls(&mut a);
            a
        })
    });
}

criterion_group!(schema_profiles, benches);
criterion_main!(schema_profiles);
