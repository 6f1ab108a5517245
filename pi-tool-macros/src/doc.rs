//! Doc comments -> the model-facing description, following rustdoc.
//!
//! `/// text` arrives as `#[doc = " text"]`, one attribute per line. Like rustdoc we strip
//! one leading space from each line and read the result as Markdown: blank lines separate
//! paragraphs, fenced (```` ``` ````/`~~~`) and indented code blocks, list items, headings,
//! quotes and table rows keep their line breaks. Soft-wrapped prose lines inside a
//! paragraph are joined with a space, as a Markdown renderer would show them; that way a
//! description wrapped at 100 columns in the source reaches the model as the sentence the
//! author meant (for `get_weather`, exactly Pi's one-line description).
//!
//! `#[doc = include_str!("..")]` (or any other macro) cannot be read by the macro; it is
//! kept as an expression and spliced into a `concat!`, used verbatim (a Markdown file needs
//! no space stripping), and the whole text is trimmed at compile time.

use syn::{Attribute, Expr, Lit, Meta};

/// One piece of a description: processed text, or an expression to splice in.
pub enum Piece {
    Text(String),
    Expr(Expr),
}

/// The description assembled from doc attributes.
pub struct Doc {
    pub pieces: Vec<Piece>,
}

impl Doc {
    /// Whether nothing would reach the model (no docs, or only blank ones).
    pub fn is_empty(&self) -> bool {
        self.pieces.iter().all(|p| match p {
            Piece::Text(t) => t.trim().is_empty(),
            Piece::Expr(_) => false,
        })
    }
}

/// Reads the `#[doc = ...]` attributes in order.
pub fn from_attrs(attrs: &[Attribute]) -> Doc {
    let mut pieces = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    for attr in attrs {
        let Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        if !nv.path.is_ident("doc") {
            continue;
        }
        match &nv.value {
            Expr::Lit(lit) => {
                if let Lit::Str(s) = &lit.lit {
                    // A `/** ... */` block comment is one attribute with several lines.
                    for line in s.value().split('\n') {
                        lines.push(line.strip_prefix(' ').unwrap_or(line).to_owned());
                    }
                }
            }
            other => {
                if !lines.is_empty() {
                    // A blank doc line before the included text keeps the paragraph break.
                    let sep = if ends_blank(&lines) { "\n\n" } else { "\n" };
                    pieces.push(Piece::Text(format!("{}{sep}", render(&lines))));
                    lines.clear();
                }
                pieces.push(Piece::Expr(other.clone()));
            }
        }
    }
    if !lines.is_empty() {
        let text = render(&lines);
        // After an included file, the next lines start on a fresh line.
        let text = if pieces.is_empty() {
            text
        } else if lines.first().is_some_and(|l| l.trim().is_empty()) {
            format!("\n\n{text}")
        } else {
            format!("\n{text}")
        };
        pieces.push(Piece::Text(text));
    }
    Doc { pieces }
}

fn ends_blank(lines: &[String]) -> bool {
    lines.last().is_some_and(|l| l.trim().is_empty())
}

/// Renders doc lines (one space already stripped) as Markdown text.
pub fn render(lines: &[String]) -> String {
    let mut out = String::new();
    let mut fence: Option<&str> = None;
    // Whether the previous line was prose that the current one may continue.
    let mut prose_open = false;
    let mut prev_blank = true;
    let mut hard_break = false;
    for line in lines {
        let trimmed = line.trim_start();
        if let Some(marker) = fence {
            out.push('\n');
            out.push_str(line);
            if trimmed.starts_with(marker) {
                fence = None;
            }
            prev_blank = false;
            continue;
        }
        if line.trim().is_empty() {
            if !out.is_empty() {
                out.push('\n');
            }
            prose_open = false;
            prev_blank = true;
            continue;
        }
        let starts_fence = trimmed.starts_with("```") || trimmed.starts_with("~~~");
        let indented_code = line.starts_with("    ") && (prev_blank || !prose_open);
        if starts_fence || indented_code {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(line);
            if starts_fence {
                fence = Some(if trimmed.starts_with("```") {
                    "```"
                } else {
                    "~~~"
                });
            }
            prose_open = false;
            prev_blank = false;
            continue;
        }
        let block_start = is_block_start(trimmed);
        if prose_open && !block_start && !hard_break {
            out.push(' ');
            out.push_str(trimmed.trim_end());
        } else {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(line.trim_end());
        }
        // A Markdown hard break (two trailing spaces or a backslash) keeps the newline.
        hard_break = line.ends_with("  ") || line.ends_with('\\');
        prose_open = !trimmed.starts_with('#') && !trimmed.starts_with('|');
        prev_blank = false;
    }
    out.trim().to_owned()
}

/// A line that starts its own Markdown block: list item, heading, quote, table row, rule.
fn is_block_start(trimmed: &str) -> bool {
    let bullet = ["- ", "* ", "+ "].iter().any(|b| trimmed.starts_with(b));
    let numbered = {
        let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
        digits > 0 && {
            let rest = &trimmed[digits..];
            rest.starts_with(". ") || rest.starts_with(") ")
        }
    };
    bullet
        || numbered
        || trimmed.starts_with('#')
        || trimmed.starts_with('>')
        || trimmed.starts_with('|')
        || trimmed == "---"
}

#[cfg(test)]
mod tests {
    use super::render;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_owned).collect()
    }

    #[test]
    fn soft_wrapped_prose_becomes_one_line() {
        assert_eq!(
            render(&lines(
                "Return the demo temperature for Paris or Tokyo. Use only for a weather or\ntemperature question about one of those cities."
            )),
            "Return the demo temperature for Paris or Tokyo. Use only for a weather or temperature question about one of those cities."
        );
    }

    #[test]
    fn paragraphs_lists_and_code_blocks_are_kept() {
        let text = "First paragraph\ncontinues.\n\nSecond:\n- one\n- two\n\n```json\n{\"city\": \"Paris\"}\n  indented\n```\n\n    indented code\n    block\nLast.";
        assert_eq!(
            render(&lines(text)),
            "First paragraph continues.\n\nSecond:\n- one\n- two\n\n```json\n{\"city\": \"Paris\"}\n  indented\n```\n\n    indented code\n    block\nLast."
        );
    }
}
