//! The one repair of a tool name to pi-tool's rule (`^[A-Za-z_][A-Za-z0-9_-]*$`, the set
//! every major model provider accepts), shared by two crates: pi-tool-core, where
//! `pack::sanitize_tool_name` makes a name for a foreign tool (an MCP server's), and
//! pi-tool-macros, whose error for an invalid `name = "..."` suggests the repaired name. A
//! proc-macro crate cannot depend on the crate that depends on it, so this file lives in
//! `pi-tool-core/src` and `pi-tool-macros/src/tool_name_repair.rs` is a symbolic link to it,
//! which `cargo package` turns into a copy. It names nothing of either crate.

/// `name` with each character outside `[A-Za-z0-9_-]` replaced by `_`, and a leading `_`
/// when it does not start with a letter or `_`. The length is left to the caller.
pub fn repair(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    out
}
