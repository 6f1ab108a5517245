//! The hostile-input corpus (`conformance/hostile/`) through an `AgentSession`: the
//! Pi's custom-tool page's `get_weather` as the session's custom tool, called by a local OpenAI-compatible
//! server with each payload's raw argument text (read by the `openai-completions`
//! provider). Every payload gets a readable error naming the problem, or a correct
//! success, within [`hostile::bound`], with no panic text, and memory stays bounded.

mod hostile;

use std::sync::Arc;
use std::time::Instant;

use hostile::provider::{FakeModel, answer_of};
use hostile::{Host, Tally};
use pi_tool::model::StreamFn;
use pi_tool::providers::Providers;
use pi_tool::session::AgentSession;
use weather_example::GetWeather;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_payload_gets_a_readable_answer_through_the_session() {
    let server = FakeModel::start();
    let providers: Arc<dyn StreamFn> = Arc::new(Providers::new());
    let corpus = hostile::load();
    let before = hostile::rss("self");
    let mut tally = Tally::default();
    for payload in corpus.iter().filter(|p| p.runs_on(Host::Session)) {
        server.will_call(&payload.tool, &payload.raw);
        let session = AgentSession::builder(providers.clone())
            .model(server.model())
            .stream_options(FakeModel::stream_options())
            .custom_tool(GetWeather)
            .build()
            .expect("the session builds");
        let started = Instant::now();
        let limit = hostile::bound(payload) * 2;
        let run = tokio::time::timeout(limit, session.prompt("Weather?")).await;
        let elapsed = started.elapsed();
        let answer = match run {
            Ok(Ok(())) => answer_of(&session.agent().messages()),
            Ok(Err(error)) => hostile::Answer {
                is_error: true,
                text: format!("the prompt failed: {error}"),
            },
            Err(_) => hostile::Answer {
                is_error: true,
                text: format!("no answer within {limit:?}"),
            },
        };
        session.dispose();
        tally.record(payload, Host::Session, &answer, elapsed);
    }
    let growth = hostile::rss("self").saturating_sub(before);
    tally.finish(Host::Session, growth);
}
