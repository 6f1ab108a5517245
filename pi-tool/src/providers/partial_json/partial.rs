//! The `partial-json` 0.1.7 parser (`parse(text, Allow.ALL)`), which pi-ai runs on tool
//! arguments that `JSON.parse` refuses: it reads as much of an unfinished (or broken)
//! JSON text as it can.
//!
//! This is a port of its algorithm with its quirks, not a JSON grammar:
//! * The text is trimmed (JavaScript's `trim`) and only one value is read; what follows
//!   it is ignored.
//! * A string cut off at the end is read as if closed (`"ab` is `"ab"`); when that does
//!   not parse (a cut escape), it is cut at the last backslash of the whole text.
//! * A number is the text up to the next `,`, `]` or `}`; when `JSON.parse` refuses it,
//!   the text up to the last `e` of the whole text is tried (with JavaScript's
//!   `substring`, which swaps reversed bounds), so `1.` fails but `1e` is 1.
//! * Prefixes of `null`, `true`, `false`, `Infinity`, `-Infinity`, `NaN` at the end of the
//!   text are those words (`tr` is `true`); the words are also accepted complete anywhere.
//! * Any failure inside an array or object ends that container: it is returned as read so
//!   far and its parent carries on from where the failure left the cursor. Only a
//!   failure outside every container makes the whole parse fail.
//! * The byte after an object key (and its blanks) is skipped without being checked.
//! * `obj[key] = value` is JavaScript's assignment: a `__proto__` key sets the object's
//!   prototype (to an object or null; other values are ignored) and is not a property,
//!   until a null prototype somewhere in the chain has removed that setter, after which
//!   `__proto__` is an ordinary key.
//!
//! Where the JavaScript recurses, this keeps its own stack. JavaScript runs out of call
//! stack after some thousands of levels: the exception ends the innermost container,
//! which is returned as read so far. This does the same at [`MAX_DEPTH`] levels (a
//! `serde_json::Value` deeper than that would risk the stack when dropped). Where the
//! JavaScript would loop forever (an array element that `JSON.parse`
//! accepts without the cursor moving), the array ends there instead.
//!
//! The text is handled as UTF-8 bytes; JavaScript indexes UTF-16 units. Every position
//! the algorithm stops at is an ASCII byte or the end, so the two agree, except where
//! one unit is skipped blindly after a key: a character outside the BMP is two units in
//! JavaScript, the skip lands between them, and the value read from there is a number
//! that never parses (a lone surrogate starts it), which this port reproduces.

use serde_json::{Map, Value};

use super::v8::{MAX_DEPTH, is_index_key, js_ordered, parse_value};
use crate::js::js_trim;

/// An exception in the JavaScript parser (`PartialJSON`, `MalformedJSON` or a
/// `SyntaxError` from one of its `JSON.parse` calls).
#[derive(Debug)]
pub(super) struct Thrown;

/// `partialParse(text)`: `Ok(None)` is JavaScript's `null` (pi-ai turns it into `{}`).
pub(super) fn parse(text: &str) -> Result<Option<Value>, Thrown> {
    let text = js_trim(text);
    if text.is_empty() {
        return Err(Thrown);
    }
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        i: 0,
        last_e: None,
        last_backslash: None,
    };
    let (value, origin) = parser.run()?;
    Ok(if value.is_null() && matches!(origin, Origin::Other) {
        None
    } else {
        Some(value)
    })
}

/// What JavaScript value a delivered [`Value`] stands for, where the `Value` alone does
/// not say: `null` may be a non-finite number, and an object's prototype chain decides
/// what assigning it to `__proto__` does.
#[derive(Clone, Copy)]
enum Origin {
    /// A string, boolean, finite number or `null` itself.
    Other,
    /// Infinity, -Infinity or NaN (held as `null`).
    NonFinite,
    /// An object or array; whether its prototype chain still has `Object.prototype`'s
    /// `__proto__` setter.
    Object { proto_setter: bool },
}

enum Frame {
    /// An array, and the cursor when its current element started (for the no-progress
    /// guard).
    Array(Vec<Value>, usize),
    /// An object being read.
    Object(ObjectFrame),
}

struct ObjectFrame {
    map: Map<String, Value>,
    /// The key whose value is being read.
    key: Option<String>,
    /// Whether a key is an array index (JavaScript enumerates those first).
    has_index_key: bool,
    /// Whether assigning `__proto__` still reaches `Object.prototype`'s setter.
    proto_setter: bool,
}

impl Frame {
    fn into_value(self) -> (Value, Origin) {
        match self {
            Frame::Array(items, _) => (Value::Array(items), Origin::Object { proto_setter: true }),
            Frame::Object(o) => {
                let map = if o.has_index_key {
                    js_ordered(o.map)
                } else {
                    o.map
                };
                (
                    Value::Object(map),
                    Origin::Object {
                        proto_setter: o.proto_setter,
                    },
                )
            }
        }
    }

