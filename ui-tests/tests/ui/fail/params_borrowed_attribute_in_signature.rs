// A borrowing #[pi_tool::params] type, used with its lifetime in the signature: the two
// places the borrow is written, one error each, and nothing else.
use pi_tool::{ToolError, pi_tool};

#[pi_tool::params]
pub struct WordCountParams<'a> {
    /// The text whose words to count.
    pub text: &'a str,
}

/// Count the words of a text.
#[pi_tool]
pub async fn word_count(params: WordCountParams<'_>) -> Result<String, ToolError> {
    Ok(params.text.split_whitespace().count().to_string())
}

fn main() {}
