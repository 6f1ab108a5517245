//! The layers are the compiler's and this test's, not a drawing's.
//!
//! For every library crate of the workspace, every path a module names through `crate::`,
//! `super::` or `self::` (in code, in `use` trees and in doc links; unit tests, after a
//! file's first `#[cfg(test)]`, are left out) is an edge between two sibling modules: the
//! two children of their nearest common parent that contain them. A module naming its own
//! parent or child is not an edge (that is how `mod.rs` re-exports and children reach the
//! folder's shared items).
//!
//! - The crate's edges between sibling modules must have no cycle, at any depth
//!   (`module_cycles`).
//! - The edges between the crate's top-level modules, and between the children of every
//!   folder the table names (a row `` `server::http` ``), must be exactly the rows of the
//!   crate's table in ARCHITECTURE.md ("Module edges"): a new import that points a lower
//!   module at a higher one fails here, with the edge named, and so does an edge that is
//!   no longer used.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module's path inside its crate, `server::http` as `["server", "http"]`.
type ModPath = Vec<String>;
type Edges = BTreeMap<String, BTreeSet<String>>;

/// The library crates whose modules the tables describe.
const CRATES: [&str; 6] = [
    "pi-tool-core",
    "pi-tool",
    "pi-tool-macros",
    "pi-tool-coding",
    "pi-tool-mcp",
    "pi-tool-store",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("pi-tool sits in the workspace")
        .to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file is: `lib.rs` the root, `a.rs` and `a/mod.rs` the module `a`,
/// `a/b.rs` the module `a::b`.
fn module_of(rel: &Path) -> ModPath {
    let mut parts: ModPath = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && !(parts.is_empty() && (stem == "lib" || stem == "main")) {
        parts.push(stem.to_owned());
    }
    parts
}

/// Every path of a `use` tree or an inline path that starts at `text`, which follows a
/// `crate::`, `super::` or `self::`: `a::{b, c::d}` gives `a::b` and `a::c::d`.
fn paths(text: &str) -> Vec<Vec<String>> {
    fn tree(chars: &[char], at: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let mut path = prefix.to_vec();
        loop {
            while chars.get(*at).is_some_and(|c| c.is_whitespace()) {
                *at += 1;
            }
            if chars.get(*at) == Some(&'{') {
                *at += 1;
                loop {
                    tree(chars, at, &path, out);
                    while chars.get(*at).is_some_and(|c| c.is_whitespace()) {
                        *at += 1;
                    }
                    match chars.get(*at) {
                        Some(',') => *at += 1,
                        Some('}') => {
                            *at += 1;
                            return;
                        }
                        _ => return,
                    }
                    while chars.get(*at).is_some_and(|c| c.is_whitespace()) {
                        *at += 1;
                    }
                    if chars.get(*at) == Some(&'}') {
                        *at += 1;
                        return;
                    }
                }
            }
            let start = *at;
            while chars
                .get(*at)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                *at += 1;
            }
            if *at > start {
                let segment: String = chars[start..*at].iter().collect();
                if segment != "self" {
                    path.push(segment);
                }
            }
            if chars.get(*at) == Some(&':') && chars.get(*at + 1) == Some(&':') {
                *at += 2;
                continue;
            }
            out.push(path);
            return;
        }
    }
    let chars: Vec<char> = text.chars().take(2000).collect();
    let mut out = Vec::new();
    tree(&chars, &mut 0, &[], &mut out);
    out
}

