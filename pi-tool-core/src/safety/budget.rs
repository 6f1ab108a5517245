//! Result budgets: bound what the model reads, keep everything for the host.
//!
//! A log, a response body or a directory listing can be megabytes; put into a result's
//! content whole, it crowds the conversation out of the model's context (and costs
//! tokens on every later turn). Pi's custom-tool page's answer is to cut before the content is
//! built and return a bounded page with a way to get the next one. [`ResultBudget`] does
//! the cutting for any result:
//!
//! - **What is cut.** The text blocks of `content`, counted together as if joined by
//!   newlines, to at most `max_lines` lines and `max_bytes` bytes. Whole lines are kept;
//!   only a first line that alone exceeds `max_bytes` is cut inside, at a UTF-8 boundary.
//!   Image blocks are left as they are. The appended note (below) is not counted.
//! - **What the model reads instead.** The kept head plus one note line, for example
//!   `[Output truncated: showing lines 1-200 of 5000. Call again with offset=200 to
//!   continue.]`. The hint is a [`Continuation`]: an offset parameter of the tool (its
//!   name is configurable), a custom sentence (cursors), or nothing.
//! - **What the host keeps.** The full text and a [`Truncation`] record go into
//!   `details`: typed results become `AgentToolResult<`[`Truncated<D>`]`>`; JSON results
//!   get their details wrapped as `{"details": …, "fullText": …, "truncation": …}` (only
//!   when something was cut, so untouched results keep their shape). Details never reach
//!   the model, so nothing is lost to hosts, UIs or logs.
//!
//! Progress updates go to every UI and subscriber too; [`ResultBudget::bound_updates`]
//! wraps an [`OnUpdate`] so each update's content is cut the same way (progress is
//! transient, so the full text is not kept and the note has no continuation hint).

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::Content;
use crate::result::{AgentToolResult, JsonToolResult};
use crate::update::OnUpdate;

/// How the model is told to fetch the rest of a truncated result.
#[derive(Clone)]
#[non_exhaustive]
pub enum Continuation {
    /// The tool takes a line offset under this parameter name: the note says
    /// `Call again with <name>=<next offset> to continue.`
    Offset(String),
    /// A sentence built from the truncation, for tools that page with a cursor
    /// (`Call again with cursor="…" to continue.`).
    Custom(Arc<dyn Fn(&Truncation) -> String + Send + Sync>),
    /// No hint: the note only says what is shown.
    None,
}

impl Continuation {
    /// An offset parameter named `name`.
    pub fn offset(name: impl Into<String>) -> Self {
        Continuation::Offset(name.into())
    }

    /// A hint built by `hint` from the truncation.
    pub fn custom(hint: impl Fn(&Truncation) -> String + Send + Sync + 'static) -> Self {
        Continuation::Custom(Arc::new(hint))
    }

    fn hint(&self, truncation: &Truncation) -> Option<String> {
        match self {
            Continuation::Offset(name) => Some(format!(
                "Call again with {name}={} to continue.",
                truncation.next_offset
            )),
            Continuation::Custom(hint) => Some(hint(truncation)),
            Continuation::None => None,
        }
    }
}

impl fmt::Debug for Continuation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Continuation::Offset(name) => f.debug_tuple("Offset").field(name).finish(),
            Continuation::Custom(_) => f.write_str("Custom(..)"),
            Continuation::None => f.write_str("None"),
        }
    }
}

/// Which limit cut the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum TruncatedBy {
    /// `max_lines` was reached.
    Lines,
    /// `max_bytes` was reached.
    Bytes,
}

/// What a budget cut: enough for the host to page, and for the note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Truncation {
    /// The first line shown, 1-based (the call's offset + 1).
    pub first_line: usize,
    /// The last line shown, 1-based, whole or (see `partial_line`) cut.
    pub last_line: usize,
    /// The last line of the text, 1-based (the call's offset + the text's line count).
    pub total_lines: usize,
    /// Bytes of text shown.
    pub shown_bytes: usize,
    /// Bytes of text in all.
    pub total_bytes: usize,
    /// The offset to pass to continue after what was shown.
    pub next_offset: usize,
    /// Whether the last shown line was cut inside (a first line longer than `max_bytes`).
    pub partial_line: bool,
    /// Which limit was reached.
    pub by: TruncatedBy,
}

/// Details of a result that went through a [`ResultBudget`]: the tool's own details,
/// plus the full text and the truncation when something was cut.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Truncated<D> {
    /// The tool's details, unchanged.
    pub details: D,
    /// The text blocks before cutting, joined by newlines; `None` when nothing was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_text: Option<String>,
    /// What was cut; `None` when nothing was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
}

