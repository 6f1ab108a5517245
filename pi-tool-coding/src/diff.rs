//! The line diff behind `edit`'s details: a port of jsdiff 8.0.4's Myers implementation
//! (`diffLines`, `structuredPatch`, `formatPatch`), which Pi uses, so that the chosen
//! alignment (and so every `diff` and `patch` text) is the one Pi produces; and Pi's own
//! numbered display diff (`generateDiffString` in `edit-diff.ts`).

use std::collections::HashMap;

/// One run of the diff: `count` lines, added, removed or common.
#[derive(Debug, Clone)]
pub(crate) struct Part {
    pub added: bool,
    pub removed: bool,
    pub value: String,
}

struct Component {
    count: usize,
    added: bool,
    removed: bool,
    previous: Option<usize>,
}

#[derive(Clone, Copy)]
struct DiffPath {
    old_pos: i64,
    last: Option<usize>,
}

/// jsdiff's line tokens: each line with its newline.
fn tokenize(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in value.bytes().enumerate() {
        if b == b'\n' {
            out.push(&value[start..=i]);
            start = i + 1;
        }
    }
    if start < value.len() {
        out.push(&value[start..]);
    }
    out
}

/// jsdiff's `diffLines(old, new)`.
pub(crate) fn diff_lines(old: &str, new: &str) -> Vec<Part> {
    let old_tokens = tokenize(old);
    let new_tokens = tokenize(new);
    let old_len = old_tokens.len() as i64;
    let new_len = new_tokens.len() as i64;
    let mut arena: Vec<Component> = Vec::new();

    let extract_common = |path: &mut DiffPath, diagonal: i64, arena: &mut Vec<Component>| -> i64 {
        let mut old_pos = path.old_pos;
        let mut new_pos = old_pos - diagonal;
        let mut common = 0;
        while new_pos + 1 < new_len
            && old_pos + 1 < old_len
            && old_tokens[(old_pos + 1) as usize] == new_tokens[(new_pos + 1) as usize]
        {
            new_pos += 1;
            old_pos += 1;
            common += 1;
        }
        if common > 0 {
            arena.push(Component {
                count: common,
                added: false,
                removed: false,
                previous: path.last,
            });
            path.last = Some(arena.len() - 1);
        }
        path.old_pos = old_pos;
        new_pos
    };
    let add_to_path =
        |path: DiffPath, added: bool, removed: bool, inc: i64, arena: &mut Vec<Component>| {
            let component = match path.last.map(|i| &arena[i]) {
                Some(last) if last.added == added && last.removed == removed => Component {
                    count: last.count + 1,
                    added,
                    removed,
                    previous: last.previous,
                },
                _ => Component {
                    count: 1,
                    added,
                    removed,
                    previous: path.last,
                },
            };
            arena.push(component);
            DiffPath {
                old_pos: path.old_pos + inc,
                last: Some(arena.len() - 1),
            }
        };

    let mut best: HashMap<i64, DiffPath> = HashMap::new();
    let mut first = DiffPath {
        old_pos: -1,
        last: None,
    };
    let new_pos = extract_common(&mut first, 0, &mut arena);
    if first.old_pos + 1 >= old_len && new_pos + 1 >= new_len {
        return build_values(&arena, first.last, &new_tokens, &old_tokens);
    }
    best.insert(0, first);
    let max_edit = new_len + old_len;
    let mut min_diag = i64::MIN;
    let mut max_diag = i64::MAX;
    let mut edit_len: i64 = 1;
    while edit_len <= max_edit {
        let mut diagonal = min_diag.max(-edit_len);
        while diagonal <= max_diag.min(edit_len) {
            let remove_path = best.get(&(diagonal - 1)).copied();
            let add_path = best.get(&(diagonal + 1)).copied();
            if remove_path.is_some() {
                best.remove(&(diagonal - 1));
            }
            let can_add = add_path.is_some_and(|p| {
                let n = p.old_pos - diagonal;
                0 <= n && n < new_len
            });
            let can_remove = remove_path.is_some_and(|p| p.old_pos + 1 < old_len);
            if !can_add && !can_remove {
                best.remove(&diagonal);
                diagonal += 2;
                continue;
            }
            let use_add = !can_remove
                || (can_add
                    && matches!((remove_path, add_path), (Some(r), Some(a)) if r.old_pos < a.old_pos));
            let mut base = match (use_add, add_path, remove_path) {
                (true, Some(a), _) => add_to_path(a, true, false, 0, &mut arena),
                (false, _, Some(r)) => add_to_path(r, false, true, 1, &mut arena),
                _ => unreachable_path(),
            };
            let new_pos = extract_common(&mut base, diagonal, &mut arena);
            if base.old_pos + 1 >= old_len && new_pos + 1 >= new_len {
                return build_values(&arena, base.last, &new_tokens, &old_tokens);
            }
            best.insert(diagonal, base);
            if base.old_pos + 1 >= old_len {
                max_diag = max_diag.min(diagonal - 1);
            }
            if new_pos + 1 >= new_len {
                min_diag = min_diag.max(diagonal + 1);
            }
            diagonal += 2;
        }
        edit_len += 1;
    }
    // Not reached: an edit script of length old + new always exists. Report the whole
    // change rather than nothing.
    let mut parts = Vec::new();
    if !old.is_empty() {
        parts.push(Part {
            added: false,
            removed: true,
            value: old.to_owned(),
        });
    }
    if !new.is_empty() {
        parts.push(Part {
            added: true,
            removed: false,
            value: new.to_owned(),
        });
    }
    parts
}

