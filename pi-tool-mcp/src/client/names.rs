//! The names an MCP server's tools get on our side.
//!
//! MCP allows tool names that no model provider accepts (dots, slashes, 128 characters),
//! and two servers may both have a `search`. So every tool is renamed once, at listing:
//!
//! 1. the server's prefix goes first: `mcp__<server>__` by default, the scheme later Pi
//!    versions (and Claude Code) use, so a transcript names the server of every call;
//! 2. every character outside `[A-Za-z0-9_-]` becomes `_`, and a name that does not
//!    start with a letter or `_` gets a leading `_`;
//! 3. a name longer than 64 characters keeps its first 55 and ends with `_` and 8 hex
//!    digits of the SHA-256 of the unshortened name, so two long names that share a
//!    beginning stay apart;
//! 4. names that still collide (`a.b` and `a_b` both give `a_b`) are resolved in the
//!    order of the server's original names (byte order): the first keeps the name, the
//!    next ones get `_2`, `_3`, … (shortened to fit), so the outcome does not depend on
//!    the order the server listed them in.
//!
//! The call reaches the server under the tool's original name.

use std::collections::{BTreeMap, HashSet};

use pi_tool_core::pack::{MAX_TOOL_NAME_LEN, check_tool_name, sanitize_tool_name};
use sha2::{Digest, Sha256};

/// How many characters of a long name are kept before its hash.
const KEPT: usize = MAX_TOOL_NAME_LEN - 9;

/// `name` shortened to the limit with a hash of the whole (see the module docs).
fn fit(name: String) -> String {
    if name.len() <= MAX_TOOL_NAME_LEN {
        return name;
    }
    let hash = Sha256::digest(name.as_bytes());
    let mut short = name[..KEPT].to_owned();
    short.push('_');
    for byte in &hash[..4] {
        short.push_str(&format!("{byte:02x}"));
    }
    short
}

/// The names of a server's tools: original name to our name, for every original name
/// given, all distinct and all valid tool names.
///
/// `taken` holds the names already given (by earlier listings of the same server); the
/// new ones are added to it.
pub(crate) fn assign(
    prefix: &str,
    originals: &[&str],
    taken: &mut HashSet<String>,
) -> BTreeMap<String, String> {
    let mut sorted: Vec<&str> = originals.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut names = BTreeMap::new();
    for original in sorted {
        let base = fit(sanitize_tool_name(&format!("{prefix}{original}")));
        let mut name = base.clone();
        let mut n = 2usize;
        while !taken.insert(name.clone()) {
            let suffix = format!("_{n}");
            let keep = base.len().min(MAX_TOOL_NAME_LEN - suffix.len());
            name = format!("{}{suffix}", &base[..keep]);
            n += 1;
        }
        debug_assert!(check_tool_name(&name).is_ok(), "{name}");
        names.insert(original.to_owned(), name);
    }
    names
}

/// The default prefix of a server's tools: `mcp__<server>__`.
pub(crate) fn default_prefix(server: &str) -> String {
    format!("mcp__{}__", sanitize_tool_name(server))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assign(prefix: &str, originals: &[&str]) -> BTreeMap<String, String> {
        super::assign(prefix, originals, &mut HashSet::new())
    }

    #[test]
    fn names_are_prefixed_sanitised_and_valid() {
        let names = assign("mcp__fs__", &["read_file", "dir.list", "9lives"]);
        assert_eq!(names["read_file"], "mcp__fs__read_file");
        assert_eq!(names["dir.list"], "mcp__fs__dir_list");
        assert_eq!(names["9lives"], "mcp__fs__9lives");
        assert_eq!(assign("", &["9lives"])["9lives"], "_9lives");
        for name in names.values() {
            check_tool_name(name).unwrap();
        }
    }

    #[test]
    fn collisions_resolve_by_original_name_whatever_the_listing_order() {
        let a = assign("p_", &["a_b", "a.b", "a/b"]);
        let b = assign("p_", &["a/b", "a_b", "a.b"]);
        assert_eq!(a, b);
        // Byte order: '.' < '/' < '_'.
        assert_eq!(a["a.b"], "p_a_b");
        assert_eq!(a["a/b"], "p_a_b_2");
        assert_eq!(a["a_b"], "p_a_b_3");
    }

    #[test]
    fn long_names_keep_their_start_and_a_hash_of_the_whole() {
        let long1 = "x".repeat(80) + "1";
        let long2 = "x".repeat(80) + "2";
        let names = assign("mcp__server__", &[&long1, &long2]);
        let (n1, n2) = (&names[&long1], &names[&long2]);
        assert_eq!(n1.len(), MAX_TOOL_NAME_LEN);
        assert_eq!(n2.len(), MAX_TOOL_NAME_LEN);
        assert_ne!(n1, n2);
        assert!(n1.starts_with("mcp__server__xxx"));
        check_tool_name(n1).unwrap();
        // Deterministic across runs.
        assert_eq!(assign("mcp__server__", &[&long1])[&long1], *n1);
    }

    #[test]
    fn a_suffix_on_a_full_length_name_still_fits() {
        let base = "y".repeat(70);
        let names = assign("", &[&format!("{base}.a"), &format!("{base}_a")]);
        for name in names.values() {
            check_tool_name(name).unwrap();
        }
        assert_eq!(names.len(), 2);
    }
}
