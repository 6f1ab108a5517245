//! Argument limits: how large, how deep and how long-stringed a model's arguments may be
//! before any tool code, coercion or validation sees them.
//!
//! A model (or a client of the MCP server) controls the arguments of a call completely. A
//! hostile or broken one can send a 20 MB object, a string of a million characters or a
//! value nested 100 000 levels deep. Validation, coercion, `Clone`, `Drop` and
//! serialisation of a `serde_json::Value` all recurse once per level, and everything
//! downstream (the tool's own deserialisation, the transcript, the next request to the
//! model) pays for the size again. [`ArgumentLimits::check`] refuses such arguments first,
//! in one iterative walk that stops at the first limit it crosses, with an error the
//! model can act on:
//!
//! ```text
//! Tool get_weather: arguments nest 100000 levels deep; the limit is 64 (max_depth)
//! ```
//!
//! The call path ([`check_contained`](crate::check_contained)) runs the check before
//! `prepare_arguments`, on every host: the agent loop, the session and the MCP server take
//! the host's limits from the host's [`CallPolicy`](crate::CallPolicy), and a
//! tool's own [`ToolSpec::argument_limits`](crate::ToolSpec), when set, replace them for
//! that tool. The defaults are on (Pi has no limits; see `docs/differences-from-pi.md`).

use std::fmt::{self, Write as _};

use serde_json::Value;

use crate::error::{ToolError, ToolErrorKind};

/// How large, deep and long-stringed a call's arguments may be.
///
/// Every host checks a call's raw arguments against these first, before the tool's
/// `prepare_arguments`, coercion or validation walk them
/// ([`check_contained`](crate::check_contained)): the host's limits come from
/// the host's call policy ([`CallPolicy`](crate::CallPolicy)), and a tool's
/// own [`ToolSpec::argument_limits`](crate::ToolSpec::argument_limits), when set, replace
/// them. A call over a limit is a [`ToolErrorKind::InvalidArguments`] error naming the
/// limit and the value seen.
///
/// The defaults are far above what a real tool takes and far below what hurts:
///
/// * [`max_bytes`](Self::max_bytes) = 4 MiB of compact JSON. Tool arguments are a few
///   hundred bytes; the largest real ones (a file a coding agent writes whole) stay well
///   under a megabyte, and providers cap a model's output at tens of thousands of tokens
///   (~4 bytes each), far below 4 MiB. Above it a payload is an attack or a loop.
/// * [`max_depth`](Self::max_depth) = 64 nested arrays/objects. Derived params types nest a
///   handful of levels; 64 leaves room for recursive schemas (trees, JSON documents) while
///   keeping every recursive walk downstream (coercion, validation, serde's `Drop`,
///   `Clone` and `Serialize`) to a few hundred kilobytes of stack even in debug builds.
///   pi-tool's own parsers stop at 128 levels, and its validator refuses more than
///   [`MAX_ARGUMENT_DEPTH`](super::MAX_ARGUMENT_DEPTH) (128) whatever these limits say.
/// * [`max_string_chars`](Self::max_string_chars) = 1 Mi characters (Unicode scalar values)
///   in any one string, object keys included: a whole source file fits; a string that
///   alone is a quarter of the byte budget does not.
///
/// ```
/// use pi_tool_core::json;
/// use pi_tool_core::schema::ArgumentLimits;
///
/// let limits = ArgumentLimits::new().max_depth(2);
/// assert!(limits.check("t", &json!({"a": [1]})).is_ok());
/// let error = limits.check("t", &json!({"a": [[1]]})).unwrap_err();
/// assert_eq!(
///     error.message(),
///     "Tool t: arguments nest 3 levels deep; the limit is 2 (max_depth)"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ArgumentLimits {
    /// The most bytes the arguments may take as compact JSON (`JSON.stringify`'s length
    /// in UTF-8).
    pub max_bytes: usize,
    /// The most arrays and objects that may enclose one another (`{}` is 1 level,
    /// `{"a": [1]}` 2).
    pub max_depth: usize,
    /// The most characters (Unicode scalar values) in any one string or object key.
    pub max_string_chars: usize,
}

