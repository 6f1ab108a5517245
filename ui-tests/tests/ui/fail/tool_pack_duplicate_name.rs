use pi_tool::{pi_tool, tool_pack, ToolError};

/// Say hello.
#[pi_tool(name = "greet")]
pub async fn hello() -> Result<String, ToolError> {
    Ok("hello".to_owned())
}

/// Say hi.
#[pi_tool(name = "greet")]
pub async fn hi() -> Result<String, ToolError> {
    Ok("hi".to_owned())
}

/// Say bye.
#[pi_tool]
pub async fn bye() -> Result<String, ToolError> {
    Ok("bye".to_owned())
}

fn main() {
    let _pack = tool_pack![Hello, Bye, Hi];
}
