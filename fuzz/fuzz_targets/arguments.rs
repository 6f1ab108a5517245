//! The argument pipeline (prepare → drop placeholder nulls → coerce → validate →
//! deserialize) on every catalogue type, on two `#[pi_tool]` tools through their call
//! path, and on schemas the input itself supplies.
//!
//! Input: JSON text (amplifiable, see `input::expand`). A value that parses goes through
//! the host's argument limits (`ArgumentLimits`, against a model of what they measure)
//! and is checked against every schema (`catalogue::check_catalogue`, `check_tools`). An array
//! `[schema, args]` also builds a `ToolSchema` from `schema`, as given and normalised,
//! and checks `args` against it.
//!
//! Must hold: no panic, no hang; a refusal is an invalid-arguments error in Pi's words;
//! what validation accepts validates again to itself and deserialises or is refused the
//! same way; a tool's call path agrees with its schema.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_tool::schema::normalize;
use pi_tool::Value;
use pi_tool::schema::ToolSchema;
use pi_tool_fuzz::catalogue::{check_catalogue, check_limits, check_schema, check_tools};
use pi_tool_fuzz::input::expand;

fuzz_target!(|data: &[u8]| {
    expand(data).run(|bytes| {
        let Ok(args) = serde_json::from_slice::<Value>(bytes) else {
            return;
        };
        check_limits(&args);
        check_catalogue(&args);
        check_tools(&args);
        if let Value::Array(pair) = &args
            && let [schema, args] = pair.as_slice()
        {
            let given = ToolSchema::from_json(schema.clone());
            check_schema("given", &given, args, |_| Ok(()));
            if let Ok(normalized) = normalize(schema.clone()) {
                let schema = ToolSchema::from_json(normalized.schema);
                check_schema("normalized", &schema, args, |_| Ok(()));
            }
        }
    });
});