/// Limits on the text a result shows the model (see the module docs).
#[derive(Debug, Clone)]
pub struct ResultBudget {
    max_bytes: usize,
    max_lines: usize,
    continuation: Continuation,
}

impl Default for ResultBudget {
    /// Pi's read-tool limits: 2000 lines, 50 KiB, continuation by `offset`.
    fn default() -> Self {
        ResultBudget::new(Self::DEFAULT_MAX_BYTES, Self::DEFAULT_MAX_LINES)
    }
}

/// Text cut by [`ResultBudget::trim_text`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TrimmedText {
    /// What the model reads: the kept head and, when cut, the note.
    pub text: String,
    /// What was cut; `None` when the text fit.
    pub truncation: Option<Truncation>,
}

impl ResultBudget {
    /// The default byte limit (50 KiB, as Pi's read tool).
    pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
    /// The default line limit (2000, as Pi's read tool).
    pub const DEFAULT_MAX_LINES: usize = 2000;

    /// A budget of `max_bytes` and `max_lines` (each at least 1), continuing by `offset`.
    pub fn new(max_bytes: usize, max_lines: usize) -> Self {
        ResultBudget {
            max_bytes: max_bytes.max(1),
            max_lines: max_lines.max(1),
            continuation: Continuation::offset("offset"),
        }
    }

    /// Replaces the continuation hint.
    #[must_use]
    pub fn with_continuation(mut self, continuation: Continuation) -> Self {
        self.continuation = continuation;
        self
    }

    /// The byte limit.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// The line limit.
    pub fn max_lines(&self) -> usize {
        self.max_lines
    }

    /// Cuts one text. `offset` is the line offset the call was made with (0 for the
    /// start), so that line numbers and the next offset are the tool's.
    pub fn trim_text(&self, text: &str, offset: usize) -> TrimmedText {
        let mut content = vec![Content::text(text)];
        let truncation = self.trim_content(&mut content, offset, Note::Result);
        let text = content
            .into_iter()
            .next()
            .and_then(|block| match block {
                Content::Text { text } => Some(text),
                _ => None,
            })
            .unwrap_or_default();
        TrimmedText { text, truncation }
    }

    /// Cuts a typed result made from the start of its data (offset 0).
    pub fn apply<D>(&self, result: AgentToolResult<D>) -> AgentToolResult<Truncated<D>> {
        self.apply_from(result, 0)
    }

    /// Cuts a typed result made from line `offset` of its data; the full text and the
    /// truncation go into [`Truncated`] details.
    pub fn apply_from<D>(
        &self,
        mut result: AgentToolResult<D>,
        offset: usize,
    ) -> AgentToolResult<Truncated<D>> {
        let (full_text, truncation) = self.cut_result(&mut result.content, offset);
        result.map_details(|details| Truncated {
            details,
            full_text,
            truncation,
        })
    }

    /// Cuts a JSON result made from the start of its data (offset 0).
    pub fn apply_json(&self, result: JsonToolResult) -> JsonToolResult {
        self.apply_json_from(result, 0)
    }

    /// Cuts a JSON result made from line `offset` of its data. When something is cut,
    /// details become `{"details": <the tool's, left out when absent>, "fullText": …,
    /// "truncation": …}`; otherwise the result is returned as it was.
    pub fn apply_json_from(&self, mut result: JsonToolResult, offset: usize) -> JsonToolResult {
        let (full_text, truncation) = self.cut_result(&mut result.content, offset);
        let (Some(full_text), Some(truncation)) = (full_text, truncation) else {
            return result;
        };
        let mut wrapped = Map::new();
        if let Some(details) = result.details.take() {
            wrapped.insert("details".to_owned(), details.into_value());
        }
        wrapped.insert("fullText".to_owned(), Value::String(full_text));
        // A plain struct of numbers and an enum: serialising it cannot fail.
        let truncation = serde_json::to_value(truncation).unwrap_or(Value::Null);
        wrapped.insert("truncation".to_owned(), truncation);
        result.details = Some(Value::Object(wrapped).into());
        result
    }

