//! The struct takes the function's visibility.
mod tools {
    use pi_tool::{ToolError, pi_tool};

    /// Says hello.
    #[pi_tool]
    pub(crate) async fn hello() -> Result<String, ToolError> {
        Ok("hello".to_owned())
    }
}

fn main() {
    use pi_tool::Tool;
    assert_eq!(tools::Hello::NAME, "hello");
    let _ = tools::hello;
}