/// The branch `diff_lines` cannot take (one of the paths exists when either can move);
/// a path at the origin keeps the function total.
fn unreachable_path() -> DiffPath {
    DiffPath {
        old_pos: -1,
        last: None,
    }
}

fn build_values(arena: &[Component], last: Option<usize>, new: &[&str], old: &[&str]) -> Vec<Part> {
    let mut chain = Vec::new();
    let mut cursor = last;
    while let Some(i) = cursor {
        chain.push(i);
        cursor = arena[i].previous;
    }
    chain.reverse();
    let (mut new_pos, mut old_pos) = (0usize, 0usize);
    let mut parts = Vec::with_capacity(chain.len());
    for i in chain {
        let c = &arena[i];
        let value = if !c.removed {
            let v = new[new_pos..new_pos + c.count].concat();
            new_pos += c.count;
            if !c.added {
                old_pos += c.count;
            }
            v
        } else {
            let v = old[old_pos..old_pos + c.count].concat();
            old_pos += c.count;
            v
        };
        parts.push(Part {
            added: c.added,
            removed: c.removed,
            value,
        });
    }
    parts
}

/// jsdiff's `splitLines`: lines with their newline.
fn split_lines_keep(text: &str) -> Vec<String> {
    let mut result: Vec<String> = text.split('\n').map(|l| format!("{l}\n")).collect();
    if text.ends_with('\n') {
        result.pop();
    } else if let Some(last) = result.last_mut() {
        last.pop();
    }
    result
}

struct Hunk {
    old_start: usize,
    old_lines: usize,
    new_start: usize,
    new_lines: usize,
    lines: Vec<String>,
}

/// jsdiff's `createTwoFilesPatch(path, path, old, new, undefined, undefined, {context,
/// headerOptions: FILE_HEADERS_ONLY})`.
pub(crate) fn unified_patch(path: &str, old: &str, new: &str, context: usize) -> String {
    let mut diff: Vec<(bool, bool, Vec<String>)> = diff_lines(old, new)
        .into_iter()
        .map(|p| (p.added, p.removed, split_lines_keep(&p.value)))
        .collect();
    diff.push((false, false, Vec::new()));
    let mut hunks: Vec<Hunk> = Vec::new();
    let (mut old_range_start, mut new_range_start) = (0usize, 0usize);
    let mut cur: Vec<String> = Vec::new();
    let (mut old_line, mut new_line) = (1usize, 1usize);
    let ctx = |lines: &[String]| lines.iter().map(|l| format!(" {l}")).collect::<Vec<_>>();
    for i in 0..diff.len() {
        let (added, removed) = (diff[i].0, diff[i].1);
        if added || removed {
            if old_range_start == 0 {
                old_range_start = old_line;
                new_range_start = new_line;
                if i > 0 {
                    let prev = &diff[i - 1].2;
                    cur = if context > 0 {
                        ctx(&prev[prev.len().saturating_sub(context)..])
                    } else {
                        Vec::new()
                    };
                    old_range_start -= cur.len();
                    new_range_start -= cur.len();
                }
            }
            let sign = if added { '+' } else { '-' };
            for line in &diff[i].2 {
                cur.push(format!("{sign}{line}"));
            }
            if added {
                new_line += diff[i].2.len();
            } else {
                old_line += diff[i].2.len();
            }
        } else {
            let lines = &diff[i].2;
            if old_range_start != 0 {
                if lines.len() <= context * 2 && i + 2 < diff.len() {
                    cur.extend(ctx(lines));
                } else {
                    let size = lines.len().min(context);
                    cur.extend(ctx(&lines[..size]));
                    hunks.push(Hunk {
                        old_start: old_range_start,
                        old_lines: old_line - old_range_start + size,
                        new_start: new_range_start,
                        new_lines: new_line - new_range_start + size,
                        lines: std::mem::take(&mut cur),
                    });
                    old_range_start = 0;
                    new_range_start = 0;
                }
            }
            old_line += lines.len();
            new_line += lines.len();
        }
    }
    let mut out = vec![format!("--- {path}"), format!("+++ {path}")];
    for mut hunk in hunks {
        let mut lines = Vec::with_capacity(hunk.lines.len());
        for line in hunk.lines.drain(..) {
            match line.strip_suffix('\n') {
                Some(l) => lines.push(l.to_owned()),
                None => {
                    lines.push(line);
                    lines.push("\\ No newline at end of file".to_owned());
                }
            }
        }
        if hunk.old_lines == 0 {
            hunk.old_start = hunk.old_start.saturating_sub(1);
        }
        if hunk.new_lines == 0 {
            hunk.new_start = hunk.new_start.saturating_sub(1);
        }
        out.push(format!(
            "@@ -{},{} +{},{} @@",
            hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines
        ));
        out.extend(lines);
    }
    out.join("\n") + "\n"
}