/// Every edge between sibling modules of a crate, as (parent, from, to).
fn sibling_edges(src: &Path) -> BTreeSet<(ModPath, String, String)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let sources: Vec<(ModPath, String)> = files
        .iter()
        .map(|file| {
            let rel = file.strip_prefix(src).expect("under src");
            let text = fs::read_to_string(file).expect("read");
            // Unit tests may use any module (a test double from `testing`, say): what a
            // module depends on is what it compiles without them.
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            (module_of(rel), code.to_owned())
        })
        .collect();
    let known: BTreeSet<ModPath> = sources.iter().map(|(m, _)| m.clone()).collect();
    let mut edges = BTreeSet::new();
    for (module, code) in &sources {
        for (at, _) in code.match_indices("::") {
            let before = &code[..at];
            let word_start = before
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |i| i + 1);
            let mut base = match &before[word_start..] {
                "crate" => Vec::new(),
                "super" | "self" => module.clone(),
                _ => continue,
            };
            // `$crate::` is the user's crate in generated code; `super::super::` is read
            // from its first `super`.
            let prev = before[..word_start].chars().next_back();
            if prev == Some('$') || before[..word_start].ends_with("super::") {
                continue;
            }
            let mut rest = &code[at + 2..];
            if &before[word_start..] == "super" {
                base.pop();
                while let Some(after) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = after;
                }
            }
            for path in paths(rest) {
                let mut full = base.clone();
                full.extend(path);
                let Some(target) = (1..=full.len())
                    .rev()
                    .map(|n| full[..n].to_vec())
                    .find(|p| known.contains(p))
                else {
                    continue;
                };
                let common = module
                    .iter()
                    .zip(&target)
                    .take_while(|(a, b)| a == b)
                    .count();
                if common == module.len() || common == target.len() {
                    continue; // its own parent, itself or its own child
                }
                edges.insert((
                    module[..common].to_vec(),
                    module[common].clone(),
                    target[common].clone(),
                ));
            }
        }
    }
    edges
}

/// The table under `<!-- module-edges: CRATE -->` in ARCHITECTURE.md: rows of
/// `` | `module` | `a`, `b` | ``, where a nested module is written `parent::module` and its
/// uses by their names under the same parent.
fn declared(architecture: &str, krate: &str) -> Option<BTreeMap<ModPath, Edges>> {
    let marker = format!("<!-- module-edges: {krate} -->");
    let start = architecture.find(&marker)?;
    let mut levels = BTreeMap::<ModPath, Edges>::new();
    levels.insert(Vec::new(), Edges::new());
    for line in architecture[start + marker.len()..].lines().skip(1) {
        let line = line.trim();
        if line.is_empty() {
            break;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() != 2 || cells[0].starts_with("---") || cells[0] == "module" {
            continue;
        }
        let mut path: ModPath = cells[0]
            .trim_matches('`')
            .split("::")
            .map(str::to_owned)
            .collect();
        let module = path.pop().expect("a name");
        let uses: BTreeSet<String> = cells[1]
            .split(',')
            .map(|d| d.trim().trim_matches('`').to_owned())
            .filter(|d| !d.is_empty() && d != "—")
            .collect();
        levels
            .entry(path)
            .or_default()
            .entry(module)
            .or_default()
            .extend(uses);
    }
    for edges in levels.values_mut() {
        edges.retain(|_, uses| !uses.is_empty());
    }
    Some(levels)
}

/// The rows of a table with the code's edges between top-level modules, to paste.
fn table(krate: &str, edges: &Edges) -> String {
    let mut out = format!("<!-- module-edges: {krate} -->\n| module | uses |\n| --- | --- |\n");
    for (module, uses) in edges {
        let uses: Vec<String> = uses.iter().map(|u| format!("`{u}`")).collect();
        out.push_str(&format!("| `{module}` | {} |\n", uses.join(", ")));
    }
    out
}

fn cycle(edges: &Edges) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &Edges,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut Vec::new(), &mut done))
}

fn by_parent(edges: &BTreeSet<(ModPath, String, String)>) -> BTreeMap<ModPath, Edges> {
    let mut levels = BTreeMap::<ModPath, Edges>::new();
    for (parent, from, to) in edges {
        levels
            .entry(parent.clone())
            .or_default()
            .entry(from.clone())
            .or_default()
            .insert(to.clone());
    }
    levels
}

fn shown(parent: &ModPath, module: &str) -> String {
    parent
        .iter()
        .map(String::as_str)
        .chain([module])
        .collect::<Vec<_>>()
        .join("::")
}

