//! Expected-JSON files: `PI_TOOL_BLESS=1 cargo test` writes them; otherwise a test fails
//! when the output differs from the file (or the file is missing).
#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::Value;

/// Compares `actual` with `tests/schemas/<dir>/<name>.json`; returns a mismatch report.
pub fn check(dir: &str, name: &str, actual: &Value) -> Option<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/schemas")
        .join(dir)
        .join(format!("{name}.json"));
    let pretty = serde_json::to_string_pretty(actual).unwrap_or_default() + "\n";
    if std::env::var_os("PI_TOOL_BLESS").is_some() {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).ok();
        }
        std::fs::write(&path, &pretty).ok();
        return None;
    }
    match std::fs::read_to_string(&path) {
        Ok(expected) if expected == pretty => None,
        Ok(expected) => Some(format!(
            "{}: differs\n--- expected\n{expected}\n--- actual\n{pretty}",
            path.display()
        )),
        Err(e) => Some(format!(
            "{}: {e} (run with PI_TOOL_BLESS=1 to write it)",
            path.display()
        )),
    }
}

/// Panics with every mismatch at once.
pub fn assert_all(mismatches: Vec<String>) {
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
}