impl ArgumentLimits {
    /// The default [`max_bytes`](Self::max_bytes): 4 MiB.
    pub const DEFAULT_MAX_BYTES: usize = 4 << 20;
    /// The default [`max_depth`](Self::max_depth): 64 levels.
    pub const DEFAULT_MAX_DEPTH: usize = 64;
    /// The default [`max_string_chars`](Self::max_string_chars): 1 Mi characters.
    pub const DEFAULT_MAX_STRING_CHARS: usize = 1 << 20;

    /// The default limits (4 MiB, 64 levels, 1 Mi characters; see the type's docs).
    pub const fn new() -> Self {
        ArgumentLimits {
            max_bytes: Self::DEFAULT_MAX_BYTES,
            max_depth: Self::DEFAULT_MAX_DEPTH,
            max_string_chars: Self::DEFAULT_MAX_STRING_CHARS,
        }
    }

    /// No limits: Pi's behaviour. Depth stays bounded where pi-tool builds values (its
    /// parsers stop at 128 levels) and in its validator (which refuses more than
    /// [`MAX_ARGUMENT_DEPTH`](super::MAX_ARGUMENT_DEPTH)); a deeper `Value` built by hand
    /// reaches the tool's `prepare_arguments` unchecked.
    pub const fn unlimited() -> Self {
        ArgumentLimits {
            max_bytes: usize::MAX,
            max_depth: usize::MAX,
            max_string_chars: usize::MAX,
        }
    }

    /// Sets [`max_bytes`](Self::max_bytes).
    #[must_use]
    pub const fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Sets [`max_depth`](Self::max_depth).
    #[must_use]
    pub const fn max_depth(mut self, levels: usize) -> Self {
        self.max_depth = levels;
        self
    }

    /// Sets [`max_string_chars`](Self::max_string_chars).
    #[must_use]
    pub const fn max_string_chars(mut self, chars: usize) -> Self {
        self.max_string_chars = chars;
        self
    }

    /// Checks `arguments` against the limits: `Ok` or a
    /// [`ToolErrorKind::InvalidArguments`] error naming the limit and the value seen.
    ///
    /// The walk keeps its own stack (no recursion, whatever the depth) and stops at the
    /// first limit crossed, so its cost is bounded by the limits rather than the
    /// payload, except for what the message reports: the depth of the deepest first
    /// path below a level that is too deep, and a lower bound of the size of a value that
    /// is too large (one step per node, strings are not scanned).
    pub fn check(&self, tool_name: &str, arguments: &Value) -> Result<(), ToolError> {
        match Walk::new(self).run(arguments) {
            Ok(()) => Ok(()),
            Err(violation) => Err(ToolError::with_kind(
                ToolErrorKind::InvalidArguments,
                format!("Tool {tool_name}: {violation}"),
            )),
        }
    }
}

impl Default for ArgumentLimits {
    /// [`ArgumentLimits::new`]: the limits are on by default.
    fn default() -> Self {
        ArgumentLimits::new()
    }
}

/// The first limit a walk crossed, with what it saw.
enum Violation {
    Bytes {
        at_least: usize,
        limit: usize,
    },
    Depth {
        levels: usize,
        limit: usize,
    },
    String {
        path: String,
        is_key: bool,
        chars: usize,
        limit: usize,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::Bytes { at_least, limit } => write!(
                f,
                "arguments take at least {at_least} bytes as JSON; the limit is {limit} (max_bytes)"
            ),
            Violation::Depth { levels, limit } => write!(
                f,
                "arguments nest {levels} levels deep; the limit is {limit} (max_depth)"
            ),
            Violation::String {
                path,
                is_key,
                chars,
                limit,
            } => {
                let what = if *is_key {
                    "a property name"
                } else {
                    "the string"
                };
                write!(
                    f,
                    "{what} at {path} is {chars} characters long; the limit is {limit} (max_string_chars)"
                )
            }
        }
    }
}

/// One open array or object: the rest of its children, and how many were taken (the
/// one being visited is number `taken - 1`; for an object, `key` is its key).
struct Frame<'v> {
    children: Children<'v>,
    taken: usize,
    key: &'v str,
}