    /// JavaScript's `obj[key] = value` for the key being read.
    fn assign(o: &mut ObjectFrame, value: Value, origin: Origin) {
        let Some(key) = o.key.take() else { return };
        if key == "__proto__" && o.proto_setter {
            match (&value, origin) {
                (_, Origin::Object { proto_setter }) => o.proto_setter = proto_setter,
                (Value::Null, Origin::Other) => o.proto_setter = false,
                _ => {}
            }
            return;
        }
        o.has_index_key |= is_index_key(&key);
        o.map.insert(key, value);
    }
}

/// Where the parser is: about to read a value, at the top of a container's loop, with a
/// finished value for the innermost container, or unwinding an exception.
enum State {
    Any,
    ArrayLoop,
    ObjectLoop,
    Deliver(Value, Origin),
    Throw,
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    i: usize,
    last_e: Option<isize>,
    last_backslash: Option<isize>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.i).copied()
    }

    fn skip_blank(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.i += 1;
        }
    }

    /// JavaScript's `text.substring(a, b)`: bounds clamped to the text, swapped when
    /// reversed.
    fn substring(&self, a: isize, b: isize) -> &str {
        let len = self.bytes.len() as isize;
        let (a, b) = (a.clamp(0, len) as usize, b.clamp(0, len) as usize);
        let (a, b) = if a > b { (b, a) } else { (a, b) };
        self.text.get(a..b).unwrap_or("")
    }

    /// `text.lastIndexOf("e")`.
    fn last_e(&mut self) -> isize {
        let bytes = self.bytes;
        *self
            .last_e
            .get_or_insert_with(|| last_index_of(bytes, b'e'))
    }

    /// `text.lastIndexOf("\\")`.
    fn last_backslash(&mut self) -> isize {
        let bytes = self.bytes;
        *self
            .last_backslash
            .get_or_insert_with(|| last_index_of(bytes, b'\\'))
    }

    fn run(&mut self) -> Result<(Value, Origin), Thrown> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut state = State::Any;
        loop {
            state = match state {
                State::Any => self.any(&mut stack),
                State::ArrayLoop => {
                    if self.peek() == Some(b']') {
                        self.i += 1;
                        Self::close(&mut stack)
                    } else {
                        if let Some(Frame::Array(_, started)) = stack.last_mut() {
                            *started = self.i;
                        }
                        State::Any
                    }
                }
                State::ObjectLoop => self.object_loop(&mut stack),
                State::Deliver(value, origin) => match stack.last_mut() {
                    None => return Ok((value, origin)),
                    Some(Frame::Array(items, started)) => {
                        let started = *started;
                        items.push(value);
                        self.skip_blank();
                        if self.peek() == Some(b',') {
                            self.i += 1;
                        }
                        if self.i == started {
                            // JavaScript would read this element again forever.
                            State::Throw
                        } else {
                            State::ArrayLoop
                        }
                    }
                    Some(Frame::Object(object)) => {
                        Frame::assign(object, value, origin);
                        self.skip_blank();
                        if self.peek() == Some(b',') {
                            self.i += 1;
                        }
                        State::ObjectLoop
                    }
                },
                // The innermost container catches it and returns what it has.
                State::Throw => match stack.pop() {
                    None => return Err(Thrown),
                    Some(frame) => {
                        let (value, origin) = frame.into_value();
                        State::Deliver(value, origin)
                    }
                },
            };
        }
    }

    /// The innermost container returns (complete, or as far as the text goes).
    fn close(stack: &mut Vec<Frame>) -> State {
        match stack.pop() {
            Some(frame) => {
                let (value, origin) = frame.into_value();
                State::Deliver(value, origin)
            }
            None => State::Throw,
        }
    }

    /// `parseAny`.
    fn any(&mut self, stack: &mut Vec<Frame>) -> State {
        self.skip_blank();
        let Some(first) = self.peek() else {
            return State::Throw;
        };
        match first {
            b'"' => {
                return self
                    .string()
                    .map_or(State::Throw, |v| State::Deliver(v, Origin::Other));
            }
            // JavaScript's stack overflow, at a fixed depth.
            b'{' | b'[' if stack.len() >= MAX_DEPTH => return State::Throw,
            b'{' => {
                self.i += 1;
                self.skip_blank();
                stack.push(Frame::Object(ObjectFrame {
                    map: Map::new(),
                    key: None,
                    has_index_key: false,
                    proto_setter: true,
                }));
                return State::ObjectLoop;
            }
            b'[' => {
                self.i += 1;
                stack.push(Frame::Array(Vec::new(), self.i));
                return State::ArrayLoop;
            }
            _ => {}
        }
        // Infinity and NaN have no JSON form; JSON.stringify writes them as null.
        let words: [(&str, usize, Value, Origin); 6] = [
            ("null", 0, Value::Null, Origin::Other),
            ("true", 0, Value::Bool(true), Origin::Other),
            ("false", 0, Value::Bool(false), Origin::Other),
            ("Infinity", 0, Value::Null, Origin::NonFinite),
            ("-Infinity", 1, Value::Null, Origin::NonFinite),
            ("NaN", 0, Value::Null, Origin::NonFinite),
        ];
        let rest = &self.bytes[self.i..];
        for (word, min_rest, value, origin) in words {
            let word = word.as_bytes();
            let partial =
                rest.len() < word.len() && rest.len() > min_rest && word.starts_with(rest);
            if rest.starts_with(word) || partial {
                self.i += word.len();
                return State::Deliver(value, origin);
            }
        }
        match self.number() {
            Ok(value) => {
                let origin = match &value {
                    // A number text that JSON.parse reads as null overflowed.
                    Value::Null => Origin::NonFinite,
                    Value::Object(_) | Value::Array(_) => Origin::Object { proto_setter: true },
                    _ => Origin::Other,
                };
                State::Deliver(value, origin)
            }
            Err(Thrown) => State::Throw,
        }
    }

    /// One turn of `parseObj`'s loop, from its `while` test to reading a key and
    /// skipping the byte after it.
    fn object_loop(&mut self, stack: &mut Vec<Frame>) -> State {
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Self::close(stack);
        }
        self.skip_blank();
        if self.i >= self.bytes.len() {
            return Self::close(stack);
        }
        let Ok(key) = self.string() else {
            return State::Throw;
        };
        let Value::String(key) = key else {
            // A key's text always ends with a quote, so only a string parses.
            return State::Throw;
        };
        self.skip_blank();
        // "skip colon": one UTF-16 unit, whatever it is.
        match self.text.get(self.i..).and_then(|rest| rest.chars().next()) {
            Some(c) if c.len_utf16() == 2 => {
                // JavaScript lands on the low surrogate and reads a number from there,
                // up to the next `,`, `]` or `}`; no JSON starts with a lone surrogate,
                // and neither does its fallback text, so the object ends.
                self.i += c.len_utf8();
                while let Some(b) = self.peek() {
                    if matches!(b, b',' | b']' | b'}') {
                        break;
                    }
                    self.i += 1;
                }
                return State::Throw;
            }
            Some(c) => self.i += c.len_utf8(),
            None => self.i += 1,
        }
        if let Some(Frame::Object(object)) = stack.last_mut() {
            object.key = Some(key);
        }
        State::Any
    }

    /// `parseStr`, from whatever byte the cursor is on (a key need not start with a
    /// quote).
    fn string(&mut self) -> Result<Value, Thrown> {
        let start = self.i;
        let mut escape = false;
        self.i += 1;
        let len = self.bytes.len();
        while self.i < len
            && (self.bytes[self.i] != b'"' || (escape && self.bytes[self.i - 1] == b'\\'))
        {
            escape = if self.bytes[self.i] == b'\\' {
                !escape
            } else {
                false
            };
            self.i += 1;
        }
        if self.peek() == Some(b'"') {
            self.i += 1;
            return parse_value(self.substring(start as isize, self.i as isize)).ok_or(Thrown);
        }
        // Cut off: close it, without a dangling backslash.
        let end = self.i as isize - isize::from(escape);
        let closed = format!("{}\"", self.substring(start as isize, end));
        if let Some(value) = parse_value(&closed) {
            return Ok(value);
        }
        let cut = self.last_backslash();
        let closed = format!("{}\"", self.substring(start as isize, cut));
        parse_value(&closed).ok_or(Thrown)
    }

    /// `parseNum`.
    fn number(&mut self) -> Result<Value, Thrown> {
        if self.i == 0 {
            if self.text == "-" {
                return Err(Thrown);
            }
            if let Some(value) = parse_value(self.text) {
                return Ok(value);
            }
            let cut = self.last_e();
            return parse_value(self.substring(0, cut)).ok_or(Thrown);
        }
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        while let Some(b) = self.peek() {
            if matches!(b, b',' | b']' | b'}') {
                break;
            }
            self.i += 1;
        }
        let literal = self.substring(start as isize, self.i as isize);
        if let Some(value) = parse_value(literal) {
            return Ok(value);
        }
        if literal == "-" {
            return Err(Thrown);
        }
        let cut = self.last_e();
        parse_value(self.substring(start as isize, cut)).ok_or(Thrown)
    }
}

fn last_index_of(bytes: &[u8], byte: u8) -> isize {
    bytes
        .iter()
        .rposition(|&b| b == byte)
        .map_or(-1, |p| p as isize)
}
