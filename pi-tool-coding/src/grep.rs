//! `grep`: ripgrep's own crates in process, with the options Pi passes to `rg` (`--json
//! --line-number --hidden`, `--ignore-case`, `--fixed-strings`, `--glob`) and the
//! `--sort=path` order Pi's recordings use.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::Bytes;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::overrides::OverrideBuilder;
use ignore::{WalkBuilder, WalkState};
use pi_tool_core::{AbortSignal, JsonSchema, ToolError};
use serde::{Deserialize, Serialize};

use crate::js;
use crate::truncate::{
    DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, NO_LINE_LIMIT, TruncatedOutput, format_size,
    truncate_head,
};

const DEFAULT_LIMIT: f64 = 100.0;

/// Arguments of `grep`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(crate = "pi_tool_core::schemars")]
#[non_exhaustive]
pub struct GrepParams {
    /// Search pattern (regex or literal string)
    pub pattern: String,
    /// Directory or file to search (default: current directory)
    #[serde(default)]
    #[schemars(with = "String", transform = crate::js::no_default)]
    pub path: Option<String>,
    /// Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'
    #[serde(default)]
    #[schemars(with = "String", transform = crate::js::no_default)]
    pub glob: Option<String>,
    /// Case-insensitive search (default: false)
    #[serde(default, rename = "ignoreCase")]
    #[schemars(with = "bool", transform = crate::js::no_default)]
    pub ignore_case: Option<bool>,
    /// Treat pattern as literal string instead of regex (default: false)
    #[serde(default)]
    #[schemars(with = "bool", transform = crate::js::no_default)]
    pub literal: Option<bool>,
    /// Number of lines to show before and after each match (default: 0)
    #[serde(default)]
    #[schemars(with = "f64", transform = crate::js::no_default)]
    pub context: Option<f64>,
    /// Maximum number of matches to return (default: 100)
    #[serde(default)]
    #[schemars(with = "f64", transform = crate::js::no_default)]
    pub limit: Option<f64>,
}

/// `grep`'s details: which limits cut the output.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GrepDetails {
    /// The match limit, when it was reached: the call's `limit` (or the default) as Pi
    /// echoes it, a JSON number that the schema lets be fractional, hence not an integer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_limit_reached: Option<f64>,
    /// The byte truncation, when the output was cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncation: Option<TruncatedOutput>,
    /// Whether some lines were cut to 500 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines_truncated: Option<bool>,
}

struct Match {
    path: PathBuf,
    line_number: u64,
    /// The line as ripgrep reports it; `None` when it is not UTF-8 (ripgrep's JSON then
    /// carries bytes, and Pi reads the file instead).
    text: Option<String>,
}

fn walk_builder(root: &Path, glob: Option<&str>) -> Result<WalkBuilder, ToolError> {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .follow_links(false)
        .add_custom_ignore_filename(".rgignore");
    if let Some(glob) = glob {
        // ripgrep roots its globs at its own working directory (Pi's process's), and Pi
        // always passes an absolute search path; the process's directory stands in.
        let base = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let mut overrides = OverrideBuilder::new(base);
        overrides
            .add(glob)
            .map_err(|e| ToolError::new(format!("rg: {e}")))?;
        let overrides = overrides
            .build()
            .map_err(|e| ToolError::new(format!("rg: {e}")))?;
        builder.overrides(overrides);
    }
    Ok(builder)
}

/// A searcher as ripgrep configures one. A file named by the caller is searched whole,
/// NUL bytes and all (ripgrep prints its lines as they are); a file met in a directory
/// walk is skipped at its first NUL (ripgrep's binary-file rule).
fn searcher(explicit: bool) -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .binary_detection(if explicit {
            BinaryDetection::none()
        } else {
            BinaryDetection::quit(b'\0')
        })
        .build()
}

