//! What Pi's tools get from JavaScript for free and Rust has to spell out: number
//! formatting, UTF-16 lengths, `Array.prototype.slice` indices and Node's error texts.

use std::io;
use std::path::Path;

/// A number as JavaScript's `String(n)` writes it (`3`, `2.5`, `NaN`, `1e-7`).
pub(crate) fn num(n: f64) -> String {
    if n.is_nan() {
        return "NaN".to_owned();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if n == 0.0 {
        return "0".to_owned();
    }
    let abs = n.abs();
    if n.fract() == 0.0 && abs < 1e21 {
        return format!("{n:.0}");
    }
    if (1e-6..1e21).contains(&abs) {
        // Rust's `Display` writes the shortest digits that round-trip, as JavaScript does.
        return format!("{n}");
    }
    // Exponent form: JavaScript writes `1e-7`, `1.5e+21`.
    let text = format!("{n:e}");
    match text.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
        _ => text,
    }
}

/// JavaScript's `ToIntegerOrInfinity` then clamping, as `slice` applies it to an index.
pub(crate) fn slice_index(index: f64, len: usize) -> usize {
    let len_f = len as f64;
    if index.is_nan() {
        return 0;
    }
    let i = index.trunc();
    let resolved = if i < 0.0 {
        (len_f + i).max(0.0)
    } else {
        i.min(len_f)
    };
    resolved as usize
}

/// The string cut to at most `max` UTF-16 code units (JavaScript's `slice(0, max)`), with
/// the `... [truncated]` suffix Pi's `truncateLine` adds, and whether it was cut. A cut
/// through a surrogate pair leaves U+FFFD where JavaScript leaves a lone surrogate, which
/// Rust strings cannot hold (docs/differences-from-pi.md).
pub(crate) fn truncate_utf16(line: &str, max: usize) -> (String, bool) {
    let units: usize = line.chars().map(char::len_utf16).sum();
    if units <= max {
        return (line.to_owned(), false);
    }
    let mut out = String::with_capacity(line.len().min(max * 3) + 16);
    let mut used = 0;
    for c in line.chars() {
        let w = c.len_utf16();
        if used + w > max {
            if used < max {
                out.push('\u{FFFD}');
            }
            break;
        }
        out.push(c);
        used += w;
    }
    out.push_str("... [truncated]");
    (out, true)
}

/// libuv's code and text for an OS error number, as Node puts them into messages.
fn uv_error(errno: i32) -> Option<(&'static str, &'static str)> {
    Some(match errno {
        libc::ENOENT => ("ENOENT", "no such file or directory"),
        libc::EACCES => ("EACCES", "permission denied"),
        libc::EPERM => ("EPERM", "operation not permitted"),
        libc::EISDIR => ("EISDIR", "illegal operation on a directory"),
        libc::ENOTDIR => ("ENOTDIR", "not a directory"),
        libc::ELOOP => ("ELOOP", "too many symbolic links encountered"),
        libc::ENAMETOOLONG => ("ENAMETOOLONG", "name too long"),
        libc::EEXIST => ("EEXIST", "file already exists"),
        libc::EROFS => ("EROFS", "read-only file system"),
        libc::ENOSPC => ("ENOSPC", "no space left on device"),
        libc::EMFILE => ("EMFILE", "too many open files"),
        libc::EIO => ("EIO", "i/o error"),
        libc::EBUSY => ("EBUSY", "resource busy or locked"),
        libc::EINVAL => ("EINVAL", "invalid argument"),
        libc::ETXTBSY => ("ETXTBSY", "text file is busy"),
        libc::EFBIG => ("EFBIG", "file too large"),
        libc::EDQUOT => ("EDQUOT", "disk quota exceeded"),
        _ => return None,
    })
}

/// The error code Node reports (`ENOENT`), for texts such as edit's `Error code: ENOENT`.
pub(crate) fn error_code(error: &io::Error) -> String {
    match error.raw_os_error().and_then(uv_error) {
        Some((code, _)) => code.to_owned(),
        None => format!("{:?}", error.kind()),
    }
}

/// Node's message for a failed file-system call: `ENOENT: no such file or directory,
/// access '/a/b'` (`path` is `None` for calls on a descriptor, such as `read`).
pub(crate) fn fs_error(error: &io::Error, syscall: &str, path: Option<&Path>) -> String {
    let (code, text) = match error.raw_os_error().and_then(uv_error) {
        Some(pair) => pair,
        None => return format!("{error}, {syscall}"),
    };
    match path {
        Some(path) => format!("{code}: {text}, {syscall} '{}'", path.display()),
        None => format!("{code}: {text}, {syscall}"),
    }
}

/// Node's refusal of a path that holds a NUL byte (`ERR_INVALID_ARG_VALUE`).
pub(crate) fn nul_path_error(path: &str) -> String {
    format!(
        "The argument 'path' must be a string, Uint8Array, or URL without null bytes. Received '{}'",
        path.replace('\0', "\\x00")
    )
}

/// Drops the `"default": null` schemars writes for an optional field: Pi's schemas (TypeBox's
/// `Type.Optional`) have no `default`, and the model sees the schema as written.
pub(crate) fn no_default(schema: &mut pi_tool_core::schemars::Schema) {
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("default");
    }
}

/// Drops a type's own description (its rustdoc) from its schema: Pi's item schemas
/// have none.
pub(crate) fn no_description(schema: &mut pi_tool_core::schemars::Schema) {
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("description");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_javascript_writes_them() {
        assert_eq!(num(3.0), "3");
        assert_eq!(num(2.5), "2.5");
        assert_eq!(num(-0.0), "0");
        assert_eq!(num(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(num(1e-7), "1e-7");
        assert_eq!(num(f64::NAN), "NaN");
    }

    #[test]
    fn slice_indices_follow_javascript() {
        assert_eq!(slice_index(1.5, 10), 1);
        assert_eq!(slice_index(-2.0, 10), 8);
        assert_eq!(slice_index(20.0, 10), 10);
        assert_eq!(slice_index(f64::NAN, 10), 0);
    }

    #[test]
    fn utf16_cut_counts_code_units() {
        let (text, cut) = truncate_utf16("ab😀c", 3);
        assert!(cut);
        assert_eq!(text, "ab\u{FFFD}... [truncated]");
        assert_eq!(truncate_utf16("abc", 3), ("abc".to_owned(), false));
    }
}
