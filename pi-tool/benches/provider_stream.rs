//! A streamed openai-completions response through our provider, with one tool call whose
//! arguments are 10 KB, 1 MB and 10 MB in 4 KB deltas, served from 127.0.0.1; beside it
//! the floor, a bare SSE decode of the same bytes over the same kind of connection.
//! Throughput is per argument byte: the target is a flat time per byte from 10 KB to
//! 10 MB (pi-ai re-parses the whole partial arguments on every delta, which is quadratic).
//! `bench/compare-providers-with-pi.mjs` runs pi-ai on the same bytes in the same run.

#[path = "support/stream_bench.rs"]
mod stream_bench;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pi_tool::providers::Providers;

fn provider_stream(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let providers = Providers::new();
    let client = reqwest::Client::new();
    let mut group = c.benchmark_group("provider_stream");
    group.sample_size(10);
    for size in [10_000usize, 1_000_000, 10_000_000] {
        let origin = runtime.block_on(stream_bench::serve(stream_bench::body(size)));
        let model = stream_bench::model(&origin);
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(
            BenchmarkId::new("openai_completions", size),
            &size,
            |b, &size| {
                b.iter(|| runtime.block_on(stream_bench::provider_run(&providers, &model, size)))
            },
        );
        group.bench_with_input(BenchmarkId::new("floor_sse_decode", size), &size, |b, _| {
            b.iter(|| runtime.block_on(stream_bench::floor_run(&client, &model)))
        });
    }
    group.finish();
}

criterion_group!(benches, provider_stream);
criterion_main!(benches);