/// Searches one file: its matching lines, at most `cap`, and the error that stopped it.
/// The searcher is reused across files (one per walker thread, as ripgrep keeps one):
/// building one allocates and clears its 64 KB buffer.
fn search_file(
    searcher: &mut Searcher,
    matcher: &grep_regex::RegexMatcher,
    path: &Path,
    cap: u64,
    signal: &AbortSignal,
) -> (Vec<Match>, Option<String>) {
    let mut found = Vec::new();
    let result = searcher.search_path(
        matcher,
        path,
        Bytes(|line_number, line| {
            let text = std::str::from_utf8(line).ok().map(str::to_owned);
            found.push(Match {
                path: path.to_path_buf(),
                line_number,
                text,
            });
            Ok((found.len() as u64) < cap && !signal.is_aborted())
        }),
    );
    let error = result.err().map(|e| format!("rg: {}: {e}", path.display()));
    (found, error)
}

/// What a parallel search keeps: the files with matches, in path order, pruned to the
/// first `cap` matches in that order, so memory stays bounded by the limit.
#[derive(Default)]
struct Collected {
    files: std::collections::BTreeMap<PathBuf, Vec<Match>>,
    total: u64,
    errors: Vec<String>,
}

/// Walks a directory on several threads, as ripgrep does, and returns the first `cap`
/// matches in path order (the order of Pi's `--sort=path` recordings), whether the cap
/// was reached, and the errors met.
fn search_tree(
    root: &Path,
    glob: Option<&str>,
    matcher: &grep_regex::RegexMatcher,
    cap: u64,
    signal: &AbortSignal,
) -> Result<(Vec<Match>, bool, Vec<String>), ToolError> {
    let collected = Mutex::new(Collected::default());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(12));
    walk_builder(root, glob)?
        .threads(threads)
        .build_parallel()
        .run(|| {
            let collected = &collected;
            let mut searcher = searcher(false);
            Box::new(move |entry| {
                if signal.is_aborted() {
                    return WalkState::Quit;
                }
                let entry = match entry {
                    Ok(entry) => entry,
                    Err(e) => {
                        lock(collected).errors.push(format!("rg: {e}"));
                        return WalkState::Continue;
                    }
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                let (found, error) = search_file(&mut searcher, matcher, entry.path(), cap, signal);
                let mut state = lock(collected);
                if let Some(error) = error {
                    state.errors.push(error);
                }
                if !found.is_empty() {
                    state.total += found.len() as u64;
                    state.files.insert(entry.path().to_path_buf(), found);
                    // Files after the first `cap` matches can never be shown.
                    while let Some((_, last)) = state.files.last_key_value() {
                        let n = last.len() as u64;
                        if state.total - n < cap {
                            break;
                        }
                        state.total -= n;
                        state.files.pop_last();
                    }
                }
                WalkState::Continue
            })
        });
    if signal.is_aborted() {
        return Err(ToolError::new("Operation aborted"));
    }
    let state = collected
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    let reached = state.total >= cap;
    let mut matches: Vec<Match> = state.files.into_values().flatten().collect();
    matches.truncate(usize::try_from(cap).unwrap_or(usize::MAX));
    let mut errors = state.errors;
    errors.sort();
    Ok((matches, reached, errors))
}

