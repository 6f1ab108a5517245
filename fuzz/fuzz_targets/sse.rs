//! The `openai` SDK's SSE reader (`providers/openai_sse.rs`), which both OpenAI
//! providers read every response body with: line splitting on `\n`, `\r\n` and lone
//! `\r` across chunks, UTF-8 per line, events ended by a blank line, `[DONE]`, and
//! `JSON.parse` of each event's data.
//!
//! Input: `[max, seed]` then the body (amplifiable, see `input::expand`: long lines and
//! many events test that the reader stays linear), cut into chunks at points drawn from
//! `max` and `seed`.
//!
//! Must hold: no panic, no hang; the events do not depend on where the network cut the
//! body (the same as from one chunk); the SDK's per-message rule gives every message an
//! item and stops at the first that throws.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_tool::__fuzz;
use pi_tool_fuzz::input::{cut, expand};

fuzz_target!(|data: &[u8]| {
    let [max, seed, rest @ ..] = data else {
        return;
    };
    let (max, seed) = (*max as usize, *seed as u32);
    expand(rest).run(|body| {
        let whole = __fuzz::openai_sse_messages(&[body]);
        let chunks = cut(body, max, seed);
        let split = __fuzz::openai_sse_messages(&chunks);
        assert_eq!(
            split,
            whole,
            "the events depend on the chunks ({} chunks)",
            chunks.len()
        );
        let items = __fuzz::openai_sse_items(&whole);
        let thrown = items
            .iter()
            .position(|i| matches!(i, __fuzz::Item::Thrown(_)));
        match thrown {
            Some(at) => assert_eq!(at + 1, items.len(), "items after a throw"),
            None => assert_eq!(items.len(), whole.len(), "a message without an item"),
        }
    });
});
