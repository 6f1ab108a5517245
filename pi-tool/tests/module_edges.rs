//! The layers are the compiler's and this test's, not a drawing's: every `crate::<module>`
//! a module of pi-tool-core or pi-tool names (in code or in a doc link; unit tests, after
//! a file's first `#[cfg(test)]`, are left out) must be an edge
//! of the table in ARCHITECTURE.md ("Module edges"), every edge of the table must be
//! used, and the table must have no cycle. A new import that points a lower module at a
//! higher one fails here, with the edge named.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type Edges = BTreeMap<String, BTreeSet<String>>;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("pi-tool sits in the workspace")
        .to_path_buf()
}

/// The crate's top-level modules: a file `src/<name>.rs` or a folder `src/<name>/`.
fn modules(src: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for entry in fs::read_dir(src).expect("read src") {
        let path = entry.expect("entry").path();
        let name = path
            .file_stem()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        if path.is_dir() || path.extension().is_some_and(|e| e == "rs") {
            out.insert(name);
        }
    }
    out.remove("lib");
    out
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

/// What each module names of the others, read from its sources.
fn actual(src: &Path) -> Edges {
    let known = modules(src);
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut edges = Edges::new();
    for file in files {
        let rel = file.strip_prefix(src).expect("under src");
        let first = rel.components().next().expect("a component");
        let module = Path::new(first.as_os_str())
            .file_stem()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        if module == "lib" {
            continue;
        }
        let text = fs::read_to_string(&file).expect("read");
        // Unit tests may use any module (a test double from `testing`, say): what a module
        // depends on is what it compiles without them.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name != module && known.contains(&name) {
                edges.entry(module.clone()).or_default().insert(name);
            }
        }
    }
    edges
}

/// The table under `<!-- module-edges: CRATE -->` in ARCHITECTURE.md: rows of
/// `` | `module` | `a`, `b` | ``.
fn declared(architecture: &str, krate: &str) -> Edges {
    let marker = format!("<!-- module-edges: {krate} -->");
    let start = architecture
        .find(&marker)
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no `{marker}` table"));
    let mut edges = Edges::new();
    for line in architecture[start + marker.len()..].lines().skip(1) {
        let line = line.trim();
        if line.is_empty() {
            break;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() != 2 || cells[0].starts_with("---") || cells[0] == "module" {
            continue;
        }
        let module = cells[0].trim_matches('`').to_owned();
        let uses: BTreeSet<String> = cells[1]
            .split(',')
            .map(|d| d.trim().trim_matches('`').to_owned())
            .filter(|d| !d.is_empty() && d != "—")
            .collect();
        edges.insert(module, uses);
    }
    edges.retain(|_, uses| !uses.is_empty());
    edges
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

fn check(krate: &str) {
    let root = workspace();
    let architecture = fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let declared = declared(&architecture, krate);
    let actual = actual(&root.join(krate).join("src"));
    let mut problems = Vec::new();
    for (module, uses) in &actual {
        for used in uses {
            if !declared.get(module).is_some_and(|d| d.contains(used)) {
                problems.push(format!(
                    "{krate}: `{module}` names `crate::{used}`, an edge the table does not allow"
                ));
            }
        }
    }
    for (module, uses) in &declared {
        for used in uses {
            if !actual.get(module).is_some_and(|a| a.contains(used)) {
                problems.push(format!(
                    "{krate}: the table allows `{module}` -> `{used}`, which the code no longer uses: remove it"
                ));
            }
        }
    }
    if let Some(cycle) = cycle(&declared) {
        problems.push(format!(
            "{krate}: the table has a cycle: {}",
            cycle.join(" -> ")
        ));
    }
    assert!(
        problems.is_empty(),
        "module edges differ from ARCHITECTURE.md (\"Module edges\"):\n{}",
        problems.join("\n")
    );
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
fn a_cycle_in_a_table_is_found() {
    let table = "<!-- module-edges: x -->\n| module | uses |\n| --- | --- |\n| `a` | `b` |\n| `b` | `c`, `a` |\n";
    let edges = declared(table, "x");
    assert_eq!(
        cycle(&edges),
        Some(vec!["a".to_owned(), "b".to_owned(), "a".to_owned()])
    );
}