fn lock(m: &Mutex<Collected>) -> std::sync::MutexGuard<'_, Collected> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Searches and formats, on a blocking thread.
pub(crate) fn run_blocking(
    params: &GrepParams,
    cwd: &Path,
    signal: &AbortSignal,
) -> Result<(String, Option<GrepDetails>), ToolError> {
    let search_path = crate::paths::resolve_to_cwd(
        params
            .path
            .as_deref()
            .filter(|p| !p.is_empty())
            .unwrap_or("."),
        cwd,
    );
    let meta = std::fs::metadata(&search_path)
        .map_err(|_| ToolError::new(format!("Path not found: {}", search_path.display())))?;
    let is_directory = meta.is_dir();
    let context = params.context.filter(|c| *c > 0.0).unwrap_or(0.0);
    let limit = params.limit.unwrap_or(DEFAULT_LIMIT).max(1.0);
    // `matchCount >= effectiveLimit`: a fractional limit stops at the next whole count.
    let limit_count = if limit.is_finite() {
        limit.ceil() as u64
    } else {
        u64::MAX
    };

    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(params.ignore_case.unwrap_or(false))
        .fixed_strings(params.literal.unwrap_or(false))
        .line_terminator(Some(b'\n'))
        .build_many(&[params.pattern.as_str()])
        .map_err(|e| ToolError::new(format!("rg: {e}")))?;

    let (matches, limit_reached, errors) = if is_directory {
        search_tree(
            &search_path,
            params.glob.as_deref(),
            &matcher,
            limit_count,
            signal,
        )?
    } else {
        let (found, error) = search_file(
            &mut searcher(true),
            &matcher,
            &search_path,
            limit_count,
            signal,
        );
        let reached = found.len() as u64 >= limit_count;
        (found, reached, error.into_iter().collect())
    };
    if signal.is_aborted() {
        return Err(ToolError::new("Operation aborted"));
    }
    // ripgrep exits with code 2 after any error unless the limit stopped it first.
    if !limit_reached && !errors.is_empty() {
        return Err(ToolError::new(errors.join("\n")));
    }
    if matches.is_empty() {
        return Ok(("No matches found".to_owned(), None));
    }

    let format_path = |file: &Path| -> String {
        if is_directory
            && let Ok(rel) = file.strip_prefix(&search_path)
            && !rel.as_os_str().is_empty()
        {
            return rel.to_string_lossy().into_owned();
        }
        file.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let mut lines_truncated = false;
    let mut cut = |text: &str| -> String {
        let (out, was) = js::truncate_utf16(text, GREP_MAX_LINE_LENGTH);
        lines_truncated |= was;
        out
    };
    let mut cache: HashMap<PathBuf, Vec<String>> = HashMap::new();
    let mut output_lines: Vec<String> = Vec::new();
    for m in &matches {
        let rel = format_path(&m.path);
        if context == 0.0
            && let Some(text) = &m.text
        {
            let text = text.replace("\r\n", "\n").replace('\r', "");
            let text = text.strip_suffix('\n').unwrap_or(&text);
            output_lines.push(format!("{rel}:{}: {}", m.line_number, cut(text)));
            continue;
        }
        let lines = cache
            .entry(m.path.clone())
            .or_insert_with(|| match std::fs::read(&m.path) {
                Ok(bytes) => String::from_utf8_lossy(&bytes)
                    .replace("\r\n", "\n")
                    .replace('\r', "\n")
                    .split('\n')
                    .map(str::to_owned)
                    .collect(),
                Err(_) => Vec::new(),
            });
        if lines.is_empty() {
            output_lines.push(format!("{rel}:{}: (unable to read file)", m.line_number));
            continue;
        }
        let n = m.line_number as f64;
        let (start, end) = if context > 0.0 {
            (
                (n - context).max(1.0),
                (lines.len() as f64).min(n + context),
            )
        } else {
            (n, n)
        };
        let mut current = start;
        while current <= end {
            // `lines[current - 1] ?? ""`: a fractional index reads nothing.
            let text = if current.fract() == 0.0 && current >= 1.0 {
                lines.get(current as usize - 1).map_or("", String::as_str)
            } else {
                ""
            };
            let text = text.replace('\r', "");
            let text = cut(&text);
            if current == n {
                output_lines.push(format!("{rel}:{}: {text}", js::num(current)));
            } else {
                output_lines.push(format!("{rel}-{}- {text}", js::num(current)));
            }
            current += 1.0;
        }
    }
    let raw = output_lines.join("\n");
    let truncation = truncate_head(&raw, NO_LINE_LIMIT, DEFAULT_MAX_BYTES);
    let mut output = truncation.content.clone();
    let mut details = GrepDetails::default();
    let mut notices = Vec::new();
    if limit_reached {
        notices.push(format!(
            "{} matches limit reached. Use limit={} for more, or refine pattern",
            js::num(limit),
            js::num(limit * 2.0)
        ));
        details.match_limit_reached = Some(limit);
    }
    if truncation.truncated {
        notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
        details.truncation = Some(truncation);
    }
    if lines_truncated {
        notices.push(format!(
            "Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
        ));
        details.lines_truncated = Some(true);
    }
    if !notices.is_empty() {
        output.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    let has_details = details.match_limit_reached.is_some()
        || details.truncation.is_some()
        || details.lines_truncated.is_some();
    Ok((output, has_details.then_some(details)))
}
