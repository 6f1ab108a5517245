//! The safety helpers on the per-call path: redaction of error messages and result
//! budgets. `cargo bench -p pi-tool --bench safety`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use pi_tool::safety::{Redactor, ResultBudget};
use pi_tool::{AgentToolResult, Content, JsonToolResult};

fn redaction(c: &mut Criterion) {
    let redactor = Redactor::new(["configured-secret-0001", "configured-secret-0002"])
        .expect("secrets are long enough");
    let clean = "Validation failed for tool \"get_weather\":\n  - city: must be string\n\n\
                 Received arguments:\n{\n  \"city\": 42\n}";
    let dirty = "GET https://api.example.com/v1/weather?city=Tokyo&api_key=abc123 failed: \
                 401 Unauthorized (Authorization: Bearer sk-proj-AbCdEf0123456789XyZ) \
                 configured-secret-0001";
    let long_clean = clean.repeat(100);
    c.bench_function("redact/clean_error", |b| {
        b.iter(|| redactor.redact(black_box(clean)).len())
    });
    c.bench_function("redact/error_with_secrets", |b| {
        b.iter(|| redactor.redact(black_box(dirty)).len())
    });
    c.bench_function("redact/clean_20kb", |b| {
        b.iter(|| redactor.redact(black_box(&long_clean)).len())
    });
}

fn budget(c: &mut Criterion) {
    let budget = ResultBudget::default();
    let small = JsonToolResult::new(vec![Content::text("Tokyo: 24 degrees celsius")], None);
    let big: String = (1..=20_000)
        .map(|i| format!("log line number {i}\n"))
        .collect();
    c.bench_function("budget/small_result_fits", |b| {
        b.iter(|| budget.apply_json(black_box(small.clone())))
    });
    c.bench_function("budget/20k_lines_cut", |b| {
        b.iter(|| budget.apply(black_box(AgentToolResult::text(big.clone(), ()))))
    });
}

criterion_group!(benches, redaction, budget);
criterion_main!(benches);
