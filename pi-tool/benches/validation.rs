//! The per-call cost of argument validation for a get_weather-like tool: valid arguments
//! (the fast path, no error text), invalid ones (full TypeBox error walk and Pi's text),
//! arguments that need coercion, and compiling the schema (once per tool).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use pi_tool::json;
use pi_tool::schema::ToolSchema;

fn weather_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1, "maxLength": 80},
            "unit": {"enum": ["celsius", "fahrenheit"]}
        },
        "required": ["city"],
        "additionalProperties": false
    })
}

fn bench(c: &mut Criterion) {
    let schema = ToolSchema::from_json(weather_schema());
    let valid = json!({"city": "Tokyo", "unit": "celsius"});
    let invalid = json!({"city": "", "unit": "kelvin", "country": "JP"});
    let coerced = json!({"city": 12345, "unit": null});
    assert!(schema.validate("get_weather", &valid).is_ok());
    assert!(schema.validate("get_weather", &invalid).is_err());
    assert!(schema.validate("get_weather", &coerced).is_ok());

    let mut group = c.benchmark_group("get_weather");
    // The floor: validate returns an owned copy of the arguments, so it costs at least a clone.
    group.bench_function("baseline_clone", |b| b.iter(|| black_box(&valid).clone()));
    group.bench_function("validate_valid", |b| {
        b.iter(|| schema.validate(black_box("get_weather"), black_box(&valid)))
    });
    group.bench_function("validate_invalid", |b| {
        b.iter(|| schema.validate(black_box("get_weather"), black_box(&invalid)))
    });
    group.bench_function("validate_coerced", |b| {
        b.iter(|| schema.validate(black_box("get_weather"), black_box(&coerced)))
    });
    group.bench_function("compile", |b| {
        b.iter(|| ToolSchema::from_json(black_box(weather_schema())))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
