//! Pi's output truncation (`truncate.ts`): a line limit and a byte limit, whichever is hit
//! first, from the head (files) or the tail (command output).

use serde::Serialize;

/// Pi's `DEFAULT_MAX_LINES`: the lines a text output keeps.
pub const DEFAULT_MAX_LINES: usize = 2000;
/// Pi's `DEFAULT_MAX_BYTES` (50 KB): the bytes a text output keeps.
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
/// The UTF-16 code units a grep line keeps (Pi's `GREP_MAX_LINE_LENGTH`).
pub const GREP_MAX_LINE_LENGTH: usize = 500;
/// JavaScript's `Number.MAX_SAFE_INTEGER`: the "no line limit" of grep, find and ls.
pub(crate) const NO_LINE_LIMIT: usize = 9_007_199_254_740_991;

/// What a truncation did (Pi's `TruncationResult`), as tools report it in `details`.
#[doc(alias = "TruncationResult")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TruncatedOutput {
    /// The text kept.
    pub content: String,
    /// Whether anything was cut.
    pub truncated: bool,
    /// `"lines"` or `"bytes"`: the limit that cut; `None` (JSON `null`) when nothing was cut.
    pub truncated_by: Option<&'static str>,
    /// Lines in the whole input.
    pub total_lines: usize,
    /// UTF-8 bytes in the whole input.
    pub total_bytes: usize,
    /// Lines kept.
    pub output_lines: usize,
    /// UTF-8 bytes kept.
    pub output_bytes: usize,
    /// Whether the kept text starts inside a line (tail truncation of one long line).
    pub last_line_partial: bool,
    /// Whether the first line alone is over the byte limit (head truncation keeps nothing).
    pub first_line_exceeds_limit: bool,
    /// The line limit applied.
    pub max_lines: usize,
    /// The byte limit applied.
    pub max_bytes: usize,
}

/// Lines as Pi counts them: none for empty text, and no empty last line after a final `\n`.
fn split_lines(content: &str) -> Vec<&str> {
    if content.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<&str> = content.split('\n').collect();
    if content.ends_with('\n') {
        lines.pop();
    }
    lines
}

fn untouched(content: &str, lines: usize, max_lines: usize, max_bytes: usize) -> TruncatedOutput {
    TruncatedOutput {
        content: content.to_owned(),
        truncated: false,
        truncated_by: None,
        total_lines: lines,
        total_bytes: content.len(),
        output_lines: lines,
        output_bytes: content.len(),
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines,
        max_bytes,
    }
}

/// Keeps the first lines that fit (Pi's `truncateHead`); never a partial line. Lines are
/// walked lazily, so a large input costs one pass and a copy of what is kept.
pub fn truncate_head(content: &str, max_lines: usize, max_bytes: usize) -> TruncatedOutput {
    let newlines = memchr::memchr_iter(b'\n', content.as_bytes()).count();
    let total_lines = if content.is_empty() {
        0
    } else if content.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    };
    if total_lines <= max_lines && content.len() <= max_bytes {
        return untouched(content, total_lines, max_lines, max_bytes);
    }
    let mut lines = content.split('\n').take(total_lines);
    if lines.clone().next().is_some_and(|l| l.len() > max_bytes) {
        return TruncatedOutput {
            content: String::new(),
            truncated: true,
            truncated_by: Some("bytes"),
            total_lines,
            total_bytes: content.len(),
            output_lines: 0,
            output_bytes: 0,
            last_line_partial: false,
            first_line_exceeds_limit: true,
            max_lines,
            max_bytes,
        };
    }
    let mut kept = 0usize;
    let mut bytes = 0usize;
    let mut by = "lines";
    for (i, line) in lines.by_ref().enumerate().take(max_lines) {
        let cost = line.len() + usize::from(i > 0);
        if bytes + cost > max_bytes {
            by = "bytes";
            break;
        }
        kept += 1;
        bytes += cost;
    }
    if kept >= max_lines && bytes <= max_bytes {
        by = "lines";
    }
    // The kept lines are a prefix of the input: `bytes` of them, joined by their own `\n`s.
    let out = content[..bytes].to_owned();
    TruncatedOutput {
        output_bytes: out.len(),
        content: out,
        truncated: true,
        truncated_by: Some(by),
        total_lines,
        total_bytes: content.len(),
        output_lines: kept,
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines,
        max_bytes,
    }
}

/// Keeps the last lines that fit (Pi's `truncateTail`); one over-long last line is kept
/// as its end.
pub fn truncate_tail(content: &str, max_lines: usize, max_bytes: usize) -> TruncatedOutput {
    let lines = split_lines(content);
    let total_lines = lines.len();
    if total_lines <= max_lines && content.len() <= max_bytes {
        return untouched(content, total_lines, max_lines, max_bytes);
    }
    let mut kept: Vec<&str> = Vec::new();
    let mut partial: Option<&str> = None;
    let mut bytes = 0usize;
    let mut by = "lines";
    for line in lines.iter().rev() {
        if kept.len() >= max_lines {
            break;
        }
        let cost = line.len() + usize::from(!kept.is_empty());
        if bytes + cost > max_bytes {
            by = "bytes";
            if kept.is_empty() {
                let tail = tail_bytes(line, max_bytes);
                bytes = tail.len();
                partial = Some(tail);
            }
            break;
        }
        kept.push(line);
        bytes += cost;
    }
    let last_line_partial = partial.is_some();
    if let Some(tail) = partial {
        kept.push(tail);
    }
    let output_lines = kept.len();
    if output_lines >= max_lines && bytes <= max_bytes {
        by = "lines";
    }
    kept.reverse();
    let out = kept.join("\n");
    TruncatedOutput {
        output_bytes: out.len(),
        content: out,
        truncated: true,
        truncated_by: Some(by),
        total_lines,
        total_bytes: content.len(),
        output_lines,
        last_line_partial,
        first_line_exceeds_limit: false,
        max_lines,
        max_bytes,
    }
}

/// The last `max` bytes of `s`, moved forward to a character boundary.
pub(crate) fn tail_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// A size as Pi prints it: `512B`, `1.5KB`, `2.0MB`.
pub fn format_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{}KB", tenths(bytes as u128, 1024))
    } else {
        format!("{}MB", tenths(bytes as u128, 1024 * 1024))
    }
}

/// `(n / unit).toFixed(1)`: JavaScript rounds a tie up (`1.25` → `1.3`), Rust's
/// formatter to even, and `n / unit` is exact here, so the ties are real.
fn tenths(n: u128, unit: u128) -> String {
    let t = (n * 20 + unit) / (2 * unit);
    format!("{}.{}", t / 10, t % 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_keeps_whole_lines() {
        let t = truncate_head("a\nb\nc\n", 2, 100);
        assert_eq!(t.content, "a\nb");
        assert_eq!(t.truncated_by, Some("lines"));
        assert_eq!(t.total_lines, 3);
        let t = truncate_head("aaaa\nbb", 10, 3);
        assert!(t.first_line_exceeds_limit);
    }

    #[test]
    fn tail_keeps_the_end_of_one_long_line() {
        let t = truncate_tail("xxxxxxxxxx", 10, 4);
        assert_eq!(t.content, "xxxx");
        assert!(t.last_line_partial);
        assert_eq!(t.truncated_by, Some("bytes"));
    }

    #[test]
    fn sizes_read_like_pi() {
        assert_eq!(format_size(1023), "1023B");
        assert_eq!(format_size(51200), "50.0KB");
        assert_eq!(format_size(3 * 1024 * 1024), "3.0MB");
        assert_eq!(format_size(1280), "1.3KB");
    }
}
