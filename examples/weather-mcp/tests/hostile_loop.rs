//! The hostile-input corpus (`conformance/hostile/`) through the agent loop: an `Agent`
//! whose model (a local OpenAI-compatible server, read by the `openai-completions`
//! provider) calls `get_weather` from Pi's custom-tool page with each payload's raw argument text. Every
//! payload gets a readable error naming the problem, or a correct success, within
//! [`hostile::bound`], with no panic text, and the process's memory stays bounded.

mod hostile;

use std::sync::Arc;
use std::time::Instant;

use hostile::provider::{FakeModel, answer_of};
use hostile::{Host, Tally};
use pi_tool::IntoAgentTool;
use pi_tool::agent::{Agent, AgentOptions};
use pi_tool::model::StreamFn;
use pi_tool::providers::Providers;
use weather_example::GetWeather;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_payload_gets_a_readable_answer_through_the_agent_loop() {
    let server = FakeModel::start();
    let providers: Arc<dyn StreamFn> = Arc::new(Providers::new());
    let corpus = hostile::load();
    let before = hostile::rss("self");
    let mut tally = Tally::default();
    for payload in corpus.iter().filter(|p| p.runs_on(Host::Loop)) {
        server.will_call(&payload.tool, &payload.raw);
        let agent = Agent::new(
            AgentOptions::new(providers.clone())
                .model(server.model())
                .stream_options(FakeModel::stream_options())
                .tools(vec![GetWeather.into_agent_tool()]),
        );
        let started = Instant::now();
        let limit = hostile::bound(payload) * 2;
        let run = tokio::time::timeout(limit, agent.prompt("Weather?")).await;
        let elapsed = started.elapsed();
        let answer = match run {
            Ok(_) => answer_of(&agent.messages()),
            Err(_) => hostile::Answer {
                is_error: true,
                text: format!("no answer within {limit:?}"),
            },
        };
        tally.record(payload, Host::Loop, &answer, elapsed);
    }
    let growth = hostile::rss("self").saturating_sub(before);
    tally.finish(Host::Loop, growth);
}
