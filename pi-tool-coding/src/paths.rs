//! Path resolution as Pi's tools do it (`path-utils.ts`, `utils/paths.ts`): `~`, a leading
//! `@`, Unicode spaces, `file://` URLs, then Node's `path.resolve` against the call's cwd.

use std::path::{Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

/// The user's home directory as Node's `os.homedir()` finds it: `$HOME`, else the
/// password database.
pub(crate) fn home_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(home);
    }
    PathBuf::from("/")
}

fn is_unicode_space(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

/// Pi's `normalizePath` with the tools' options: Unicode spaces become spaces, a leading
/// `@` goes, `~` expands, a `file://` URL becomes its path.
fn normalize_input(input: &str) -> String {
    let mut s: String = input
        .chars()
        .map(|c| if is_unicode_space(c) { ' ' } else { c })
        .collect();
    if let Some(rest) = s.strip_prefix('@') {
        s = rest.to_owned();
    }
    expand_tilde_and_url(&s)
}

fn expand_tilde_and_url(s: &str) -> String {
    if s == "~" {
        return home_dir().to_string_lossy().into_owned();
    }
    if let Some(rest) = s.strip_prefix("~/") {
        return join(&home_dir().to_string_lossy(), rest);
    }
    if let Some(rest) = s.strip_prefix("file://") {
        // `file:///a%20b` → `/a b`; a host other than localhost is not a local path, and
        // Node refuses it; keep the text so the call fails on a missing file instead.
        let path = rest.strip_prefix("localhost").unwrap_or(rest);
        if path.starts_with('/') {
            return percent_decode(path);
        }
    }
    s.to_owned()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Node's `path.join` of two parts, normalised.
fn join(a: &str, b: &str) -> String {
    normalize_lexically(&format!("{a}/{b}"))
}

/// Node's `path.normalize` for an absolute path: `.` and empty segments dropped, `..`
/// applied, no trailing slash.
fn normalize_lexically(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Pi's `resolveToCwd`: the absolute path a tool's `path` argument names.
pub fn resolve_to_cwd(path: &str, cwd: &Path) -> PathBuf {
    let normalized = normalize_input(path);
    let base = expand_tilde_and_url(&cwd.to_string_lossy());
    let joined = if normalized.starts_with('/') {
        normalized
    } else if base.starts_with('/') {
        format!("{base}/{normalized}")
    } else {
        // A relative cwd resolves against the process's directory, as Node's does.
        let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        format!("{}/{base}/{normalized}", here.to_string_lossy())
    };
    PathBuf::from(normalize_lexically(&joined))
}

fn exists(path: &str) -> bool {
    // `access(F_OK)` follows symbolic links: a dangling link does not exist.
    Path::new(path).exists()
}

/// Pi's `resolveReadPath`: the resolved path, or the macOS spelling of it that exists
/// (narrow no-break space before AM/PM, NFD, curly apostrophe, NFD with curly apostrophe).
pub fn resolve_read_path(path: &str, cwd: &Path) -> PathBuf {
    let resolved = resolve_to_cwd(path, cwd);
    let text = resolved.to_string_lossy().into_owned();
    if exists(&text) {
        return resolved;
    }
    let am_pm = am_pm_variant(&text);
    if am_pm != text && exists(&am_pm) {
        return PathBuf::from(am_pm);
    }
    let nfd: String = text.nfd().collect();
    if nfd != text && exists(&nfd) {
        return PathBuf::from(nfd);
    }
    let curly = text.replace('\'', "\u{2019}");
    if curly != text && exists(&curly) {
        return PathBuf::from(curly);
    }
    let nfd_curly = nfd.replace('\'', "\u{2019}");
    if nfd_curly != text && exists(&nfd_curly) {
        return PathBuf::from(nfd_curly);
    }
    resolved
}

/// ` AM.` / ` PM.` (any case) with a narrow no-break space, as macOS names screenshots.
fn am_pm_variant(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find(' ') {
        let after = &rest[pos + 1..];
        let is_marker = after.len() >= 3
            && after.is_char_boundary(3)
            && (after[..2].eq_ignore_ascii_case("am") || after[..2].eq_ignore_ascii_case("pm"))
            && after.as_bytes()[2] == b'.';
        out.push_str(&rest[..pos]);
        if is_marker {
            out.push('\u{202F}');
            out.push_str(&after[..3]);
            rest = &after[3..];
        } else {
            out.push(' ');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_like_node() {
        let cwd = Path::new("/work/a");
        assert_eq!(
            resolve_to_cwd("b/../c/./d/", cwd),
            PathBuf::from("/work/a/c/d")
        );
        assert_eq!(
            resolve_to_cwd("@x.txt", cwd),
            PathBuf::from("/work/a/x.txt")
        );
        assert_eq!(
            resolve_to_cwd("/etc//hosts", cwd),
            PathBuf::from("/etc/hosts")
        );
        assert_eq!(resolve_to_cwd("file:///a%20b", cwd), PathBuf::from("/a b"));
        assert_eq!(
            resolve_to_cwd("a\u{00A0}b", cwd),
            PathBuf::from("/work/a/a b")
        );
        assert_eq!(resolve_to_cwd("../../..", cwd), PathBuf::from("/"));
    }

    #[test]
    fn am_pm_gets_a_narrow_space() {
        assert_eq!(am_pm_variant("Shot 9.41 PM.png"), "Shot 9.41\u{202F}PM.png");
        assert_eq!(am_pm_variant("a b"), "a b");
    }
}
