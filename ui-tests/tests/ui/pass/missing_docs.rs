//! Generated public items carry docs: `#![deny(missing_docs)]` crates compile.
#![deny(missing_docs)]

use std::sync::Arc;

use pi_tool::{ToolError, pi_tool, pi_tools};

/// Says hello.
#[pi_tool]
pub async fn hello() -> Result<String, ToolError> {
    Ok("hello".to_owned())
}

/// Shared state.
pub struct Greeter {
    /// The greeting.
    pub greeting: String,
}

#[pi_tools]
impl Greeter {
    /// Greets.
    #[pi_tool]
    pub async fn greet(&self) -> Result<String, ToolError> {
        Ok(self.greeting.clone())
    }
}

fn main() {
    let greeter = Arc::new(Greeter { greeting: "hi".to_owned() });
    assert_eq!(greeter.tools().len(), 1);
    let _ = (Hello, GreetTool::new(greeter));
}
