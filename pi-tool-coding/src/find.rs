//! `find`: file and directory names matching a glob, with the walk `fd` does for Pi
//! (`--glob --hidden`, `.gitignore` applied, `--full-path` for patterns with `/`).

use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

use globset::GlobBuilder;
use ignore::WalkBuilder;
use pi_tool_core::{AbortSignal, JsonSchema, ToolError};
use serde::{Deserialize, Serialize};

use crate::js;
use crate::truncate::{
    DEFAULT_MAX_BYTES, NO_LINE_LIMIT, TruncatedOutput, format_size, truncate_head,
};

const DEFAULT_LIMIT: f64 = 1000.0;

/// Arguments of `find`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(crate = "pi_tool_core::schemars")]
#[non_exhaustive]
pub struct FindParams {
    /// Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'
    pub pattern: String,
    /// Directory to search in (default: current directory)
    #[serde(default)]
    #[schemars(with = "String", transform = crate::js::no_default)]
    pub path: Option<String>,
    /// Maximum number of results (default: 1000)
    #[serde(default)]
    #[schemars(with = "f64", transform = crate::js::no_default)]
    pub limit: Option<f64>,
}

/// `find`'s details: which limits cut the output.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FindDetails {
    /// The result limit, when it was reached: the call's `limit` (or the default) as Pi
    /// echoes it, a JSON number that the schema lets be fractional, hence not an integer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_limit_reached: Option<f64>,
    /// The byte truncation, when the output was cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncation: Option<TruncatedOutput>,
}

fn inside_git_repo(start: &Path) -> bool {
    start.ancestors().any(|dir| dir.join(".git").exists())
}

/// Walks and formats, on a blocking thread.
pub(crate) fn run_blocking(
    params: &FindParams,
    cwd: &Path,
    signal: &AbortSignal,
) -> Result<(String, Option<FindDetails>), ToolError> {
    let search_path = crate::paths::resolve_to_cwd(
        params
            .path
            .as_deref()
            .filter(|p| !p.is_empty())
            .unwrap_or("."),
        cwd,
    );
    let limit = params.limit.unwrap_or(DEFAULT_LIMIT);
    if !search_path.is_dir() {
        // fd's own refusal, which Pi passes on (fd's stderr, trimmed): the same two lines
        // for a path that is missing and for one that is a file.
        return Err(ToolError::new(format!(
            "[fd error]: Search path '{}' is not a directory.\n[fd error]: No valid search paths given.",
            search_path.display()
        )));
    }
    // Pi passes `String(limit)` to `fd --max-results`, which takes a whole number and
    // treats 0 as no limit.
    let max = if limit.fract() == 0.0 && limit >= 0.0 && limit.is_finite() {
        if limit == 0.0 {
            usize::MAX
        } else {
            limit as usize
        }
    } else {
        return Err(ToolError::new(format!(
            "error: invalid value '{}' for '--max-results <count>': invalid digit found in string\n\nFor more information, try '--help'.",
            js::num(limit)
        )));
    };
    let full_path = params.pattern.contains('/');
    let pattern = if full_path
        && !params.pattern.starts_with('/')
        && !params.pattern.starts_with("**/")
        && params.pattern != "**"
    {
        format!("**/{}", params.pattern)
    } else {
        params.pattern.clone()
    };
    let glob = GlobBuilder::new(&pattern)
        .literal_separator(full_path)
        .build()
        .map_err(|e| ToolError::new(format!("[fd error]: {e}")))?
        .compile_matcher();

    let mut builder = WalkBuilder::new(&search_path);
    builder
        .hidden(false)
        .follow_links(false)
        .require_git(inside_git_repo(&search_path))
        .add_custom_ignore_filename(".fdignore");
    // fd sorts what it found within its buffering time (all of it, for any tree it walks
    // in that time), and stops after `--max-results`: only the first `max` paths in path
    // order can be shown, so only those are kept (a directory of a million entries holds
    // `max` paths here, not a million).
    let mut found: BinaryHeap<(PathBuf, bool)> = BinaryHeap::new();
    for entry in builder.build() {
        if signal.is_aborted() {
            return Err(ToolError::new("Operation aborted"));
        }
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let path = entry.path();
        let matched = if full_path {
            glob.is_match(path)
        } else {
            path.file_name()
                .is_some_and(|name| glob.is_match(Path::new(name)))
        };
        if matched {
            if found.len() >= max && found.peek().is_some_and(|(last, _)| path >= last.as_path()) {
                continue;
            }
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            found.push((path.to_path_buf(), is_dir));
            if found.len() > max {
                found.pop();
            }
        }
    }
    if found.is_empty() {
        return Ok(("No files found matching pattern".to_owned(), None));
    }
    let mut found = found.into_sorted_vec();
    let max = if limit.is_finite() {
        limit.ceil() as usize
    } else {
        usize::MAX
    };
    found.truncate(max);
    let relativized: Vec<String> = found
        .iter()
        .map(|(path, is_dir)| {
            let rel = path
                .strip_prefix(&search_path)
                .unwrap_or(path)
                .to_string_lossy()
                .into_owned();
            if *is_dir { format!("{rel}/") } else { rel }
        })
        .collect();
    let limit_reached = relativized.len() as f64 >= limit;
    let raw = relativized.join("\n");
    let truncation = truncate_head(&raw, NO_LINE_LIMIT, DEFAULT_MAX_BYTES);
    let mut output = truncation.content.clone();
    let mut details = FindDetails::default();
    let mut notices = Vec::new();
    if limit_reached {
        notices.push(format!(
            "{} results limit reached. Use limit={} for more, or refine pattern",
            js::num(limit),
            js::num(limit * 2.0)
        ));
        details.result_limit_reached = Some(limit);
    }
    if truncation.truncated {
        notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
        details.truncation = Some(truncation);
    }
    if !notices.is_empty() {
        output.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    let has = details.result_limit_reached.is_some() || details.truncation.is_some();
    Ok((output, has.then_some(details)))
}