enum Children<'v> {
    Array(std::slice::Iter<'v, Value>),
    Object(serde_json::map::Iter<'v>),
}

struct Walk<'l, 'v> {
    limits: &'l ArgumentLimits,
    bytes: usize,
    stack: Vec<Frame<'v>>,
    /// The child taken from the top frame whose comma or key is being counted (not yet
    /// entered), for the size estimate of [`Walk::too_large`].
    current: Option<&'v Value>,
    /// Its key, until the key is counted.
    current_key: Option<&'v str>,
}

impl<'l, 'v> Walk<'l, 'v> {
    fn new(limits: &'l ArgumentLimits) -> Self {
        Walk {
            limits,
            bytes: 0,
            stack: Vec::new(),
            current: None,
            current_key: None,
        }
    }

    fn run(mut self, root: &'v Value) -> Result<(), Violation> {
        self.enter(root)?;
        while let Some(top) = self.stack.last_mut() {
            let child = match &mut top.children {
                Children::Array(items) => items.next().map(|item| (None, item)),
                Children::Object(entries) => entries.next().map(|(k, v)| (Some(k.as_str()), v)),
            };
            let Some((key, item)) = child else {
                self.stack.pop();
                continue;
            };
            top.taken += 1;
            let comma = top.taken > 1;
            if let Some(key) = key {
                top.key = key;
            }
            self.current = Some(item);
            self.current_key = key;
            if comma {
                self.add(1)?;
            }
            if let Some(key) = key {
                self.string(key, true)?;
                self.add(1)?; // the colon
            }
            self.enter(item)?;
        }
        Ok(())
    }

    /// Visits one value: scalars are measured, containers are opened.
    fn enter(&mut self, value: &'v Value) -> Result<(), Violation> {
        self.current = None;
        let children = match value {
            Value::Null | Value::Bool(true) => return self.add(4),
            Value::Bool(false) => return self.add(5),
            Value::Number(n) => return self.add(number_len(n)),
            Value::String(s) => return self.string(s, false),
            Value::Array(items) => Children::Array(items.iter()),
            Value::Object(map) => Children::Object(map.iter()),
        };
        if self.stack.len() >= self.limits.max_depth {
            return Err(Violation::Depth {
                levels: self.stack.len() + first_path_depth(value),
                limit: self.limits.max_depth,
            });
        }
        self.stack.push(Frame {
            children,
            taken: 0,
            key: "",
        });
        self.add(2) // the brackets
    }

    /// Measures a string or key: its bytes first (so a huge string is refused in O(1)),
    /// then its characters (counted only for strings below the byte limit).
    fn string(&mut self, s: &str, is_key: bool) -> Result<(), Violation> {
        if is_key {
            self.current_key = None;
        }
        let quoted = s.len().saturating_add(2);
        if self.bytes.saturating_add(quoted) > self.limits.max_bytes {
            self.bytes = self.bytes.saturating_add(quoted);
            return Err(self.too_large());
        }
        let escapes = s.bytes().map(escape_extra).sum::<usize>();
        self.add(quoted + escapes)?;
        // A string with fewer bytes than the limit has fewer characters too.
        if s.len() > self.limits.max_string_chars {
            let chars = s.chars().count();
            if chars > self.limits.max_string_chars {
                return Err(Violation::String {
                    path: self.path(is_key),
                    is_key,
                    chars,
                    limit: self.limits.max_string_chars,
                });
            }
        }
        Ok(())
    }

    fn add(&mut self, bytes: usize) -> Result<(), Violation> {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > self.limits.max_bytes {
            return Err(self.too_large());
        }
        Ok(())
    }

    /// The byte limit was crossed: a lower bound of the whole size for the message, from
    /// the rest of the open containers at one step per node (each node at its smallest
    /// size: strings unscanned, numbers one digit).
    fn too_large(&mut self) -> Violation {
        let mut total = self.bytes;
        let mut pending: Vec<&Value> = self.current.take().into_iter().collect();
        if let Some(key) = self.current_key.take() {
            // `"k":`
            total = total.saturating_add(key.len() + 3);
        }
        for frame in self.stack.drain(..) {
            match frame.children {
                Children::Array(items) => {
                    total = total.saturating_add(items.len());
                    pending.extend(items);
                }
                Children::Object(map) => entries(&mut total, &mut pending, map),
            }
        }
        while let Some(v) = pending.pop() {
            total = total.saturating_add(match v {
                Value::String(s) => s.len() + 2,
                Value::Array(items) => {
                    pending.extend(items);
                    1 + items.len()
                }
                Value::Object(map) => {
                    entries(&mut total, &mut pending, map.iter());
                    1
                }
                Value::Bool(false) => 5,
                Value::Null | Value::Bool(true) => 4,
                Value::Number(_) => 1,
            });
        }
        Violation::Bytes {
            at_least: total,
            limit: self.limits.max_bytes,
        }
    }

    /// The path of the string being visited as Pi's validation errors write it (`root`,
    /// `city`, `days.0.hour`); for a key, the path of the object holding it.
    fn path(&self, is_key: bool) -> String {
        let frames = if is_key {
            &self.stack[..self.stack.len().saturating_sub(1)]
        } else {
            &self.stack[..]
        };
        let mut path = String::new();
        for frame in frames {
            if !path.is_empty() {
                path.push('.');
            }
            match frame.children {
                Children::Array(_) => {
                    let _ = write!(path, "{}", frame.taken.saturating_sub(1));
                }
                Children::Object(_) => path.push_str(frame.key),
            }
        }
        if path.is_empty() {
            path.push_str("root");
        }
        path
    }
}

/// Adds the minimum size of the rest of an object's entries (`,"k":` before each value)
/// and queues the values.
fn entries<'v>(total: &mut usize, pending: &mut Vec<&'v Value>, map: serde_json::map::Iter<'v>) {
    for (k, v) in map {
        *total = total.saturating_add(k.len() + 4);
        pending.push(v);
    }
}

