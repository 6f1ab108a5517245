//! The session's system prompt: rebuilt from the active tools on every change.
//!
//! The tool-derived part follows Pi (conformance/SEMANTICS.md §6, conformance/FORMAT.md §7.4) exactly:
//!
//! ```text
//! <intro>
//!
//! Available tools:
//! - <name>: <snippet>        one line per ACTIVE tool with a snippet, in active order;
//!                            "(none)" when there is no such line
//!
//! <after-tools text>
//!
//! Guidelines:
//! - <line>                   [shell exploration rule], tool guidelines (active order),
//!                            "Be concise in your responses",
//!                            "Show file paths clearly when working with files";
//!                            trimmed, empty ones dropped, de-duplicated keeping the first
//! [<appended sections>]
//!
//! Current working directory: <cwd>
//! ```
//!
//! The surrounding text (intro, the sentence after the tool list, appended sections) is
//! pi-tool's and configurable through [`PromptTemplate`]. A custom prompt
//! ([`SystemPrompt::Custom`]) replaces everything: it has no tool list and no guidelines,
//! as in Pi.

use std::path::Path;

use pi_tool_core::ToolSpec;

/// The first fixed guideline (Pi's text).
pub const GUIDELINE_CONCISE: &str = "Be concise in your responses";
/// The second fixed guideline (Pi's text).
pub const GUIDELINE_PATHS: &str = "Show file paths clearly when working with files";

/// The text around the tool-derived sections of the default prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptTemplate {
    /// The opening paragraph.
    pub intro: String,
    /// The paragraph between "Available tools" and "Guidelines".
    pub after_tools: String,
    /// Paragraphs appended after the guidelines (Pi's `appendSystemPrompt`).
    pub append: Vec<String>,
}

impl Default for PromptTemplate {
    fn default() -> Self {
        PromptTemplate {
            intro: "You are a helpful assistant with access to tools. Call a tool when it is the best way to answer; explain what you did.".to_owned(),
            after_tools: "In addition to the tools above, you may have access to other custom tools depending on the project.".to_owned(),
            append: Vec::new(),
        }
    }
}

/// Where a session's system prompt comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SystemPrompt {
    /// The default prompt builder with this template.
    Default(PromptTemplate),
    /// The host's own prompt: no tool list, no guidelines (Pi's `systemPrompt` option).
    Custom {
        /// The prompt text.
        text: String,
        /// Paragraphs appended to it.
        append: Vec<String>,
    },
}

impl Default for SystemPrompt {
    fn default() -> Self {
        SystemPrompt::Default(PromptTemplate::default())
    }
}

/// Pi's snippet normalisation: line-break runs and whitespace runs become one space,
/// trimmed; `None` when nothing is left.
pub fn normalize_snippet(snippet: &str) -> Option<String> {
    let joined = snippet.split_whitespace().collect::<Vec<_>>().join(" ");
    (!joined.is_empty()).then_some(joined)
}

/// The "Available tools" lines for the active tools (in order): `- name: snippet` per
/// tool with a snippet, or `(none)`.
pub fn available_tools_lines(active: &[&ToolSpec]) -> Vec<String> {
    let lines: Vec<String> = active
        .iter()
        .filter_map(|spec| {
            let snippet = normalize_snippet(spec.prompt_snippet.as_deref()?)?;
            Some(format!("- {}: {snippet}", spec.name))
        })
        .collect();
    if lines.is_empty() {
        vec!["(none)".to_owned()]
    } else {
        lines
    }
}

/// The "Guidelines" lines (with their `- ` prefix) for the active tools, in Pi's order
/// and with its de-duplication.
///
/// The first line is Pi's shell exploration rule: when a tool named `bash` or
/// `powershell` is active and none named `grep`, `find` or `ls` is, the model is told to
/// explore files with the shell (whoever owns the tool of that name).
pub fn guideline_lines(active: &[&ToolSpec]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut add = |line: &str| {
        let line = line.trim();
        if !line.is_empty() && !lines.iter().any(|l| l == line) {
            lines.push(line.to_owned());
        }
    };
    let has = |name: &str| active.iter().any(|s| s.name == name);
    let (bash, powershell) = (has("bash"), has("powershell"));
    if (bash || powershell) && !has("grep") && !has("find") && !has("ls") {
        add(match (bash, powershell) {
            (true, true) => {
                "Use bash or PowerShell for file operations like listing, searching, and finding files"
            }
            (false, true) => {
                "Use PowerShell for file operations like listing, searching, and finding files"
            }
            _ => "Use bash for file operations like ls, rg, find",
        });
    }
    for spec in active {
        for guideline in &spec.prompt_guidelines {
            add(guideline);
        }
    }
    add(GUIDELINE_CONCISE);
    add(GUIDELINE_PATHS);
    lines.into_iter().map(|l| format!("- {l}")).collect()
}

