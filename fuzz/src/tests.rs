//! The harness itself: a recorded answer reaches the provider's parser and ends in
//! `done` (so the provider targets fuzz the parser, not a connection error), the chunk
//! cutter keeps every byte, and the stream checks do refuse a broken stream.
//!
//! `cargo test --lib` in fuzz/ (stable is enough: the `__fuzz` modules are not needed, and
//! the targets, which need them, are not built).

use crate::input::{cut, cut_str, expand};
use crate::provider::{API_KEY, Api, check_events, run};
use pi_tool::model::{AssistantMessage, AssistantMessageEvent, Model, StopReason};
use std::sync::Arc;

fn seed(target: &str, name: &str) -> Vec<u8> {
    let path = format!("{}/corpus/{target}/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn assert_done_with_text(events: &[AssistantMessageEvent], text: &str) {
    let names: Vec<_> = events.iter().map(|e| e.name()).collect();
    match events.last() {
        Some(AssistantMessageEvent::Done { message, .. }) => {
            let json = serde_json::to_string(&**message).unwrap();
            assert!(json.contains(text), "{json}");
        }
        Some(AssistantMessageEvent::Error { error, .. }) => {
            panic!("not done: {names:?}: {:?}", error.error_message)
        }
        _ => panic!("not done: {names:?}"),
    }
    assert!(names.contains(&"text_delta"), "{names:?}");
}

#[test]
fn recorded_answers_reach_the_parsers() {
    let events = run(Api::Anthropic, &seed("anthropic_stream", "text-basic"));
    assert_done_with_text(&events, "Hello");
    let events = run(
        Api::Completions,
        &seed("openai_completions_stream", "text-basic"),
    );
    assert_done_with_text(&events, "Hello");
    let events = run(
        Api::Responses,
        &seed("openai_responses_stream", "text-basic"),
    );
    assert_done_with_text(&events, "Hello");
}

#[test]
fn an_error_status_ends_in_error() {
    let events = run(
        Api::Completions,
        &seed("openai_completions_stream", "http-500-text"),
    );
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].name(), "error");
}

#[test]
#[should_panic(expected = "without any event")]
fn a_stream_without_events_is_refused() {
    check_events(Api::Anthropic, API_KEY, &[]);
}

#[test]
#[should_panic(expected = "the key in an error")]
fn a_key_in_an_error_is_refused() {
    let model = Model::new("m", "anthropic-messages", "anthropic");
    let mut message = AssistantMessage::empty(&model, StopReason::Error);
    message.error_message = Some(format!("401 bad key {API_KEY}"));
    let error = AssistantMessageEvent::Error {
        reason: StopReason::Error,
        error: Arc::new(message),
    };
    check_events(Api::Anthropic, API_KEY, &[error]);
}

#[test]
fn cuts_keep_every_byte_in_order() {
    let body: Vec<u8> = (0..=255).cycle().take(5000).collect();
    for (max, seed) in [(0, 0), (1, 7), (13, 3), (255, 255)] {
        let chunks = cut(&body, max, seed);
        assert_eq!(chunks.concat(), body);
        assert!(chunks.iter().all(|c| max == 0 || c.len() <= max));
    }
    let text = "aé漢😀".repeat(100);
    assert_eq!(cut_str(&text, 2, 9).concat(), text);
}

#[test]
fn amplified_inputs_expand() {
    let big = expand(&[0xFA, 2, 1, b'[', b']']);
    assert_eq!(big.bytes().len(), 1025);
    assert!(big.bytes()[..1024].iter().all(|b| *b == b'['));
    assert_eq!(expand(b"[1]").bytes(), b"[1]");
}

#[test]
fn an_error_event_without_data_has_a_text() {
    let data = seed("anthropic_stream", "regression-empty-error-event-93b1e04f");
    let events = run(Api::Anthropic, &data);
    let Some(AssistantMessageEvent::Error { error, .. }) = events.last() else {
        panic!("not an error: {:?}", events.last().map(|e| e.name()));
    };
    assert_eq!(
        error.error_message.as_deref(),
        Some("Anthropic stream sent an error event without data")
    );
}

#[test]
fn a_later_stop_reason_takes_its_error_text_with_it() {
    let data = seed(
        "openai_completions_stream",
        "regression-done-with-error-5c8fd6ff",
    );
    // run() checks that a `done` carries no error text.
    let events = run(Api::Completions, &data);
    assert!(!events.is_empty());
}

#[test]
fn huge_token_counts_do_not_overflow() {
    let data = seed("anthropic_stream", "regression-usage-overflow-f0797910");
    // Under overflow checks (the test profile), the sum of counts near u64::MAX panicked.
    let events = run(Api::Anthropic, &data);
    assert!(!events.is_empty());
}
