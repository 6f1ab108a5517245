//! `edit`: exact and fuzzy text replacement (`edit.ts`, `edit-diff.ts`).

use std::borrow::Cow;

use pi_tool_core::{JsonSchema, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use unicode_normalization::UnicodeNormalization;

use crate::diff;

/// One replacement of `edit`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(crate = "pi_tool_core::schemars", transform = crate::js::no_description)]
#[non_exhaustive]
pub struct EditItem {
    /// Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call.
    #[serde(rename = "oldText")]
    pub old_text: String,
    /// Replacement text for this targeted edit.
    #[serde(rename = "newText")]
    pub new_text: String,
}

/// Arguments of `edit`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(crate = "pi_tool_core::schemars")]
#[non_exhaustive]
pub struct EditParams {
    /// Path to the file to edit (relative or absolute)
    pub path: String,
    /// One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead.
    pub edits: Vec<EditItem>,
}

/// `edit`'s details: the numbered diff, the unified patch, the first changed line.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EditDetails {
    /// Changed lines with line numbers and context, for display.
    pub diff: String,
    /// A unified patch (`--- path`, `+++ path`, hunks with 4 lines of context).
    pub patch: String,
    /// The first changed line, numbered in the new file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_changed_line: Option<usize>,
}

fn is_single_edit(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        o.get("oldText").is_some_and(Value::is_string)
            && o.get("newText").is_some_and(Value::is_string)
    })
}

/// Pi's `prepareEditArguments`: `edits` sent as a JSON string or as one object, and the
/// legacy top-level `oldText`/`newText`, become the `edits` array.
pub(crate) fn prepare_arguments(input: &Value) -> Cow<'_, Value> {
    let Some(obj) = input.as_object() else {
        return Cow::Borrowed(input);
    };
    let mut args = obj.clone();
    let mut changed = false;
    match args.get("edits") {
        Some(Value::String(text)) => {
            if let Ok(parsed) = serde_json::from_str::<Value>(text) {
                if parsed.is_array() {
                    args.insert("edits".to_owned(), parsed);
                    changed = true;
                } else if is_single_edit(&parsed) {
                    args.insert("edits".to_owned(), Value::Array(vec![parsed]));
                    changed = true;
                }
            }
        }
        Some(single) if is_single_edit(single) => {
            let single = single.clone();
            args.insert("edits".to_owned(), Value::Array(vec![single]));
            changed = true;
        }
        _ => {}
    }
    let legacy = match (args.get("oldText"), args.get("newText")) {
        (Some(Value::String(o)), Some(Value::String(n))) => Some((o.clone(), n.clone())),
        _ => None,
    };
    if let Some((old_text, new_text)) = legacy {
        let mut edits = match args.get("edits") {
            Some(Value::Array(items)) => items.clone(),
            _ => Vec::new(),
        };
        edits.push(serde_json::json!({"oldText": old_text, "newText": new_text}));
        args.shift_remove("oldText");
        args.shift_remove("newText");
        // `{...rest, edits}`: an existing `edits` key keeps its place, a new one goes last.
        args.insert("edits".to_owned(), Value::Array(edits));
        changed = true;
    }
    if changed {
        Cow::Owned(Value::Object(args))
    } else {
        Cow::Borrowed(input)
    }
}

/// The file's first line ending (`\r\n` only when it comes before any bare `\n`).
pub(crate) fn detect_line_ending(content: &str) -> &'static str {
    match (content.find("\r\n"), content.find('\n')) {
        (Some(crlf), Some(lf)) if crlf < lf => "\r\n",
        _ => "\n",
    }
}

pub(crate) fn normalize_to_lf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// JavaScript's `trimEnd` set: its white space (including U+FEFF and every space
/// separator) and line terminators.
fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\u{0B}'
            | '\u{0C}'
            | ' '
            | '\u{A0}'
            | '\u{FEFF}'
            | '\n'
            | '\r'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

/// Pi's `normalizeForFuzzyMatch`: NFKC, trailing white space per line, and ASCII quotes,
/// dashes and spaces.
pub(crate) fn normalize_for_fuzzy_match(text: &str) -> String {
    let nfkc: String = text.nfkc().collect();
    let trimmed: Vec<&str> = nfkc
        .split('\n')
        .map(|l| l.trim_end_matches(is_js_space))
        .collect();
    trimmed
        .join("\n")
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            c => c,
        })
        .collect()
}