/// The depth of `value` along its first path of containers (the first container child
/// at every level), without recursion.
fn first_path_depth(value: &Value) -> usize {
    let mut levels = 0;
    let mut current = Some(value);
    while let Some(v) = current {
        current = match v {
            Value::Array(items) => {
                levels += 1;
                items.iter().find(|c| is_container(c))
            }
            Value::Object(map) => {
                levels += 1;
                map.values().find(|c| is_container(c))
            }
            _ => None,
        };
    }
    levels
}

fn is_container(value: &Value) -> bool {
    matches!(value, Value::Array(_) | Value::Object(_))
}

/// The bytes serde_json's compact writer adds to escape `b` (`"` → `\"`, a control
/// character → `\n` or `\u0001`).
fn escape_extra(b: u8) -> usize {
    match b {
        b'"' | b'\\' | b'\x08' | b'\x0c' | b'\n' | b'\r' | b'\t' => 1,
        0..=0x1f => 5,
        _ => 0,
    }
}

/// The length of `n` as serde_json writes it: digits counted for integers (most
/// numbers, and cheap), the formatter's output for floats.
fn number_len(n: &serde_json::Number) -> usize {
    if let Some(u) = n.as_u64() {
        return u.checked_ilog10().map_or(1, |d| d as usize + 1);
    }
    if let Some(i) = n.as_i64() {
        return 1 + i
            .unsigned_abs()
            .checked_ilog10()
            .map_or(1, |d| d as usize + 1);
    }
    let mut counter = Counter(0);
    let _ = write!(counter, "{n}");
    counter.0
}

/// Counts what is written to it.
struct Counter(usize);

