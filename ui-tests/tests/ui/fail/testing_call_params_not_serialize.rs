// `testing::call` writes the typed params as a model's JSON arguments: params that are not
// `Serialize` are one error on them, naming both fixes.
use pi_tool::{pi_tool, testing, ToolError};

#[pi_tool::params]
pub struct CountParams {
    /// The text whose words to count.
    pub text: String,
}

/// Count the words of a text.
#[pi_tool]
pub async fn word_count(params: CountParams) -> Result<String, ToolError> {
    Ok(params.text.split_whitespace().count().to_string())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let run = testing::call(WordCount, CountParams { text: "one two".into() }).await;
    assert_eq!(run.text(), "2");
}
