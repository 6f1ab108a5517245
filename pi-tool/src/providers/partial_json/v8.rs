//! `JSON.parse` as Node 22 (V8 12) does it: the value JavaScript gets, and V8's
//! `SyntaxError` message when the text is not JSON.
//!
//! The value is JavaScript's: every number is the double `JSON.parse` makes (integral
//! doubles are held as integers so they print without a fraction, `1e400` overflows to
//! Infinity), object keys come in JavaScript's order (array-index keys first, ascending;
//! a repeated key keeps its first place and its last value). Infinity has no JSON form:
//! it is held as `null`, which is what `JSON.stringify` writes for it wherever pi-ai
//! sends the value on. A lone surrogate escape (`"\ud800"`), which a Rust string cannot
//! hold, becomes U+FFFD.
//!
//! The parser keeps its own stack of open containers (V8's is iterative too), but a
//! text nested deeper than [`MAX_DEPTH`] levels is refused, which V8 would read:
//! dropping, cloning or printing a `serde_json::Value` recurses once per level, so a
//! hostile stream could otherwise overflow the stack (cloning an object 1000 levels deep
//! takes about 2 MiB of stack in a debug build: all of a tokio worker's).

use serde_json::{Map, Value};

use crate::js::{js_keys, number_value};

/// Nesting deeper than this is refused (see the module doc); real arguments and events
/// nest a handful of levels. 128 is `serde_json`'s own limit and the validator's
/// ([`MAX_ARGUMENT_DEPTH`](crate::schema::MAX_ARGUMENT_DEPTH)), so every `Value` pi-tool
/// parses, from any source, nests at most this deep.
pub(crate) const MAX_DEPTH: usize = 128;

/// `JSON.parse(text)`: the value, or V8's error message (or, for a text nested deeper
/// than [`MAX_DEPTH`], `JSON nested deeper than 128 levels`).
pub(crate) fn json_parse(text: &str) -> Result<Value, String> {
    Parser {
        text,
        bytes: text.as_bytes(),
        i: 0,
    }
    .document()
    .map_err(|fail| fail.message(text))
}

/// `JSON.parse(text)` where only success matters (no message is built).
pub(crate) fn parse_value(text: &str) -> Option<Value> {
    Parser {
        text,
        bytes: text.as_bytes(),
        i: 0,
    }
    .document()
    .ok()
}