impl fmt::Write for Counter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;

    /// `levels` nested one-key objects around 0, built without recursion.
    fn nested(levels: usize) -> Value {
        let mut v = json!(0);
        for _ in 0..levels {
            let mut map = Map::new();
            map.insert("a".to_owned(), v);
            v = Value::Object(map);
        }
        v
    }

    /// Drops a deep value without recursion (serde_json's `Drop` recurses).
    fn dismantle(v: Value) {
        let mut pending = vec![v];
        while let Some(v) = pending.pop() {
            match v {
                Value::Array(items) => pending.extend(items),
                Value::Object(map) => pending.extend(map.into_iter().map(|(_, v)| v)),
                _ => {}
            }
        }
    }

    fn message(limits: ArgumentLimits, v: &Value) -> String {
        limits
            .check("t", v)
            .map_or_else(|e| e.message().to_owned(), |()| "ok".into())
    }

    /// On a 256 KiB stack, so that recursion creeping back into the walk fails the test.
    fn on_small_stack(f: impl FnOnce() + Send + 'static) {
        let thread = std::thread::Builder::new().stack_size(256 << 10).spawn(f);
        assert!(
            thread.is_ok_and(|t| t.join().is_ok()),
            "the check overflowed or panicked"
        );
    }

    #[test]
    fn a_deep_value_is_refused_with_its_depth_without_recursion() {
        on_small_stack(|| {
            let deep = nested(100_000);
            let error = ArgumentLimits::new()
                .check("get_weather", &deep)
                .unwrap_err();
            assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
            assert_eq!(
                error.message(),
                "Tool get_weather: arguments nest 100000 levels deep; the limit is 64 (max_depth)"
            );
            // Unlimited, the walk visits all of it, still without recursion.
            assert!(ArgumentLimits::unlimited().check("t", &deep).is_ok());
            dismantle(deep);
        });
    }

    #[test]
    fn depth_counts_containers_and_the_limit_is_inclusive() {
        let limits = ArgumentLimits::new().max_depth(3);
        assert_eq!(message(limits, &json!({"a": [{"b": 1}]})), "ok");
        assert_eq!(
            message(limits, &json!({"a": [{"b": [1]}], "z": 1})),
            "Tool t: arguments nest 4 levels deep; the limit is 3 (max_depth)"
        );
        assert_eq!(message(ArgumentLimits::new().max_depth(0), &json!(1)), "ok");
    }

    #[test]
    fn the_byte_count_is_serde_jsons_compact_length() {
        let v = json!({"a\"b": ["x\n\u{1}é", -0.5, 12345678901234567890u64, null, true, false, {}, []],
            "n": [0, 9, 10, 99, 100, -1, -10, i64::MIN, u64::MAX, 1e300, 2.5e-8]});
        let len = serde_json::to_string(&v).unwrap().len();
        assert_eq!(message(ArgumentLimits::new().max_bytes(len), &v), "ok");
        let over = message(ArgumentLimits::new().max_bytes(len - 1), &v);
        assert!(
            over.starts_with("Tool t: arguments take at least ")
                && over.ends_with(&format!(
                    "bytes as JSON; the limit is {} (max_bytes)",
                    len - 1
                )),
            "{over}"
        );
    }

    #[test]
    fn a_huge_payload_is_measured_at_one_step_per_node() {
        let big = json!({"text": "a".repeat(20_000_000)});
        let started = std::time::Instant::now();
        assert_eq!(
            message(ArgumentLimits::new(), &big),
            "Tool t: arguments take at least 20000011 bytes as JSON; the limit is 4194304 (max_bytes)"
        );
        let many = Value::Array(vec![json!(1); 3_000_000]);
        assert_eq!(
            message(ArgumentLimits::new(), &many),
            "Tool t: arguments take at least 6000001 bytes as JSON; the limit is 4194304 (max_bytes)"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn long_strings_and_keys_are_named_by_their_path() {
        let limits = ArgumentLimits::new().max_string_chars(3);
        assert_eq!(message(limits, &json!({"a": ["abc", "ééé"]})), "ok");
        assert_eq!(
            message(limits, &json!({"a": ["abc", {"b": "éééé"}]})),
            "Tool t: the string at a.1.b is 4 characters long; the limit is 3 (max_string_chars)"
        );
        assert_eq!(
            message(limits, &json!({"a": {"long": 1}})),
            "Tool t: a property name at a is 4 characters long; the limit is 3 (max_string_chars)"
        );
        assert_eq!(
            message(limits, &json!("abcd")),
            "Tool t: the string at root is 4 characters long; the limit is 3 (max_string_chars)"
        );
    }

    #[test]
    fn the_defaults_take_what_real_tools_send() {
        let real = json!({"path": "src/main.rs", "content": "fn main() {}\n".repeat(50_000),
            "edits": [{"old": "a", "new": "b"}], "options": {"a": {"b": {"c": [1, 2.5, "x"]}}}});
        assert_eq!(message(ArgumentLimits::default(), &real), "ok");
    }
}