    /// A progress callback that cuts every update's content before passing it on.
    pub fn bound_updates<D: 'static>(&self, on_update: OnUpdate<D>) -> OnUpdate<D> {
        if !on_update.is_listening() {
            return OnUpdate::none();
        }
        let budget = self.clone();
        OnUpdate::new(move |mut update: AgentToolResult<D>| {
            if !on_update.is_listening() {
                return;
            }
            budget.trim_content(&mut update.content, 0, Note::Progress);
            on_update.send(update);
        })
    }

    fn cut_result(
        &self,
        content: &mut Vec<Content>,
        offset: usize,
    ) -> (Option<String>, Option<Truncation>) {
        if self.fits(content) {
            return (None, None);
        }
        let full_text = joined_text(content);
        let truncation = self.trim_content(content, offset, Note::Result);
        (truncation.as_ref().map(|_| full_text), truncation)
    }

    /// The cheap pre-check: most results are far below the budget.
    fn fits(&self, content: &[Content]) -> bool {
        let mut bytes = 0usize;
        let mut lines = 0usize;
        for text in content.iter().filter_map(Content::as_text) {
            bytes += text.len();
            if bytes > self.max_bytes {
                return false;
            }
            lines += line_count(text);
        }
        lines <= self.max_lines
    }

    /// Cuts the text blocks in place; returns what was cut, `None` when all fit.
    fn trim_content(
        &self,
        content: &mut Vec<Content>,
        offset: usize,
        note: Note,
    ) -> Option<Truncation> {
        let total_bytes: usize = content
            .iter()
            .filter_map(Content::as_text)
            .map(str::len)
            .sum();
        let total_lines: usize = content
            .iter()
            .filter_map(Content::as_text)
            .map(line_count)
            .sum();

        let mut shown_lines = 0usize;
        let mut shown_bytes = 0usize;
        let mut cut: Option<(TruncatedBy, bool)> = None;
        let mut last_text: Option<usize> = None;
        let mut index = 0;
        while index < content.len() {
            let Content::Text { text } = &mut content[index] else {
                index += 1;
                continue;
            };
            if cut.is_some() {
                // Everything after the cut point goes; images stay.
                content.remove(index);
                continue;
            }
            let block = cut_block(
                text,
                self.max_lines - shown_lines,
                self.max_bytes - shown_bytes,
                shown_lines == 0,
            );
            shown_lines += block.lines;
            shown_bytes += block.keep;
            if let Some(by) = block.by {
                text.truncate(block.keep);
                cut = Some((by, block.partial));
                if text.is_empty() {
                    content.remove(index);
                    continue;
                }
            }
            last_text = Some(index);
            index += 1;
        }

        let (by, partial_line) = cut?;
        let truncation = Truncation {
            first_line: offset + 1,
            last_line: offset + shown_lines,
            total_lines: offset + total_lines,
            shown_bytes,
            total_bytes,
            next_offset: offset + shown_lines,
            partial_line,
            by,
        };
        let note = match note {
            Note::Result => self.note("Output", &truncation, true),
            Note::Progress => self.note("Progress", &truncation, false),
        };
        match last_text.and_then(|i| content.get_mut(i)) {
            Some(Content::Text { text }) => {
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&note);
            }
            _ => content.push(Content::text(note)),
        }
        Some(truncation)
    }

    fn note(&self, what: &str, truncation: &Truncation, with_hint: bool) -> String {
        let mut note = format!(
            "[{what} truncated: showing lines {}-{} of {}",
            truncation.first_line, truncation.last_line, truncation.total_lines
        );
        if truncation.partial_line {
            note.push_str(&format!(
                "; line {} was cut at {} bytes",
                truncation.last_line, self.max_bytes
            ));
        }
        note.push('.');
        if with_hint && let Some(hint) = self.continuation.hint(truncation) {
            note.push(' ');
            note.push_str(&hint);
        }
        note.push(']');
        note
    }
}

#[derive(Clone, Copy)]
enum Note {
    Result,
    Progress,
}

/// How one text block fits the remaining budget.
struct BlockCut {
    /// Bytes kept.
    keep: usize,
    /// Lines shown (a cut first line counts).
    lines: usize,
    /// `Some` when the block was cut.
    by: Option<TruncatedBy>,
    /// Whether the last shown line was cut inside.
    partial: bool,
}

fn cut_block(text: &str, max_lines: usize, max_bytes: usize, may_split_line: bool) -> BlockCut {
    let mut pos = 0;
    let mut lines = 0;
    while pos < text.len() {
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1);
        if lines == max_lines {
            return BlockCut {
                keep: pos,
                lines,
                by: Some(TruncatedBy::Lines),
                partial: false,
            };
        }
        if end > max_bytes {
            if lines == 0 && may_split_line {
                return BlockCut {
                    keep: floor_char_boundary(text, max_bytes),
                    lines: 1,
                    by: Some(TruncatedBy::Bytes),
                    partial: true,
                };
            }
            return BlockCut {
                keep: pos,
                lines,
                by: Some(TruncatedBy::Bytes),
                partial: false,
            };
        }
        lines += 1;
        pos = end;
    }
    BlockCut {
        keep: text.len(),
        lines,
        by: None,
        partial: false,
    }
}

