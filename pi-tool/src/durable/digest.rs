//! The approval digest: what a decision binds to (docs/durable-runs.md, "The digest").
//!
//! ```text
//! digest = hex(SHA-256(JCS({
//!   "tool":      the tool's name,
//!   "schema":    hex(SHA-256(JCS(the tool's parameter schema, as the model saw it))),
//!   "effects":   {"readOnly", "destructive", "idempotent", "openWorld"}: each true,
//!                false or null (not declared),
//!   "run":       the run id,
//!   "call":      the call id,
//!   "arguments": the validated, coerced arguments execute receives
//! })))
//! ```
//!
//! JCS ([`canonicalize`]) makes the digest independent of key order and number spelling,
//! and coercion runs before it, so `{"amount": "7"}` coerced to `7` and `{"amount": 7}` are
//! one digest. Anything that changes what runs changes it: other arguments, another tool,
//! a changed schema or declared effects (an upgrade), another run or call.

use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use super::jcs::canonicalize;
use pi_tool_core::{AgentTool, ToolAnnotations};

/// Lower-case hex of the SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in hash {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The digest of a parameter schema: SHA-256 of its JCS text.
pub fn schema_digest(schema: &Value) -> String {
    sha256_hex(canonicalize(schema).as_bytes())
}

/// The declared effects as the digest holds them (MCP's hint names; `null`: not
/// declared).
pub fn effects_value(annotations: &ToolAnnotations) -> Value {
    json!({
        "readOnly": annotations.read_only,
        "destructive": annotations.destructive,
        "idempotent": annotations.idempotent,
        "openWorld": annotations.open_world,
    })
}

/// The approval digest of one call of `tool` in run `run_id` with the validated
/// `arguments` (see the module docs for the exact definition).
pub fn approval_digest(
    tool: &dyn AgentTool,
    run_id: &str,
    call_id: &str,
    arguments: &Value,
) -> String {
    let spec = tool.spec();
    approval_digest_of(
        &spec.name,
        spec.parameters.json(),
        &spec.annotations,
        run_id,
        call_id,
        arguments,
    )
}

/// [`approval_digest`] from the parts of a tool's spec.
pub fn approval_digest_of(
    tool_name: &str,
    schema: &Value,
    annotations: &ToolAnnotations,
    run_id: &str,
    call_id: &str,
    arguments: &Value,
) -> String {
    let subject = json!({
        "tool": tool_name,
        "schema": schema_digest(schema),
        "effects": effects_value(annotations),
        "run": run_id,
        "call": call_id,
        "arguments": arguments,
    });
    sha256_hex(canonicalize(&subject).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn destructive() -> ToolAnnotations {
        ToolAnnotations::new().destructive(true)
    }

    #[test]
    fn sha256_of_abc_is_the_fips_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn key_order_and_number_spelling_do_not_change_the_digest() {
        let schema = json!({"type": "object"});
        let a = approval_digest_of(
            "t",
            &schema,
            &destructive(),
            "r",
            "c",
            &json!({"a": 7, "b": "x"}),
        );
        let b = approval_digest_of(
            "t",
            &schema,
            &destructive(),
            "r",
            "c",
            &json!({"b": "x", "a": 7.0}),
        );
        assert_eq!(a, b);
        assert_eq!(a.len(), 64);
    }

    #[test]
    fn every_part_changes_the_digest() {
        let schema = json!({"type": "object"});
        let args = json!({"a": 7});
        let base = approval_digest_of("t", &schema, &destructive(), "r", "c", &args);
        let others = [
            approval_digest_of("u", &schema, &destructive(), "r", "c", &args),
            approval_digest_of(
                "t",
                &json!({"type": "object", "required": []}),
                &destructive(),
                "r",
                "c",
                &args,
            ),
            approval_digest_of("t", &schema, &ToolAnnotations::NONE, "r", "c", &args),
            approval_digest_of("t", &schema, &destructive(), "r2", "c", &args),
            approval_digest_of("t", &schema, &destructive(), "r", "c2", &args),
            approval_digest_of("t", &schema, &destructive(), "r", "c", &json!({"a": 8})),
        ];
        for other in others {
            assert_ne!(base, other);
        }
    }
}