/// Builds the full prompt for these active tools.
pub(crate) fn build_system_prompt(
    source: &SystemPrompt,
    active: &[&ToolSpec],
    cwd: &Path,
) -> String {
    let cwd = cwd.to_string_lossy().replace('\\', "/");
    match source {
        SystemPrompt::Custom { text, append } => {
            let mut prompt = text.clone();
            for extra in append {
                prompt.push_str("\n\n");
                prompt.push_str(extra);
            }
            prompt.push_str("\nCurrent working directory: ");
            prompt.push_str(&cwd);
            prompt.push('\n');
            prompt
        }
        SystemPrompt::Default(template) => {
            let mut prompt = format!(
                "{}\n\nAvailable tools:\n{}\n\n{}\n\nGuidelines:\n{}",
                template.intro,
                available_tools_lines(active).join("\n"),
                template.after_tools,
                guideline_lines(active).join("\n"),
            );
            for extra in &template.append {
                prompt.push_str("\n\n");
                prompt.push_str(extra);
            }
            prompt.push_str("\n\nCurrent working directory: ");
            prompt.push_str(&cwd);
            prompt
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::schema::ToolSchema;

    fn spec(name: &str, snippet: Option<&str>, guidelines: &[&str]) -> ToolSpec {
        let schema = Arc::new(ToolSchema::from_json(serde_json::json!({"type": "object"})));
        let mut spec = ToolSpec::new(name, "d", schema);
        spec.prompt_snippet = snippet.map(str::to_owned);
        spec.prompt_guidelines = guidelines.iter().map(|s| (*s).to_owned()).collect();
        spec
    }

    #[test]
    fn snippets_are_one_line_and_blank_ones_are_omitted() {
        let a = spec("a", Some("Fetch\n  weather   data\r\nfor a city  "), &[]);
        let b = spec("b", Some("   \n  "), &[]);
        let c = spec("c", None, &["x"]);
        assert_eq!(
            available_tools_lines(&[&a, &b, &c]),
            ["- a: Fetch weather data for a city"]
        );
        assert_eq!(available_tools_lines(&[&b, &c]), ["(none)"]);
    }

    #[test]
    fn guidelines_are_trimmed_deduplicated_and_a_fixed_line_can_move_up() {
        let a = spec("a", None, &["  Cite  ", "Cite", "", GUIDELINE_CONCISE]);
        assert_eq!(
            guideline_lines(&[&a]),
            [
                "- Cite",
                "- Be concise in your responses",
                "- Show file paths clearly when working with files"
            ]
        );
        let bash = spec("bash", None, &[]);
        assert_eq!(
            guideline_lines(&[&bash])[0],
            "- Use bash for file operations like ls, rg, find"
        );
        let grep = spec("grep", None, &[]);
        assert_eq!(guideline_lines(&[&bash, &grep]).len(), 2);
        let ls = spec("ls", None, &[]);
        assert_eq!(guideline_lines(&[&ls, &bash]).len(), 2);
        let powershell = spec("powershell", None, &[]);
        assert_eq!(
            guideline_lines(&[&powershell])[0],
            "- Use PowerShell for file operations like listing, searching, and finding files"
        );
        assert_eq!(
            guideline_lines(&[&powershell, &bash])[0],
            "- Use bash or PowerShell for file operations like listing, searching, and finding files"
        );
        assert_eq!(guideline_lines(&[&powershell, &grep]).len(), 2);
    }

    #[test]
    fn a_custom_prompt_has_no_tool_sections() {
        let a = spec("a", Some("snip"), &["g"]);
        let custom = SystemPrompt::Custom {
            text: "Mine.".into(),
            append: vec!["More.".into()],
        };
        assert_eq!(
            build_system_prompt(&custom, &[&a], Path::new("/w")),
            "Mine.\n\nMore.\nCurrent working directory: /w\n"
        );
        let default = build_system_prompt(&SystemPrompt::default(), &[&a], Path::new("/w"));
        assert!(default.contains("\n\nAvailable tools:\n- a: snip\n\n"));
        assert!(default.contains("\n\nGuidelines:\n- g\n- Be concise"));
        assert!(default.ends_with("Current working directory: /w"));
    }
}