/// Lines of a text: a trailing newline ends the last line rather than starting one.
fn line_count(text: &str) -> usize {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    newlines + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    // `str::floor_char_boundary` is newer than our 1.88 floor.
    index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn joined_text(content: &[Content]) -> String {
    let mut out = String::new();
    for (i, text) in content.iter().filter_map(Content::as_text).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Mutex;

    fn numbered(lines: usize) -> String {
        (1..=lines).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn text_within_the_budget_is_untouched() {
        let budget = ResultBudget::new(1000, 10);
        let trimmed = budget.trim_text("a\nb\n", 0);
        assert_eq!(trimmed.text, "a\nb\n");
        assert_eq!(trimmed.truncation, None);
        // Exactly at the limits still fits.
        let exact = numbered(10);
        assert_eq!(budget.trim_text(&exact, 0).text, exact);
        let r = budget.apply(AgentToolResult::text(exact.clone(), 7));
        assert_eq!(
            r.details,
            Truncated {
                details: 7,
                full_text: None,
                truncation: None
            }
        );
        assert_eq!(
            serde_json::to_value(&r.details).unwrap(),
            json!({"details": 7})
        );
    }

    #[test]
    fn line_limit_keeps_the_head_and_says_how_to_continue() {
        let budget = ResultBudget::new(1 << 20, 200);
        let trimmed = budget.trim_text(&numbered(5000), 0);
        assert!(trimmed.text.starts_with("line 1\n"));
        assert!(trimmed.text.contains("line 200\n"));
        assert!(!trimmed.text.contains("line 201"));
        assert!(trimmed.text.ends_with(
            "line 200\n[Output truncated: showing lines 1-200 of 5000. \
             Call again with offset=200 to continue.]"
        ));
        let t = trimmed.truncation.unwrap();
        assert_eq!((t.first_line, t.last_line, t.total_lines), (1, 200, 5000));
        assert_eq!(
            (t.next_offset, t.by, t.partial_line),
            (200, TruncatedBy::Lines, false)
        );
    }

    #[test]
    fn byte_limit_keeps_whole_lines() {
        // "line 1\n" .. "line 9\n" are 7 bytes each.
        let budget = ResultBudget::new(30, 1000);
        let trimmed = budget.trim_text(&numbered(20), 0);
        let t = trimmed.truncation.clone().unwrap();
        assert_eq!(t.by, TruncatedBy::Bytes);
        assert_eq!(t.last_line, 4);
        assert_eq!(t.shown_bytes, 28);
        assert!(
            trimmed
                .text
                .starts_with("line 1\nline 2\nline 3\nline 4\n[Output")
        );
    }

    #[test]
    fn an_overlong_first_line_is_cut_at_a_char_boundary() {
        let budget = ResultBudget::new(6, 10);
        // "aééé" is 7 bytes: byte 6 is inside the third "é", which goes whole.
        let trimmed = budget.trim_text("aééé\nnext\n", 0);
        assert_eq!(
            trimmed.text,
            "aéé\n[Output truncated: showing lines 1-1 of 2; line 1 was cut at 6 bytes. \
             Call again with offset=1 to continue.]"
        );
        let t = trimmed.truncation.unwrap();
        assert!(t.partial_line);
        assert_eq!(t.next_offset, 1);
        // Every cut point on a multi-byte text is still valid UTF-8 (String guarantees
        // it; this checks nothing panics on the way).
        for max in 1..40 {
            let _ = ResultBudget::new(max, 3).trim_text("日本語のテキスト\n🦀🦀🦀\nx", 0);
        }
    }

    #[test]
    fn offsets_number_lines_as_the_tool_does() {
        let budget = ResultBudget::new(1 << 20, 100);
        let page = budget.trim_text(&numbered(250), 200);
        assert!(page.text.ends_with(
            "[Output truncated: showing lines 201-300 of 450. \
             Call again with offset=300 to continue.]"
        ));
    }

    #[test]
    fn the_continuation_hint_is_configurable() {
        let text = numbered(10);
        let by_start = ResultBudget::new(1000, 2).with_continuation(Continuation::offset("start"));
        assert!(
            by_start
                .trim_text(&text, 0)
                .text
                .ends_with("Call again with start=2 to continue.]")
        );
        let cursor = ResultBudget::new(1000, 2).with_continuation(Continuation::custom(|t| {
            format!("Call again with cursor=\"c{}\" to continue.", t.next_offset)
        }));
        assert!(
            cursor
                .trim_text(&text, 0)
                .text
                .ends_with("cursor=\"c2\" to continue.]")
        );
        let none = ResultBudget::new(1000, 2).with_continuation(Continuation::None);
        assert!(
            none.trim_text(&text, 0)
                .text
                .ends_with("showing lines 1-2 of 10.]")
        );
    }

    #[test]
    fn typed_results_keep_the_full_text_in_details() {
        let budget = ResultBudget::new(1000, 3);
        let full = numbered(10);
        let r = budget
            .apply(AgentToolResult::text(full.clone(), json!({"rows": 10})).with_terminate(true));
        assert_eq!(r.terminate, Some(true));
        assert!(
            r.text_content()
                .starts_with("line 1\nline 2\nline 3\n[Output truncated")
        );
        assert_eq!(r.details.details, json!({"rows": 10}));
        assert_eq!(r.details.full_text.as_deref(), Some(full.as_str()));
        assert_eq!(r.details.truncation.as_ref().unwrap().total_lines, 10);
    }

    #[test]
    fn budgets_span_blocks_and_leave_images_alone() {
        let budget = ResultBudget::new(1000, 3);
        let result = JsonToolResult::new(
            vec![
                Content::text("a\nb"),
                Content::image("AAAA", "image/png"),
                Content::text("c\nd\ne"),
                Content::text("f"),
            ],
            None,
        );
        let cut = budget.apply_json(result);
        assert_eq!(
            cut.content,
            vec![
                Content::text("a\nb"),
                Content::image("AAAA", "image/png"),
                Content::text(
                    "c\n[Output truncated: showing lines 1-3 of 6. \
                     Call again with offset=3 to continue.]"
                ),
            ]
        );
        // The tool gave no details key: the wrapper leaves `details` out as well.
        let details = cut.details.unwrap();
        assert_eq!(details.get("details"), None);
        assert_eq!(details["fullText"], json!("a\nb\nc\nd\ne\nf"));
        assert_eq!(details["truncation"]["lastLine"], json!(3));
        assert_eq!(details["truncation"]["by"], json!("lines"));
    }

    #[test]
    fn a_cut_at_a_block_boundary_notes_on_the_last_kept_block() {
        let budget = ResultBudget::new(1000, 2);
        let r = budget.apply_json(JsonToolResult::new(
            vec![Content::text("a\nb\n"), Content::text("c\n")],
            Some(json!({"k": 1}).into()),
        ));
        assert_eq!(r.content.len(), 1);
        assert_eq!(
            r.content[0].as_text().unwrap(),
            "a\nb\n[Output truncated: showing lines 1-2 of 3. Call again with offset=2 to continue.]"
        );
        assert_eq!(r.details.unwrap()["details"], json!({"k": 1}));
    }

    #[test]
    fn json_results_that_fit_keep_their_shape() {
        let budget = ResultBudget::default();
        let r = JsonToolResult::new(vec![Content::text("small")], Some(json!({"k": 1}).into()));
        assert_eq!(budget.apply_json(r.clone()), r);
        let absent = JsonToolResult::new(vec![Content::text("small")], None);
        assert_eq!(budget.apply_json(absent.clone()).details, None);
    }

    #[test]
    fn progress_updates_are_bounded_and_closing_is_respected() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let inner = OnUpdate::new(move |u: AgentToolResult<u32>| {
            sink.lock().unwrap().push((u.text_content(), u.details));
        });
        let bounded = ResultBudget::new(1000, 2).bound_updates(inner.clone());
        bounded.send(AgentToolResult::text("1\n2\n3\n4\n", 9));
        bounded.send(AgentToolResult::text("ok", 10));
        inner.close();
        bounded.send(AgentToolResult::text("late", 11));
        assert_eq!(
            *seen.lock().unwrap(),
            vec![
                (
                    "1\n2\n[Progress truncated: showing lines 1-2 of 4.]".to_owned(),
                    9
                ),
                ("ok".to_owned(), 10),
            ]
        );
        let none: OnUpdate<u32> = ResultBudget::default().bound_updates(OnUpdate::none());
        assert!(!none.is_listening());
    }

    #[test]
    fn line_counting_treats_a_trailing_newline_as_an_end() {
        assert_eq!(line_count(""), 0);
        assert_eq!(line_count("a"), 1);
        assert_eq!(line_count("a\n"), 1);
        assert_eq!(line_count("a\n\n"), 2);
        assert_eq!(line_count("\n"), 1);
    }
}
