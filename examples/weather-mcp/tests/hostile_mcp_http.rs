//! The hostile-input corpus (`conformance/hostile/`) against the `weather-mcp` binary over
//! streamable HTTP, a real child process: each payload's raw text is the `arguments` of a
//! `tools/call` POST. Every payload gets exactly one answer with its id (a readable
//! tool error, a JSON-RPC error naming the problem, or a correct success) within
//! [`hostile::bound`], with no panic text, and the server's memory stays bounded.

mod hostile;

use std::time::Instant;

use hostile::mcp::HttpServer;
use hostile::{Host, Tally};

#[test]
fn every_payload_gets_one_readable_answer_over_streamable_http() {
    let corpus = hostile::load();
    let mut server = HttpServer::start();
    let before = hostile::rss(&server.pid());
    let mut tally = Tally::default();
    for (id, payload) in (1..).zip(corpus.iter().filter(|p| p.runs_on(Host::Http))) {
        let started = Instant::now();
        let answer = server.call(id, &payload.tool, &payload.raw, hostile::bound(payload) * 2);
        tally.record(payload, Host::Http, &answer, started.elapsed());
    }
    let growth = hostile::rss(&server.pid()).saturating_sub(before);
    tally.finish(Host::Http, growth);
}
