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
//! * A `__proto__` key is dropped (JavaScript's `obj[key] = value` sets the prototype).
//!
//! Where the JavaScript recurses, this keeps its own stack, so depth costs heap only
//! (JavaScript runs out of call stack after some thousands of levels and then reads
//! less). Where the JavaScript would loop forever (an array element that `JSON.parse`
//! accepts without the cursor moving), the array ends there instead.
//!
//! The text is handled as UTF-8 bytes; JavaScript indexes UTF-16 units. Every position
//! the algorithm stops at is an ASCII byte or the end, so the two agree, except where
//! one unit is skipped blindly after a key: a character outside the BMP is two units in
//! JavaScript, the skip lands between them, and the next value always fails there, which
//! is what this port does.

use serde_json::{Map, Value};

use super::v8::{is_index_key, js_ordered, parse_value};
use crate::schema::js::js_trim;

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
    let value = parser.run()?;
    // The `null` branch is taken at the top only by a text that starts with (a prefix
    // of) `null`; every other way to a null is a non-finite number, which stays.
    let bytes = text.as_bytes();
    let null_literal =
        bytes.starts_with(b"null") || (bytes.len() < 4 && b"null".starts_with(bytes));
    Ok(if null_literal && value.is_null() {
        None
    } else {
        Some(value)
    })
}

enum Frame {
    /// An array, and the cursor when its current element started (for the no-progress
    /// guard).
    Array(Vec<Value>, usize),
    /// An object, the key whose value is being read, and whether any key is an array
    /// index (JavaScript enumerates those first).
    Object(Map<String, Value>, Option<String>, bool),
}

impl Frame {
    fn into_value(self) -> Value {
        match self {
            Frame::Array(items, _) => Value::Array(items),
            Frame::Object(map, _, false) => Value::Object(map),
            Frame::Object(map, _, true) => Value::Object(js_ordered(map)),
        }
    }
}

/// Where the parser is: about to read a value, at the top of a container's loop, with a
/// finished value for the innermost container, or unwinding an exception.
enum State {
    Any,
    ArrayLoop,
    ObjectLoop,
    Deliver(Value),
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

    fn run(&mut self) -> Result<Value, Thrown> {
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
                State::Deliver(value) => match stack.last_mut() {
                    None => return Ok(value),
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
                    Some(Frame::Object(map, key, has_index_key)) => {
                        if let Some(key) = key.take()
                            && key != "__proto__"
                        {
                            *has_index_key |= is_index_key(&key);
                            map.insert(key, value);
                        }
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
                    Some(frame) => State::Deliver(frame.into_value()),
                },
            };
        }
    }

    /// The innermost container returns (complete, or as far as the text goes).
    fn close(stack: &mut Vec<Frame>) -> State {
        match stack.pop() {
            Some(frame) => State::Deliver(frame.into_value()),
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
            b'"' => return self.string().map_or(State::Throw, State::Deliver),
            b'{' => {
                self.i += 1;
                self.skip_blank();
                stack.push(Frame::Object(Map::new(), None, false));
                return State::ObjectLoop;
            }
            b'[' => {
                self.i += 1;
                stack.push(Frame::Array(Vec::new(), self.i));
                return State::ArrayLoop;
            }
            _ => {}
        }
        let words: [(&str, usize, Value); 6] = [
            ("null", 0, Value::Null),
            ("true", 0, Value::Bool(true)),
            ("false", 0, Value::Bool(false)),
            // Infinity and NaN have no JSON form; JSON.stringify writes them as null.
            ("Infinity", 0, Value::Null),
            ("-Infinity", 1, Value::Null),
            ("NaN", 0, Value::Null),
        ];
        let rest = &self.bytes[self.i..];
        for (word, min_rest, value) in words {
            let word = word.as_bytes();
            let partial =
                rest.len() < word.len() && rest.len() > min_rest && word.starts_with(rest);
            if rest.starts_with(word) || partial {
                self.i += word.len();
                return State::Deliver(value);
            }
        }
        self.number().map_or(State::Throw, State::Deliver)
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
            Some(c) if c.len_utf16() == 2 => return State::Throw,
            Some(c) => self.i += c.len_utf8(),
            None => self.i += 1,
        }
        if let Some(Frame::Object(_, slot, _)) = stack.last_mut() {
            *slot = Some(key);
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
