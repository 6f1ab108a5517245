//! `read`: a text file's lines with Pi's limits and continuation hints, or an image.

use std::borrow::Cow;
use std::io::Read as _;
use std::path::Path;

use pi_tool_core::{Content, JsonSchema, ToolError};
use serde::{Deserialize, Serialize};

use crate::image::{self, Processed, SNIFF_BYTES};
use crate::js;
use crate::truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncatedOutput, format_size, truncate_head,
};

/// Arguments of `read`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(crate = "pi_tool_core::schemars")]
#[non_exhaustive]
pub struct ReadParams {
    /// Path to the file to read (relative or absolute)
    pub path: String,
    /// Line number to start reading from (1-indexed)
    #[serde(default)]
    #[schemars(with = "f64", transform = crate::js::no_default)]
    pub offset: Option<f64>,
    /// Maximum number of lines to read
    #[serde(default)]
    #[schemars(with = "f64", transform = crate::js::no_default)]
    pub limit: Option<f64>,
}

/// `read`'s details: present only when the output was truncated.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ReadDetails {
    /// What the truncation did.
    pub truncation: TruncatedOutput,
}

pub(crate) struct ReadOutput {
    pub content: Vec<Content>,
    pub details: Option<ReadDetails>,
}

/// Checks that the file exists and is readable (Node's `access(R_OK)`), with Node's text.
pub(crate) fn access(path: &Path, mode: libc::c_int) -> Result<(), std::io::Error> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    let rc = unsafe { libc::access(c.as_ptr(), mode) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The blocking part of `read`: everything after the path is resolved.
pub(crate) fn read_blocking(
    raw_path: &str,
    absolute: &Path,
    offset: Option<f64>,
    limit: Option<f64>,
    auto_resize_images: bool,
) -> Result<ReadOutput, ToolError> {
    if raw_path.contains('\0') {
        return Err(ToolError::new(js::nul_path_error(
            &absolute.to_string_lossy(),
        )));
    }
    access(absolute, libc::R_OK)
        .map_err(|e| ToolError::new(js::fs_error(&e, "access", Some(absolute))))?;
    let mut file = std::fs::File::open(absolute)
        .map_err(|e| ToolError::new(js::fs_error(&e, "open", Some(absolute))))?;
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut file)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| ToolError::new(js::fs_error(&e, "read", None)))?;
    let mime = image::detect_mime(&head);
    let bytes = std::fs::read(absolute).map_err(|e| {
        let syscall = if e.raw_os_error() == Some(libc::EISDIR) {
            "read"
        } else {
            "open"
        };
        let path = (syscall == "open").then_some(absolute);
        ToolError::new(js::fs_error(&e, syscall, path))
    })?;
    if let Some(mime) = mime {
        let content = match image::process(&bytes, mime, auto_resize_images) {
            Processed::Omitted(message) => {
                vec![Content::text(format!(
                    "Read image file [{mime}]\n{message}"
                ))]
            }
            Processed::Ok {
                data,
                mime_type,
                hints,
            } => {
                let mut note = format!("Read image file [{mime_type}]");
                for hint in hints {
                    note.push('\n');
                    note.push_str(&hint);
                }
                vec![Content::text(note), Content::image(data, mime_type)]
            }
        };
        return Ok(ReadOutput {
            content,
            details: None,
        });
    }
    let text: Cow<'_, str> = String::from_utf8_lossy(&bytes);
    read_text(raw_path, &text, offset, limit)
}

/// Byte offsets of each line's start (the empty line after a final `\n` counts).
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::with_capacity(text.len() / 32 + 1);
    starts.push(0);
    starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
    starts
}

fn read_text(
    raw_path: &str,
    text: &str,
    offset: Option<f64>,
    limit: Option<f64>,
) -> Result<ReadOutput, ToolError> {
    let starts = line_starts(text);
    let total = starts.len();
    let total_f = total as f64;
    // `offset ? Math.max(0, offset - 1) : 0`: 0 and NaN count as no offset.
    let start_line = match offset {
        Some(o) if o != 0.0 && !o.is_nan() => (o - 1.0).max(0.0),
        _ => 0.0,
    };
    let start_display = start_line + 1.0;
    if start_line >= total_f {
        return Err(ToolError::new(format!(
            "Offset {} is beyond end of file ({total} lines total)",
            offset.map_or("undefined".to_owned(), js::num)
        )));
    }
    // The text of lines [from, to) joined by `\n`, as `allLines.slice(from, to).join("\n")`.
    let region = |from: usize, to: usize| -> &str {
        if from >= to {
            return "";
        }
        let begin = starts[from];
        let end = if to < total {
            starts[to] - 1
        } else {
            text.len()
        };
        &text[begin..end]
    };
    let from = js::slice_index(start_line, total);
    let mut user_limited = None;
    let selected = match limit {
        Some(limit) => {
            let end_line = (start_line + limit).min(total_f);
            user_limited = Some(end_line - start_line);
            region(from, js::slice_index(end_line, total))
        }
        None => region(from, total),
    };
    let truncation = truncate_head(selected, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    let (output, details) = if truncation.first_line_exceeds_limit {
        let first_len = region(from, from + 1).len();
        let start = js::num(start_display);
        (
            format!(
                "[Line {start} is {}, exceeds {} limit. Use bash: sed -n '{start}p' {raw_path} | head -c {DEFAULT_MAX_BYTES}]",
                format_size(first_len),
                format_size(DEFAULT_MAX_BYTES)
            ),
            Some(ReadDetails { truncation }),
        )
    } else if truncation.truncated {
        let end_display = start_display + truncation.output_lines as f64 - 1.0;
        let next = end_display + 1.0;
        let mut out = truncation.content.clone();
        if truncation.truncated_by == Some("lines") {
            out.push_str(&format!(
                "\n\n[Showing lines {}-{} of {total}. Use offset={} to continue.]",
                js::num(start_display),
                js::num(end_display),
                js::num(next)
            ));
        } else {
            out.push_str(&format!(
                "\n\n[Showing lines {}-{} of {total} ({} limit). Use offset={} to continue.]",
                js::num(start_display),
                js::num(end_display),
                format_size(DEFAULT_MAX_BYTES),
                js::num(next)
            ));
        }
        (out, Some(ReadDetails { truncation }))
    } else if let Some(n) = user_limited.filter(|n| start_line + n < total_f) {
        let remaining = total_f - (start_line + n);
        let next = start_line + n + 1.0;
        (
            format!(
                "{}\n\n[{} more lines in file. Use offset={} to continue.]",
                truncation.content,
                js::num(remaining),
                js::num(next)
            ),
            None,
        )
    } else {
        (truncation.content, None)
    };
    Ok(ReadOutput {
        content: vec![Content::text(output)],
        details,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(out: &ReadOutput) -> &str {
        out.content[0].as_text().unwrap_or_default()
    }

    #[test]
    fn offset_and_limit_hint() {
        let out = read_text("f", "a\nb\nc\nd\n", Some(2.0), Some(2.0)).unwrap();
        assert_eq!(
            text_of(&out),
            "b\nc\n\n[2 more lines in file. Use offset=4 to continue.]"
        );
    }

    #[test]
    fn offset_past_the_end() {
        let err = read_text("f", "", Some(2.0), None).err().unwrap();
        assert_eq!(
            err.message(),
            "Offset 2 is beyond end of file (1 lines total)"
        );
    }
}