/// Why the text is not JSON, at a byte offset.
#[derive(Debug)]
enum Fail {
    /// `Unexpected end of JSON input`.
    Eos,
    /// `Unexpected token 'c', "..." is not valid JSON`.
    Token(usize),
    /// `Unexpected number in JSON at position N` (a digit after a leading zero).
    Number(usize),
    /// `<message> at position N`.
    At(&'static str, usize),
    /// More than [`MAX_DEPTH`] levels.
    TooDeep,
}

const PROPERTY_NAME_OR_BRACE: &str = "Expected property name or '}' in JSON";
const COLON: &str = "Expected ':' after property name in JSON";
const COMMA_OR_BRACE: &str = "Expected ',' or '}' after property value in JSON";
const COMMA_OR_BRACKET: &str = "Expected ',' or ']' after array element in JSON";
const QUOTED_PROPERTY_NAME: &str = "Expected double-quoted property name in JSON";
const AFTER_JSON: &str = "Unexpected non-whitespace character after JSON";
const UNTERMINATED_STRING: &str = "Unterminated string in JSON";
const BAD_CONTROL: &str = "Bad control character in string literal in JSON";
const BAD_ESCAPE: &str = "Bad escaped character in JSON";
const BAD_UNICODE: &str = "Bad Unicode escape in JSON";
const NO_NUMBER_AFTER_MINUS: &str = "No number after minus sign in JSON";
const UNTERMINATED_FRACTION: &str = "Unterminated fractional number in JSON";
const MISSING_EXPONENT: &str = "Exponent part is missing a number in JSON";

/// V8 quotes the whole source when it is this short (UTF-16 units) ...
const SHORT_SOURCE: usize = 20;
/// ... and otherwise this many units either side of the bad token.
const CONTEXT: usize = 10;

impl Fail {
    fn message(self, text: &str) -> String {
        match self {
            Fail::Eos => "Unexpected end of JSON input".to_owned(),
            Fail::TooDeep => format!("JSON nested deeper than {MAX_DEPTH} levels"),
            Fail::Number(at) => positioned("Unexpected number in JSON", text, at),
            Fail::At(message, at) => positioned(message, text, at),
            // V8 names the token by its first character: a number or a string is
            // reported by kind and position, anything else by itself.
            Fail::Token(at) => match text.as_bytes().get(at) {
                Some(b'0'..=b'9' | b'-') => positioned("Unexpected number in JSON", text, at),
                Some(b'"') => positioned("Unexpected string in JSON", text, at),
                _ => unexpected_token(text, at),
            },
        }
    }
}

/// `<message> at position P (line L column C)`, P in UTF-16 units from the start,
/// lines broken by `\n`, `\r` or `\r\n`.
fn positioned(message: &str, text: &str, at: usize) -> String {
    let before = &text.as_bytes()[..at.min(text.len())];
    let mut line = 1;
    let mut line_start = 0;
    let mut k = 0;
    while k < before.len() {
        if before[k] == b'\r' && k + 1 < before.len() && before[k + 1] == b'\n' {
            k += 1;
        }
        if before[k] == b'\r' || before[k] == b'\n' {
            line += 1;
            line_start = k + 1;
        }
        k += 1;
    }
    let position = utf16_len(before);
    let column = 1 + utf16_len(&before[line_start..]);
    format!("{message} at position {position} (line {line} column {column})")
}

/// UTF-16 length of a byte slice of a `str` (cut at char boundaries).
fn utf16_len(bytes: &[u8]) -> usize {
    // Each UTF-8 lead byte starts one char; four-byte chars are two UTF-16 units.
    bytes
        .iter()
        .map(|&b| match b {
            0x80..=0xbf => 0,
            0xf0..=0xff => 2,
            _ => 1,
        })
        .sum()
}

/// V8's `Unexpected token` message: the bad UTF-16 unit, and the source (or ten units of
/// context either side of it) in quotes.
fn unexpected_token(text: &str, at: usize) -> String {
    if matches!(text, "NaN" | "Infinity" | "undefined" | "[object Object]") {
        return format!("\"{text}\" is not valid JSON");
    }
    let units: Vec<u16> = text.encode_utf16().collect();
    let pos = utf16_len(&text.as_bytes()[..at.min(text.len())]);
    let token = String::from_utf16_lossy(&units[pos.min(units.len())..(pos + 1).min(units.len())]);
    let lossy =
        |from: usize, to: usize| String::from_utf16_lossy(&units[from..to.min(units.len())]);
    let len = units.len();
    if len <= SHORT_SOURCE {
        format!("Unexpected token '{token}', \"{text}\" is not valid JSON")
    } else if pos < CONTEXT {
        let snippet = lossy(0, pos + CONTEXT);
        format!("Unexpected token '{token}', \"{snippet}\"... is not valid JSON")
    } else if pos < len - CONTEXT {
        let snippet = lossy(pos - CONTEXT, pos + CONTEXT);
        format!("Unexpected token '{token}', ...\"{snippet}\"... is not valid JSON")
    } else {
        let snippet = lossy(pos - CONTEXT, len);
        format!("Unexpected token '{token}', ...\"{snippet}\" is not valid JSON")
    }
}

/// An open container: its items so far (an object also holds the key being read).
enum Open {
    Array(Vec<Value>),
    Object(Map<String, Value>, String, bool),
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    /// Skips white space and reads the expected byte, or fails with `message` there.
    fn expect(&mut self, byte: u8, message: &'static str) -> Result<(), Fail> {
        self.skip_ws();
        if self.peek() == Some(byte) {
            self.i += 1;
            Ok(())
        } else {
            Err(Fail::At(message, self.i))
        }
    }

