//! `ls`: one directory's entries, sorted as Pi sorts them (lower-cased, then
//! `localeCompare`: ICU's root collation), `/` after directories.

use std::path::Path;

use icu_collator::options::CollatorOptions;
use icu_collator::{Collator, CollatorBorrowed};
use pi_tool_core::{AbortSignal, JsonSchema, ToolError};
use serde::{Deserialize, Serialize};

use crate::js;
use crate::truncate::{
    DEFAULT_MAX_BYTES, NO_LINE_LIMIT, TruncatedOutput, format_size, truncate_head,
};

const DEFAULT_LIMIT: f64 = 500.0;

/// Arguments of `ls`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(crate = "pi_tool_core::schemars")]
#[non_exhaustive]
pub struct LsParams {
    /// Directory to list (default: current directory)
    #[serde(default)]
    #[schemars(with = "String", transform = crate::js::no_default)]
    pub path: Option<String>,
    /// Maximum number of entries to return (default: 500)
    #[serde(default)]
    #[schemars(with = "f64", transform = crate::js::no_default)]
    pub limit: Option<f64>,
}

/// `ls`'s details: which limits cut the output.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LsDetails {
    /// The entry limit, when it was reached: the call's `limit` (or the default) as Pi
    /// echoes it, a JSON number that the schema lets be fractional, hence not an integer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_limit_reached: Option<f64>,
    /// The byte truncation, when the output was cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncation: Option<TruncatedOutput>,
}

fn collator() -> Option<CollatorBorrowed<'static>> {
    Collator::try_new(Default::default(), CollatorOptions::default()).ok()
}

/// JavaScript's `toLowerCase` (full Unicode lower-casing, as Rust's).
fn lower(s: &str) -> String {
    s.to_lowercase()
}

/// The bytes `ls` sorts a name by: its lower-cased form's collation key.
fn sort_key(collator: Option<&CollatorBorrowed<'static>>, name: &str) -> Vec<u8> {
    let lowered = lower(name);
    match collator {
        Some(c) => {
            let mut key = Vec::with_capacity(lowered.len() * 3);
            let Ok(()) = c.write_sort_key_to(&lowered, &mut key);
            key
        }
        None => lowered.into_bytes(),
    }
}

/// Lists, on a blocking thread.
pub(crate) fn run_blocking(
    params: &LsParams,
    cwd: &Path,
    signal: &AbortSignal,
) -> Result<(String, Option<LsDetails>), ToolError> {
    let dir = crate::paths::resolve_to_cwd(
        params
            .path
            .as_deref()
            .filter(|p| !p.is_empty())
            .unwrap_or("."),
        cwd,
    );
    let limit = params.limit.unwrap_or(DEFAULT_LIMIT);
    if !dir.exists() {
        return Err(ToolError::new(format!("Path not found: {}", dir.display())));
    }
    let meta = std::fs::metadata(&dir)
        .map_err(|e| ToolError::new(js::fs_error(&e, "stat", Some(&dir))))?;
    if !meta.is_dir() {
        return Err(ToolError::new(format!(
            "Not a directory: {}",
            dir.display()
        )));
    }
    let read = std::fs::read_dir(&dir).map_err(|e| {
        ToolError::new(format!(
            "Cannot read directory: {}",
            js::fs_error(&e, "scandir", Some(&dir))
        ))
    })?;
    let collator = collator();
    // Each name's collation key is computed once, so a million entries cost a million
    // key computations and cheap byte comparisons, not twenty million collations. Keys
    // compare as the collator does.
    let mut names: Vec<(Vec<u8>, String)> = Vec::new();
    for entry in read {
        if signal.is_aborted() {
            return Err(ToolError::new("Operation aborted"));
        }
        let Ok(entry) = entry else { continue };
        let name = entry.file_name().to_string_lossy().into_owned();
        names.push((sort_key(collator.as_ref(), &name), name));
    }
    // A stable sort: names that compare equal keep the directory's order, as in Pi.
    names.sort_by(|a, b| a.0.cmp(&b.0));
    let mut results: Vec<String> = Vec::new();
    let mut limit_reached = false;
    for (_, name) in &names {
        if results.len() as f64 >= limit {
            limit_reached = true;
            break;
        }
        // `stat` follows links: a dangling one is skipped, a link to a directory gets `/`.
        match std::fs::metadata(dir.join(name)) {
            Ok(meta) if meta.is_dir() => results.push(format!("{name}/")),
            Ok(_) => results.push(name.clone()),
            Err(_) => continue,
        }
    }
    if signal.is_aborted() {
        return Err(ToolError::new("Operation aborted"));
    }
    if results.is_empty() {
        return Ok(("(empty directory)".to_owned(), None));
    }
    let raw = results.join("\n");
    let truncation = truncate_head(&raw, NO_LINE_LIMIT, DEFAULT_MAX_BYTES);
    let mut output = truncation.content.clone();
    let mut details = LsDetails::default();
    let mut notices = Vec::new();
    if limit_reached {
        notices.push(format!(
            "{} entries limit reached. Use limit={} for more",
            js::num(limit),
            js::num(limit * 2.0)
        ));
        details.entry_limit_reached = Some(limit);
    }
    if truncation.truncated {
        notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
        details.truncation = Some(truncation);
    }
    if !notices.is_empty() {
        output.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    let has = details.entry_limit_reached.is_some() || details.truncation.is_some();
    Ok((output, has.then_some(details)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sorting by keys gives the order that comparing with the collator gives.
    #[test]
    fn keys_sort_as_the_collator_compares() {
        let collator = collator().expect("root collation");
        let mut names: Vec<String> = [
            "b", "B", "a", "A", "_x", "-x", ".x", "x.", "x", "10", "9", "1", "01", "a b", "a\tb",
            "a-b", "a_b", "ab", "Ab", "é", "e", "E", "f", "ß", "ss", "ǆ", "Ǆ", "ω", "Ω", "日本",
            "本", "😀", "a😀", "", " ", "~", "!", "#x", "$", "Z", "z", "ﬁ", "fi",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Every ordered pair, as the key order and as the collator's.
        for a in &names {
            for b in &names {
                let keys = sort_key(Some(&collator), a).cmp(&sort_key(Some(&collator), b));
                let compared = collator.compare(&lower(a), &lower(b));
                assert_eq!(keys, compared, "{a:?} against {b:?}");
            }
        }
        names.sort_by_key(|n| sort_key(Some(&collator), n));
        assert_eq!(&names[..3], ["", " ", "_x"], "{names:?}");
    }
}
