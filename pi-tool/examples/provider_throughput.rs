//! The Rust side of `bench/compare-providers-with-pi.mjs`: our openai-completions
//! provider and the bare SSE floor, reading the responses that script serves.
//!
//!     provider_throughput ORIGIN SIZES ROUNDS
//!
//! `ORIGIN/SIZE/v1` is the base URL of the response with SIZE argument bytes. Prints
//! `{"SIZE": {"provider_ms": .., "floor_ms": ..}}` (medians of ROUNDS runs after a warm-up).

#[path = "../benches/support/stream_bench.rs"]
mod stream_bench;

use std::time::Duration;

use pi_tool::providers::Providers;

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e3
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let origin = args.next().expect("ORIGIN");
    let sizes: Vec<usize> = args
        .next()
        .expect("SIZES")
        .split(',')
        .map(|s| s.parse().expect("a size in bytes"))
        .collect();
    let rounds: usize = args.next().map_or(5, |r| r.parse().expect("ROUNDS"));
    let providers = Providers::new();
    let client = reqwest::Client::new();
    let mut out = serde_json::Map::new();
    for size in sizes {
        let model = stream_bench::model(&format!("{origin}/{size}"));
        stream_bench::provider_run(&providers, &model, size).await;
        stream_bench::floor_run(&client, &model).await;
        let mut provider = Vec::new();
        let mut floor = Vec::new();
        for _ in 0..rounds.max(1) {
            provider.push(stream_bench::provider_run(&providers, &model, size).await);
            floor.push(stream_bench::floor_run(&client, &model).await);
        }
        out.insert(
            size.to_string(),
            serde_json::json!({"provider_ms": median(provider), "floor_ms": median(floor)}),
        );
    }
    println!("{}", serde_json::Value::Object(out));
}
