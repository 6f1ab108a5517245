//! The `anthropic-messages` provider's stream parser, end to end: a fuzzed HTTP response from a
//! loopback server through the real provider (transport, SSE reader, event handling,
//! event stream) into the final message (`provider::run`).
//!
//! Input: `[pick, max, seed]` then the body: `pick` chooses the provider name
//! (compat switches), the status (mostly 200; else the body is an error body), the key
//! kind and reasoning; `max` and `seed` cut the body into HTTP chunks.
//!
//! Must hold (`provider::check_events`): no panic, the stream ends within 10 s, with
//! exactly one `done` or `error`, last; `start` first; block events name existing
//! blocks; `done` has a final stop reason and no error; `error` has a non-empty text
//! without the key.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_tool_fuzz::provider::{Api, run};

fuzz_target!(|data: &[u8]| {
    run(Api::Anthropic, data);
});
