//! `JSON.parse` as JavaScript does it, where a provider's text depends on it: the value
//! and V8's `SyntaxError` messages (the parser is `partial_json`'s port of V8's).

use serde_json::Value;

/// `JSON.parse(text)`: the value, or V8's `SyntaxError` message (and, for a text nested
/// deeper than 1000 levels, which V8 would read, an error saying so: dropping such a
/// `serde_json::Value` would overflow the stack).
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    super::partial_json::json_parse(text)
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
            Err("JSON nested deeper than 128 levels".to_owned())
        );
        let fine = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert!(parse(&fine).is_ok());
        // Brackets inside strings do not count.
        let quoted = format!("[\"{}\\\"\"]", "[".repeat(5000));
        assert!(parse(&quoted).is_ok());
    }
}