    fn document(&mut self) -> Result<Value, Fail> {
        let mut stack: Vec<Open> = Vec::new();
        'value: loop {
            // A value starts here.
            self.skip_ws();
            let mut value = match self.peek() {
                None => return Err(Fail::Eos),
                Some(b'"') => Value::String(self.string()?),
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(b't') => self.literal("true", Value::Bool(true))?,
                Some(b'f') => self.literal("false", Value::Bool(false))?,
                Some(b'n') => self.literal("null", Value::Null)?,
                Some(b'[' | b'{') if stack.len() >= MAX_DEPTH => return Err(Fail::TooDeep),
                Some(b'[') => {
                    self.i += 1;
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.i += 1;
                        Value::Array(Vec::new())
                    } else {
                        stack.push(Open::Array(Vec::new()));
                        continue 'value;
                    }
                }
                Some(b'{') => {
                    self.i += 1;
                    self.skip_ws();
                    match self.peek() {
                        Some(b'}') => {
                            self.i += 1;
                            Value::Object(Map::new())
                        }
                        Some(b'"') => {
                            let key = self.string()?;
                            self.expect(b':', COLON)?;
                            stack.push(Open::Object(Map::new(), key, false));
                            continue 'value;
                        }
                        _ => return Err(Fail::At(PROPERTY_NAME_OR_BRACE, self.i)),
                    }
                }
                Some(_) => return Err(Fail::Token(self.i)),
            };
            // The value is complete: hand it to the open containers, closing those that
            // end here, until one wants another value.
            loop {
                match stack.last_mut() {
                    None => {
                        self.skip_ws();
                        if self.i < self.bytes.len() {
                            return Err(Fail::At(AFTER_JSON, self.i));
                        }
                        return Ok(value);
                    }
                    Some(Open::Array(items)) => {
                        items.push(value);
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.i += 1;
                                continue 'value;
                            }
                            Some(b']') => {
                                self.i += 1;
                                let Some(Open::Array(items)) = stack.pop() else {
                                    unreachable!("the top of the stack is this array")
                                };
                                value = Value::Array(items);
                            }
                            _ => return Err(Fail::At(COMMA_OR_BRACKET, self.i)),
                        }
                    }
                    Some(Open::Object(map, key, has_index_key)) => {
                        *has_index_key |= is_index_key(key);
                        map.insert(std::mem::take(key), value);
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.i += 1;
                                self.skip_ws();
                                if self.peek() != Some(b'"') {
                                    return Err(Fail::At(QUOTED_PROPERTY_NAME, self.i));
                                }
                                *key = self.string()?;
                                self.expect(b':', COLON)?;
                                continue 'value;
                            }
                            Some(b'}') => {
                                self.i += 1;
                                let Some(Open::Object(map, _, has_index_key)) = stack.pop() else {
                                    unreachable!("the top of the stack is this object")
                                };
                                value = Value::Object(if has_index_key {
                                    js_ordered(map)
                                } else {
                                    map
                                });
                            }
                            _ => return Err(Fail::At(COMMA_OR_BRACE, self.i)),
                        }
                    }
                }
            }
        }
    }

    /// `true`, `false` or `null`: a text that stops early inside the word is the end of
    /// input; the first byte that differs is an unexpected token.
    fn literal(&mut self, word: &str, value: Value) -> Result<Value, Fail> {
        for &expected in word.as_bytes() {
            match self.peek() {
                None => return Err(Fail::Eos),
                Some(b) if b == expected => self.i += 1,
                Some(_) => return Err(Fail::Token(self.i)),
            }
        }
        Ok(value)
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Value, Fail> {
        let start = self.i;
        let mut integer = true;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.i += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(Fail::Number(self.i));
                }
            }
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(Fail::At(NO_NUMBER_AFTER_MINUS, self.i)),
        }
        if self.peek() == Some(b'.') {
            integer = false;
            self.i += 1;
            if self.digits() == 0 {
                return Err(Fail::At(UNTERMINATED_FRACTION, self.i));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            integer = false;
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(Fail::At(MISSING_EXPONENT, self.i));
            }
        }
        let literal = &self.text[start..self.i];
        // Up to 15 digits an integer is exact in a double: no float round trip needed.
        if integer
            && literal.len() <= 15
            && let Ok(n) = literal.parse::<i64>()
        {
            return Ok(if n == 0 {
                Value::from(0u64)
            } else {
                Value::from(n)
            });
        }
        // Rust's float parsing rounds correctly, as ECMAScript's does; overflow is ±inf.
        let f: f64 = literal.parse().unwrap_or(f64::NAN);
        Ok(number_value(f))
    }

    /// A string literal at `"`: its value, or V8's error.
    fn string(&mut self) -> Result<String, Fail> {
        self.i += 1;
        let start = self.i;
        // The common case: no escapes, one copy.
        loop {
            match self.peek() {
                None => return Err(Fail::At(UNTERMINATED_STRING, self.i)),
                Some(b'"') => {
                    let s = self.text[start..self.i].to_owned();
                    self.i += 1;
                    return Ok(s);
                }
                Some(b'\\') => break,
                Some(0..=0x1f) => return Err(Fail::At(BAD_CONTROL, self.i)),
                Some(_) => self.i += 1,
            }
        }
        let mut out = String::with_capacity(self.i - start + 16);
        out.push_str(&self.text[start..self.i]);
        let mut plain = self.i;
        // A high surrogate escape waiting for its low half.
        let mut high: Option<u16> = None;
        loop {
            match self.peek() {
                None => return Err(Fail::At(UNTERMINATED_STRING, self.i)),
                Some(b'"') => {
                    if high.take().is_some() {
                        out.push('\u{fffd}');
                    }
                    out.push_str(&self.text[plain..self.i]);
                    self.i += 1;
                    return Ok(out);
                }
                Some(0..=0x1f) => return Err(Fail::At(BAD_CONTROL, self.i)),
                Some(b'\\') => {
                    if plain < self.i && high.take().is_some() {
                        out.push('\u{fffd}');
                    }
                    out.push_str(&self.text[plain..self.i]);
                    self.i += 1;
                    let escaped = match self.peek() {
                        None => return Err(Fail::Eos),
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.i += 1;
                            let unit = self.hex4()?;
                            plain = self.i;
                            match (high.take(), unit) {
                                (Some(h), 0xdc00..=0xdfff) => {
                                    let c = 0x10000
                                        + ((u32::from(h) - 0xd800) << 10)
                                        + (u32::from(unit) - 0xdc00);
                                    out.push(char::from_u32(c).unwrap_or('\u{fffd}'));
                                }
                                (previous, 0xd800..=0xdbff) => {
                                    if previous.is_some() {
                                        out.push('\u{fffd}');
                                    }
                                    high = Some(unit);
                                }
                                (previous, _) => {
                                    if previous.is_some() {
                                        out.push('\u{fffd}');
                                    }
                                    out.push(char::from_u32(u32::from(unit)).unwrap_or('\u{fffd}'));
                                }
                            }
                            continue;
                        }
                        // V8 names a bad escape only for a Latin-1 character; beyond it
                        // the character is an unexpected token.
                        Some(_) => {
                            let c = self.text[self.i..].chars().next().unwrap_or('\0');
                            return Err(if u32::from(c) <= 0xff {
                                Fail::At(BAD_ESCAPE, self.i)
                            } else {
                                Fail::Token(self.i)
                            });
                        }
                    };
                    if high.take().is_some() {
                        out.push('\u{fffd}');
                    }
                    out.push(escaped);
                    self.i += 1;
                    plain = self.i;
                }
                Some(_) => self.i += 1,
            }
        }
    }

    /// Four hex digits of a `\u` escape.
    fn hex4(&mut self) -> Result<u16, Fail> {
        let mut unit: u16 = 0;
        for _ in 0..4 {
            let digit = match self.peek() {
                Some(b @ b'0'..=b'9') => b - b'0',
                Some(b @ b'a'..=b'f') => b - b'a' + 10,
                Some(b @ b'A'..=b'F') => b - b'A' + 10,
                _ => return Err(Fail::At(BAD_UNICODE, self.i)),
            };
            unit = unit * 16 + u16::from(digit);
            self.i += 1;
        }
        Ok(unit)
    }
}

/// Whether JavaScript treats the key as an array index (enumerated first, ascending).
pub(super) fn is_index_key(key: &str) -> bool {
    let b = key.as_bytes();
    !b.is_empty()
        && b.len() <= 10
        && b.iter().all(u8::is_ascii_digit)
        && (b.len() == 1 || b[0] != b'0')
        && key.parse::<u64>().is_ok_and(|n| n < u64::from(u32::MAX))
}

/// The object with its keys in JavaScript's enumeration order.
pub(super) fn js_ordered(map: Map<String, Value>) -> Map<String, Value> {
    let order: Vec<String> = js_keys(&map).into_iter().cloned().collect();
    let mut map = map;
    let mut out = Map::with_capacity(map.len());
    for key in order {
        if let Some(v) = map.remove(&key) {
            out.insert(key, v);
        }
    }
    out
}
