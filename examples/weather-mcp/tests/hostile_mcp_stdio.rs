//! The hostile-input corpus (`conformance/hostile/`) against the `weather-mcp` binary on
//! stdio, a real child process: each payload's raw text is the `arguments` of a
//! `tools/call` line. Every payload gets exactly one answer with its id (a readable
//! tool error, a JSON-RPC error naming the problem, or a correct success) within
//! [`hostile::bound`], with no panic text, and the server's memory stays bounded.

mod hostile;

use std::time::Instant;

use hostile::mcp::StdioServer;
use hostile::{Host, Tally};

#[test]
fn every_payload_gets_one_readable_answer_over_stdio() {
    let corpus = hostile::load();
    let mut server = StdioServer::start();
    let before = hostile::rss(&server.pid());
    let mut tally = Tally::default();
    for (id, payload) in (1..).zip(corpus.iter().filter(|p| p.runs_on(Host::Stdio))) {
        let started = Instant::now();
        let answer = server.call(id, &payload.tool, &payload.raw, hostile::bound(payload) * 2);
        tally.record(payload, Host::Stdio, &answer, started.elapsed());
    }
    let growth = hostile::rss(&server.pid()).saturating_sub(before);
    tally.finish(Host::Stdio, growth);
}
