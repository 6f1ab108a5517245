//! pi-ai's readers of model-written JSON (`providers/partial_json`): `JSON.parse`,
//! `parseStreamingJson`, `parseJsonWithRepair`, `repairJson`, and the streaming
//! reader of tool-call arguments.
//!
//! Input: `[max, seed]` then a UTF-8 text (amplifiable, see `input::expand`: deep
//! nesting and long texts run on a worker-sized stack); `max`/`seed` cut the text into
//! streaming deltas (`max` 0: one delta).
//!
//! Must hold: no panic, no stack overflow (also not when the value is dropped), no hang
//! or quadratic blow-up (libFuzzer's timeout); `parseStreamingJson` of a text
//! `JSON.parse` reads is that value; a repair leaves valid JSON as it is; the streaming
//! reader's final arguments are `parseStreamingJson` of the whole text, and up to 8 KiB
//! a delta's reading is that of the text so far (about 64 deltas per input are checked).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_tool::__fuzz;
use pi_tool_fuzz::input::{cut_str, expand};

fuzz_target!(|data: &[u8]| {
    let [max, seed, rest @ ..] = data else {
        return;
    };
    let (max, seed) = (*max as usize, *seed as u32);
    expand(rest).run(|bytes| {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return;
        };
        let streaming = __fuzz::parse_streaming_json(text);
        if let Ok(parsed) = __fuzz::json_parse(text) {
            assert_eq!(streaming, parsed, "parseStreamingJson of valid JSON");
            assert_eq!(
                __fuzz::repair_json(text),
                text,
                "repairJson changed valid JSON"
            );
            assert_eq!(__fuzz::parse_json_with_repair(text).ok(), Some(parsed));
        } else {
            let _ = __fuzz::parse_json_with_repair(text);
        }
        let deltas = cut_str(text, max, seed);
        // Every reading re-checked would double the reader's own (by design quadratic,
        // up to 8 KiB) cost: about 64 of them, spread over the deltas, are.
        let every = deltas.len().div_ceil(64).max(1);
        let mut so_far = 0;
        let last = __fuzz::streaming_arguments(&deltas, |i, reading| {
            so_far += deltas[i].len();
            if so_far <= __fuzz::REPARSE_EVERY_DELTA_UP_TO
                && (i % every == 0 || i + 1 == deltas.len())
            {
                let expected = __fuzz::parse_streaming_json(&text[..so_far]);
                assert_eq!(*reading, expected, "reading after {so_far} bytes");
            }
        });
        assert_eq!(
            last, streaming,
            "the final arguments are the whole text's reading"
        );
    });
});