struct Found {
    index: usize,
    len: usize,
    fuzzy: bool,
}

fn fuzzy_find(content: &str, old: &str) -> Option<Found> {
    if let Some(index) = content.find(old) {
        return Some(Found {
            index,
            len: old.len(),
            fuzzy: false,
        });
    }
    let fuzzy_content = normalize_for_fuzzy_match(content);
    let fuzzy_old = normalize_for_fuzzy_match(old);
    fuzzy_content.find(&fuzzy_old).map(|index| Found {
        index,
        len: fuzzy_old.len(),
        fuzzy: true,
    })
}

fn count_occurrences(content: &str, old: &str) -> usize {
    let fuzzy_content = normalize_for_fuzzy_match(content);
    let fuzzy_old = normalize_for_fuzzy_match(old);
    if fuzzy_old.is_empty() {
        // `"abc".split("")` has one piece per UTF-16 unit.
        return fuzzy_content.encode_utf16().count().saturating_sub(1);
    }
    fuzzy_content.matches(&fuzzy_old).count()
}

struct Matched {
    edit_index: usize,
    index: usize,
    len: usize,
    new_text: String,
}

fn apply_replacements(content: &str, replacements: &[Matched], offset: usize) -> String {
    let mut result = content.to_owned();
    for r in replacements.iter().rev() {
        let at = r.index - offset;
        result.replace_range(at..at + r.len, &r.new_text);
    }
    result
}