/// The problems of one crate: cycles at any depth, and differences from its table.
fn problems(krate: &str) -> Vec<String> {
    let root = workspace();
    let architecture = fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let actual = by_parent(&sibling_edges(&root.join(krate).join("src")));
    let mut problems = Vec::new();
    for (parent, edges) in &actual {
        if let Some(cycle) = cycle(edges) {
            let cycle: Vec<String> = cycle.iter().map(|m| shown(parent, m)).collect();
            problems.push(format!("{krate}: a module cycle: {}", cycle.join(" -> ")));
        }
    }
    let empty = Edges::new();
    let Some(declared) = declared(&architecture, krate) else {
        problems.push(format!(
            "ARCHITECTURE.md has no table for {krate}; the code's is:\n{}",
            table(krate, actual.get(&Vec::new()).unwrap_or(&empty))
        ));
        return problems;
    };
    for (parent, table) in &declared {
        let code = actual.get(parent).unwrap_or(&empty);
        for (module, uses) in code {
            for used in uses {
                if !table.get(module).is_some_and(|d| d.contains(used)) {
                    problems.push(format!(
                        "{krate}: `{}` names `{}`, an edge the table does not allow",
                        shown(parent, module),
                        shown(parent, used)
                    ));
                }
            }
        }
        for (module, uses) in table {
            for used in uses {
                if !code.get(module).is_some_and(|a| a.contains(used)) {
                    problems.push(format!(
                        "{krate}: the table allows `{}` -> `{used}`, which the code no longer uses: remove it",
                        shown(parent, module)
                    ));
                }
            }
        }
        if let Some(cycle) = cycle(table) {
            problems.push(format!(
                "{krate}: the table has a cycle: {}",
                cycle.join(" -> ")
            ));
        }
    }
    problems
}

fn check(krate: &str) {
    let problems = problems(krate);
    assert!(
        problems.is_empty(),
        "module edges differ from ARCHITECTURE.md (\"Module edges\"):\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_library_crate_is_checked() {
    let root = workspace();
    let manifest = fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    let members = manifest
        .lines()
        .find_map(|line| line.trim().strip_prefix("members = ["))
        .expect("the workspace lists its members on one line");
    for member in members.trim_end_matches(']').split(',') {
        let member = member.trim().trim_matches('"');
        // A library crate of ours is a `pi-tool*` folder at the root; the rest are
        // examples, harnesses and tests.
        if member.starts_with("pi-tool") {
            assert!(
                CRATES.contains(&member),
                "{member} is a library crate of the workspace: add it to CRATES and give it a table in ARCHITECTURE.md"
            );
        }
    }
}

#[test]
fn module_cycles() {
    let problems: Vec<String> = CRATES
        .iter()
        .flat_map(|krate| problems(krate))
        .filter(|p| p.contains("a module cycle"))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_core_crates_modules_follow_the_table() {
    check("pi-tool-core");
}

#[test]
fn the_runtime_crates_modules_follow_the_table() {
    check("pi-tool");
}

#[test]
fn the_macro_crates_modules_follow_the_table() {
    check("pi-tool-macros");
}

#[test]
fn the_coding_packs_modules_follow_the_table() {
    check("pi-tool-coding");
}

#[test]
fn the_mcp_crates_modules_follow_the_table() {
    check("pi-tool-mcp");
}

#[test]
fn a_cycle_in_a_table_is_found() {
    let table = "<!-- module-edges: x -->\n| module | uses |\n| --- | --- |\n| `a` | `b` |\n| `b` | `c`, `a` |\n";
    let levels = declared(table, "x").expect("a table");
    assert_eq!(
        cycle(&levels[&Vec::new()]),
        Some(vec!["a".to_owned(), "b".to_owned(), "a".to_owned()])
    );
}

#[test]
fn use_trees_and_relative_paths_are_read() {
    assert_eq!(
        paths("{a::{B, c::D}, e, self}; rest"),
        vec![
            vec!["a".to_owned(), "B".to_owned()],
            vec!["a".to_owned(), "c".to_owned(), "D".to_owned()],
            vec!["e".to_owned()],
            vec![],
        ]
    );
    assert_eq!(
        module_of(Path::new("server/http/mod.rs")),
        ["server", "http"]
    );
    assert_eq!(
        module_of(Path::new("server/builder.rs")),
        ["server", "builder"]
    );
    assert_eq!(module_of(Path::new("lib.rs")), Vec::<String>::new());
}
