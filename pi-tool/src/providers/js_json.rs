//! `JSON.parse` as JavaScript does it, where a provider's text depends on it: the value
//! and V8's `SyntaxError` messages (the parser is `partial_json`'s port of V8's).

use serde_json::Value;

/// Nesting deeper than this is refused before parsing: dropping (or walking) a
/// `serde_json::Value` recurses once per level, and a hostile stream could nest deep
/// enough to overflow the stack. Real chunks nest a handful of levels.
pub(crate) const MAX_DEPTH: usize = 1000;

/// `JSON.parse(text)`: the value, or V8's `SyntaxError` message (or, for a text nested
/// deeper than [`MAX_DEPTH`], which V8 would read, an error saying so).
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    if nesting_exceeds(text, MAX_DEPTH) {
        return Err(format!("JSON nested deeper than {MAX_DEPTH} levels"));
    }
    super::partial_json::json_parse(text)
}

/// Whether brackets outside strings open more than `limit` levels at some point.
fn nesting_exceeds(text: &str, limit: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the SSE reader reports for a bad `data:` line: Node 22's texts.
    #[test]
    fn messages_are_node_22s() {
        let cases = [
            ("", "Unexpected end of JSON input"),
            (
                "{not json}",
                "Expected property name or '}' in JSON at position 1 (line 1 column 2)",
            ),
            ("[1,]", "Unexpected token ']', \"[1,]\" is not valid JSON"),
            (
                "\"\u{1F600}\" x",
                "Unexpected non-whitespace character after JSON at position 5 (line 1 column 6)",
            ),
        ];
        for (text, message) in cases {
            assert_eq!(parse(text), Err(message.to_owned()), "{text:?}");
        }
        assert_eq!(parse("{\"a\":1.0}"), Ok(serde_json::json!({"a": 1})));
    }

    #[test]
    fn hostile_nesting_is_refused_not_a_stack_overflow() {
        let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
        assert_eq!(
            parse(&deep),
            Err("JSON nested deeper than 1000 levels".to_owned())
        );
        let fine = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
        assert!(parse(&fine).is_ok());
        // Brackets inside strings do not count.
        let quoted = format!("[\"{}\\\"\"]", "[".repeat(5000));
        assert!(parse(&quoted).is_ok());
    }
}
