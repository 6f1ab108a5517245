//! `JSON.parse` as JavaScript does it, where a provider's text depends on it: V8's
//! (Node 20) `SyntaxError` messages.
//!
//! serde_json does the parsing; only a failure runs V8's grammar again to find the message
//! V8 gives, so the common path costs nothing extra.

use serde_json::Value;

/// `JSON.parse(text)`: the value, or V8's `SyntaxError` message.
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    match serde_json::from_str(text) {
        Ok(value) => Ok(value),
        // V8 accepts what serde_json refuses only past serde's nesting limit or with a
        // lone surrogate escape; the message is then serde's.
        Err(error) => Err(v8_error(text).unwrap_or_else(|| error.to_string())),
    }
}

/// V8's message for an invalid text; `None` when V8's grammar accepts it.
fn v8_error(text: &str) -> Option<String> {
    let mut scanner = Scanner {
        chars: text.chars().collect(),
        pos: 0,
        text,
    };
    scanner.document().err()
}

/// A failure: an explicit V8 message with its position, or a token V8 did not expect.
enum Fail {
    At(&'static str, usize),
    Token,
    Eos,
}

struct Scanner<'a> {
    chars: Vec<char>,
    pos: usize,
    text: &'a str,
}

impl Scanner<'_> {
    fn document(&mut self) -> Result<(), String> {
        let result = self.value().and_then(|()| {
            self.skip_ws();
            if self.peek().is_some() {
                Err(Fail::At(
                    "Unexpected non-whitespace character after JSON",
                    self.pos,
                ))
            } else {
                Ok(())
            }
        });
        result.map_err(|fail| self.message(fail))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.pos += 1;
        }
    }

    fn unexpected(&self) -> Fail {
        match self.peek() {
            None => Fail::Eos,
            Some('"') => Fail::At("Unexpected string in JSON", self.pos),
            Some(c) if c == '-' || c.is_ascii_digit() => {
                Fail::At("Unexpected number in JSON", self.pos)
            }
            Some(_) => Fail::Token,
        }
    }

    /// V8 parses nested values with an explicit stack; recursion here is bounded by
    /// the text, which only reaches this path after serde_json (depth 128) refused it.
    fn value(&mut self) -> Result<(), Fail> {
        self.skip_ws();
        match self.peek() {
            None => Err(Fail::Eos),
            Some('"') => self.string(),
            Some(c) if c == '-' || c.is_ascii_digit() => self.number(),
            Some('t') => self.literal("true"),
            Some('f') => self.literal("false"),
            Some('n') => self.literal("null"),
            Some('{') => self.object(),
            Some('[') => self.array(),
            Some(_) => Err(Fail::Token),
        }
    }

    fn expect(&mut self, c: char, message: &'static str) -> Result<(), Fail> {
        self.skip_ws();
        if self.peek() == Some(c) {
            Ok(())
        } else {
            Err(Fail::At(message, self.pos))
        }
    }

    fn object(&mut self) -> Result<(), Fail> {
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some('}') {
            self.pos += 1;
            return Ok(());
        }
        self.expect('"', "Expected property name or '}' in JSON")?;
        loop {
            self.string()?;
            self.expect(':', "Expected ':' after property name in JSON")?;
            self.pos += 1;
            self.value()?;
            self.skip_ws();
            match self.peek() {
                Some(',') => {
                    self.pos += 1;
                    self.expect('"', "Expected double-quoted property name in JSON")?;
                }
                Some('}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {
                    return Err(Fail::At(
                        "Expected ',' or '}' after property value in JSON",
                        self.pos,
                    ));
                }
            }
        }
    }

    fn array(&mut self) -> Result<(), Fail> {
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.value()?;
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {
                    return Err(Fail::At(
                        "Expected ',' or ']' after array element in JSON",
                        self.pos,
                    ));
                }
            }
        }
    }

    fn literal(&mut self, word: &str) -> Result<(), Fail> {
        for expected in word.chars() {
            match self.peek() {
                None => return Err(Fail::Eos),
                Some(c) if c == expected => self.pos += 1,
                Some(_) => return Err(Fail::Token),
            }
        }
        Ok(())
    }

    fn string(&mut self) -> Result<(), Fail> {
        self.pos += 1;
        loop {
            match self.peek() {
                None => return Err(Fail::At("Unterminated string in JSON", self.pos)),
                Some('"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some('\\') => {
                    self.pos += 1;
                    match self.peek() {
                        None => return Err(Fail::Eos),
                        Some('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't') => self.pos += 1,
                        Some('u') => {
                            self.pos += 1;
                            for _ in 0..4 {
                                match self.peek() {
                                    Some(c) if c.is_ascii_hexdigit() => self.pos += 1,
                                    _ => {
                                        return Err(Fail::At(
                                            "Bad Unicode escape in JSON",
                                            self.pos,
                                        ));
                                    }
                                }
                            }
                        }
                        Some(_) => return Err(Fail::At("Bad escaped character in JSON", self.pos)),
                    }
                }
                Some(c) if (c as u32) < 0x20 => {
                    return Err(Fail::At(
                        "Bad control character in string literal in JSON",
                        self.pos,
                    ));
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<(), Fail> {
        if self.peek() == Some('-') {
            self.pos += 1;
            if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(Fail::At("No number after minus sign in JSON", self.pos));
            }
        }
        if self.peek() == Some('0') {
            self.pos += 1;
            if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(self.unexpected());
            }
        } else {
            self.digits();
        }
        if self.peek() == Some('.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(Fail::At("Unterminated fractional number in JSON", self.pos));
            }
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some('+' | '-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(Fail::At(
                    "Exponent part is missing a number in JSON",
                    self.pos,
                ));
            }
        }
        Ok(())
    }

    /// The UTF-16 offset of a char index (V8 counts code units).
    fn utf16_pos(&self, index: usize) -> usize {
        self.chars[..index.min(self.chars.len())]
            .iter()
            .map(|c| c.len_utf16())
            .sum()
    }

    fn message(&self, fail: Fail) -> String {
        match fail {
            Fail::Eos => "Unexpected end of JSON input".to_owned(),
            Fail::At(message, index) => {
                format!("{message} at position {}", self.utf16_pos(index))
            }
            Fail::Token => self.token_message(),
        }
    }

    /// V8's `LookUpErrorMessageForJsonToken` for a character that starts no token: the
    /// whole text when it is short, else ten code units of context either side.
    fn token_message(&self) -> String {
        const CONTEXT: usize = 10;
        const MIN_LENGTH_FOR_CONTEXT: usize = CONTEXT * 2 + 1;
        if matches!(
            self.text,
            "[object Object]" | "undefined" | "Infinity" | "NaN"
        ) {
            return format!("\"{}\" is not valid JSON", self.text);
        }
        let token = self.peek().unwrap_or('\u{FFFD}');
        let units: Vec<u16> = self.text.encode_utf16().collect();
        let len = units.len();
        if len < MIN_LENGTH_FOR_CONTEXT {
            return format!(
                "Unexpected token '{token}', \"{}\" is not valid JSON",
                self.text
            );
        }
        let pos = self.utf16_pos(self.pos);
        let slice = |from: usize, to: usize| String::from_utf16_lossy(&units[from..to.min(len)]);
        if pos < CONTEXT {
            format!(
                "Unexpected token '{token}', \"{}\"... is not valid JSON",
                slice(0, pos + CONTEXT)
            )
        } else if pos < len - CONTEXT {
            format!(
                "Unexpected token '{token}', ...\"{}\"... is not valid JSON",
                slice(pos - CONTEXT, pos + CONTEXT)
            )
        } else {
            format!(
                "Unexpected token '{token}', ...\"{}\" is not valid JSON",
                slice(pos - CONTEXT, len)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each text with the message Node 20's `JSON.parse` throws for it.
    #[test]
    fn messages_match_v8() {
        let cases = [
            ("", "Unexpected end of JSON input"),
            (" ", "Unexpected end of JSON input"),
            (
                "{oops",
                "Expected property name or '}' in JSON at position 1",
            ),
            (
                "{\"a\":1",
                "Expected ',' or '}' after property value in JSON at position 6",
            ),
            (
                "[1,2",
                "Expected ',' or ']' after array element in JSON at position 4",
            ),
            (
                "{\"a\" 1}",
                "Expected ':' after property name in JSON at position 5",
            ),
            ("\"abc", "Unterminated string in JSON at position 4"),
            ("tru", "Unexpected end of JSON input"),
            (
                "1 2",
                "Unexpected non-whitespace character after JSON at position 2",
            ),
            (
                "{\"a\":1,}",
                "Expected double-quoted property name in JSON at position 7",
            ),
            ("[1,]", "Unexpected token ']', \"[1,]\" is not valid JSON"),
            ("-", "No number after minus sign in JSON at position 1"),
            ("1.", "Unterminated fractional number in JSON at position 2"),
            (
                "1e+",
                "Exponent part is missing a number in JSON at position 3",
            ),
            ("\"\\x\"", "Bad escaped character in JSON at position 2"),
            (
                "\"a\nb\"",
                "Bad control character in string literal in JSON at position 2",
            ),
            (
                "hello world this is a long text that goes on and on and on forever",
                "Unexpected token 'h', \"hello worl\"... is not valid JSON",
            ),
            ("abc", "Unexpected token 'a', \"abc\" is not valid JSON"),
            ("01", "Unexpected number in JSON at position 1"),
            ("-01", "Unexpected number in JSON at position 2"),
            ("\"\\u12\"", "Bad Unicode escape in JSON at position 5"),
            ("\"\\uZZZZ\"", "Bad Unicode escape in JSON at position 3"),
            ("\"\\", "Unexpected end of JSON input"),
            ("NaN", "\"NaN\" is not valid JSON"),
            ("trux", "Unexpected token 'x', \"trux\" is not valid JSON"),
            (
                "{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\":bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb}",
                "Unexpected token 'b', ...\"aaaaaaaa\":bbbbbbbbbb\"... is not valid JSON",
            ),
            (
                "{\"a\":\"b\"  ,  \"c\"  :  x}",
                "Unexpected token 'x', ...\"  \"c\"  :  x}\" is not valid JSON",
            ),
            (
                "\"\u{e9}\" x",
                "Unexpected non-whitespace character after JSON at position 4",
            ),
            (
                "\"\u{1F600}\" x",
                "Unexpected non-whitespace character after JSON at position 5",
            ),
        ];
        for (text, message) in cases {
            assert_eq!(parse(text), Err(message.to_owned()), "{text:?}");
        }
    }
}