/// Pi's `generateDiffString`: numbered `+`/`-`/context lines, and the first changed line
/// of the new text.
pub(crate) fn display_diff(old: &str, new: &str, context: usize) -> (String, Option<usize>) {
    let parts = diff_lines(old, new);
    let max_line = old.split('\n').count().max(new.split('\n').count());
    let width = max_line.to_string().len();
    let mut out: Vec<String> = Vec::new();
    let (mut old_num, mut new_num) = (1usize, 1usize);
    let mut last_was_change = false;
    let mut first_changed = None;
    let num = |n: usize| format!("{n:>width$}");
    let blank = " ".repeat(width);
    for (i, part) in parts.iter().enumerate() {
        let mut raw: Vec<&str> = part.value.split('\n').collect();
        if raw.last() == Some(&"") {
            raw.pop();
        }
        if part.added || part.removed {
            first_changed.get_or_insert(new_num);
            for line in raw {
                if part.added {
                    out.push(format!("+{} {line}", num(new_num)));
                    new_num += 1;
                } else {
                    out.push(format!("-{} {line}", num(old_num)));
                    old_num += 1;
                }
            }
            last_was_change = true;
            continue;
        }
        let next_is_change = parts.get(i + 1).is_some_and(|p| p.added || p.removed);
        let show =
            |lines: &[&str], out: &mut Vec<String>, old_num: &mut usize, new_num: &mut usize| {
                for line in lines {
                    out.push(format!(" {} {line}", num(*old_num)));
                    *old_num += 1;
                    *new_num += 1;
                }
            };
        if last_was_change && next_is_change {
            if raw.len() <= context * 2 {
                show(&raw, &mut out, &mut old_num, &mut new_num);
            } else {
                let skipped = raw.len() - 2 * context;
                show(&raw[..context], &mut out, &mut old_num, &mut new_num);
                out.push(format!(" {blank} ..."));
                old_num += skipped;
                new_num += skipped;
                show(
                    &raw[raw.len() - context..],
                    &mut out,
                    &mut old_num,
                    &mut new_num,
                );
            }
        } else if last_was_change {
            let shown = raw.len().min(context);
            let skipped = raw.len() - shown;
            show(&raw[..shown], &mut out, &mut old_num, &mut new_num);
            if skipped > 0 {
                out.push(format!(" {blank} ..."));
                old_num += skipped;
                new_num += skipped;
            }
        } else if next_is_change {
            let skipped = raw.len().saturating_sub(context);
            if skipped > 0 {
                out.push(format!(" {blank} ..."));
                old_num += skipped;
                new_num += skipped;
            }
            show(&raw[skipped..], &mut out, &mut old_num, &mut new_num);
        } else {
            old_num += raw.len();
            new_num += raw.len();
        }
        last_was_change = false;
    }
    (out.join("\n"), first_changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_line() {
        let parts = diff_lines("a\nb\nc\n", "a\nx\nc\n");
        let shape: Vec<(bool, bool, &str)> = parts
            .iter()
            .map(|p| (p.added, p.removed, p.value.as_str()))
            .collect();
        assert_eq!(
            shape,
            [
                (false, false, "a\n"),
                (false, true, "b\n"),
                (true, false, "x\n"),
                (false, false, "c\n")
            ]
        );
        assert_eq!(
            unified_patch("f", "a\nb\nc\n", "a\nx\nc\n", 4),
            "--- f\n+++ f\n@@ -1,3 +1,3 @@\n a\n-b\n+x\n c\n"
        );
        let (diff, first) = display_diff("a\nb\nc\n", "a\nx\nc\n", 4);
        assert_eq!(diff, " 1 a\n-2 b\n+2 x\n 3 c");
        assert_eq!(first, Some(2));
    }

    #[test]
    fn missing_final_newline_is_marked() {
        assert_eq!(
            unified_patch("f", "a", "b", 4),
            "--- f\n+++ f\n@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"
        );
    }
}