/// Line spans as `/[^\n]*\n|[^\n]+/g` finds them.
fn line_spans(content: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, b) in content.bytes().enumerate() {
        if b == b'\n' {
            spans.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < content.len() {
        spans.push((start, content.len()));
    }
    spans
}

fn replacement_line_range(
    lines: &[(usize, usize)],
    r: &Matched,
) -> Result<(usize, usize), ToolError> {
    let outside = || ToolError::new("Replacement range is outside the base content.");
    let start = r.index;
    let end = r.index + r.len;
    let first = lines
        .iter()
        .position(|&(s, e)| start >= s && start < e)
        .ok_or_else(outside)?;
    let mut last = first;
    while last < lines.len() && lines[last].1 < end {
        last += 1;
    }
    if last >= lines.len() {
        return Err(outside());
    }
    Ok((first, last + 1))
}

fn apply_preserving_unchanged_lines(
    original: &str,
    base: &str,
    replacements: &mut [Matched],
) -> Result<String, ToolError> {
    let original_lines = line_spans(original);
    let base_lines = line_spans(base);
    if original_lines.len() != base_lines.len() {
        return Err(ToolError::new(
            "Cannot preserve unchanged lines because the base content has a different line count.",
        ));
    }
    replacements.sort_by_key(|r| r.index);
    let mut groups: Vec<(usize, usize, Vec<usize>)> = Vec::new();
    for (i, r) in replacements.iter().enumerate() {
        let (start, end) = replacement_line_range(&base_lines, r)?;
        if let Some(current) = groups.last_mut()
            && start < current.1
        {
            current.1 = current.1.max(end);
            current.2.push(i);
            continue;
        }
        groups.push((start, end, vec![i]));
    }
    let mut out = String::with_capacity(original.len());
    let mut next_line = 0;
    for (start, end, members) in groups {
        for &(s, e) in &original_lines[next_line..start] {
            out.push_str(&original[s..e]);
        }
        let from = base_lines[start].0;
        let to = base_lines[end - 1].1;
        let group: Vec<Matched> = members
            .iter()
            .map(|&i| Matched {
                edit_index: replacements[i].edit_index,
                index: replacements[i].index,
                len: replacements[i].len,
                new_text: replacements[i].new_text.clone(),
            })
            .collect();
        out.push_str(&apply_replacements(&base[from..to], &group, from));
        next_line = end;
    }
    for &(s, e) in &original_lines[next_line..] {
        out.push_str(&original[s..e]);
    }
    Ok(out)
}

/// Pi's `applyEditsToNormalizedContent`: the new LF text, or the error naming the edit.
pub(crate) fn apply_edits(
    normalized: &str,
    edits: &[EditItem],
    path: &str,
) -> Result<String, ToolError> {
    let total = edits.len();
    let edits: Vec<(String, String)> = edits
        .iter()
        .map(|e| (normalize_to_lf(&e.old_text), normalize_to_lf(&e.new_text)))
        .collect();
    for (i, (old, _)) in edits.iter().enumerate() {
        if old.is_empty() {
            return Err(ToolError::new(if total == 1 {
                format!("oldText must not be empty in {path}.")
            } else {
                format!("edits[{i}].oldText must not be empty in {path}.")
            }));
        }
    }
    let any_fuzzy = edits
        .iter()
        .any(|(old, _)| fuzzy_find(normalized, old).is_some_and(|f| f.fuzzy));
    let base: Cow<'_, str> = if any_fuzzy {
        Cow::Owned(normalize_for_fuzzy_match(normalized))
    } else {
        Cow::Borrowed(normalized)
    };
    let mut matched = Vec::with_capacity(total);
    for (i, (old, new)) in edits.iter().enumerate() {
        let Some(found) = fuzzy_find(&base, old) else {
            return Err(ToolError::new(if total == 1 {
                format!(
                    "Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines."
                )
            } else {
                format!(
                    "Could not find edits[{i}] in {path}. The oldText must match exactly including all whitespace and newlines."
                )
            }));
        };
        let occurrences = count_occurrences(&base, old);
        if occurrences > 1 {
            return Err(ToolError::new(if total == 1 {
                format!(
                    "Found {occurrences} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique."
                )
            } else {
                format!(
                    "Found {occurrences} occurrences of edits[{i}] in {path}. Each oldText must be unique. Please provide more context to make it unique."
                )
            }));
        }
        matched.push(Matched {
            edit_index: i,
            index: found.index,
            len: found.len,
            new_text: new.clone(),
        });
    }
    matched.sort_by_key(|m| m.index);
    for pair in matched.windows(2) {
        if pair[0].index + pair[0].len > pair[1].index {
            return Err(ToolError::new(format!(
                "edits[{}] and edits[{}] overlap in {path}. Merge them into one edit or target disjoint regions.",
                pair[0].edit_index, pair[1].edit_index
            )));
        }
    }
    let new_content = if any_fuzzy {
        apply_preserving_unchanged_lines(normalized, &base, &mut matched)?
    } else {
        apply_replacements(&base, &matched, 0)
    };
    if new_content == normalized {
        return Err(ToolError::new(if total == 1 {
            format!(
                "No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
            )
        } else {
            format!("No changes made to {path}. The replacements produced identical content.")
        }));
    }
    Ok(new_content)
}

/// The details of a successful edit.
pub(crate) fn details(path: &str, old: &str, new: &str) -> EditDetails {
    let (diff, first_changed_line) = diff::display_diff(old, new, 4);
    EditDetails {
        diff,
        patch: diff::unified_patch(path, old, new, 4),
        first_changed_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(old: &str, new: &str) -> EditItem {
        EditItem {
            old_text: old.to_owned(),
            new_text: new.to_owned(),
        }
    }

    #[test]
    fn fuzzy_match_rewrites_only_touched_lines() {
        let content = "a  \n“q”\nb\n";
        let out = apply_edits(content, &[item("\"q\"", "r")], "f").unwrap();
        assert_eq!(out, "a  \nr\nb\n");
    }

    #[test]
    fn duplicates_and_empty_text_are_refused() {
        let err = apply_edits("x x", &[item("x", "y")], "f").err().unwrap();
        assert!(
            err.message()
                .starts_with("Found 2 occurrences of the text in f.")
        );
        let err = apply_edits("x", &[item("", "y")], "f").err().unwrap();
        assert_eq!(err.message(), "oldText must not be empty in f.");
    }

    #[test]
    fn legacy_arguments_become_edits() {
        let v = serde_json::json!({"path": "f", "oldText": "a", "newText": "b"});
        let out = prepare_arguments(&v);
        assert_eq!(
            *out,
            serde_json::json!({"path": "f", "edits": [{"oldText": "a", "newText": "b"}]})
        );
    }
}
