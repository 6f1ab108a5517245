//! `growing-pack-mcp [--http ADDR]`: a pi-tool pack served by `PackServer` whose tool list
//! changes at run time through `PackServer::served_tools`: calling `grow` adds `grown`,
//! calling `shrink` removes it, each change told to the clients
//! (`notifications/tools/list_changed`, or the 2026-07-28 `subscriptions/listen`
//! stream). Over stdio by default; with `--http` it serves streamable HTTP and prints its
//! URL on standard output.

use std::sync::OnceLock;

use pi_tool::{IntoAgentTool, ToolError, pi_tool, tool_pack};
use pi_tool_mcp::{PackServer, ServedTools};

static SERVED: OnceLock<ServedTools> = OnceLock::new();

fn served() -> Result<&'static ServedTools, ToolError> {
    SERVED
        .get()
        .ok_or_else(|| ToolError::new("the served tools are not set yet"))
}

/// Adds the tool `grown` to the server's list.
#[pi_tool]
async fn grow() -> Result<String, ToolError> {
    match served()?.add(Grown.into_agent_tool()) {
        Ok(()) => Ok("grew".to_owned()),
        Err(error) => Err(ToolError::new(error.to_string())),
    }
}

/// Removes the tool `grown` from the server's list.
#[pi_tool]
async fn shrink() -> Result<String, ToolError> {
    Ok(if served()?.remove("grown") {
        "shrank"
    } else {
        "nothing to remove"
    }
    .to_owned())
}

/// A tool the server offers only after `grow`.
#[pi_tool]
async fn grown() -> Result<String, ToolError> {
    Ok("grown".to_owned())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = PackServer::new(tool_pack![Grow, Shrink])
        .with_server_info("growing-pack", env!("CARGO_PKG_VERSION"));
    let _ = SERVED.set(server.served_tools());
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag, address] if flag == "--http" => {
            let listener = tokio::net::TcpListener::bind(address.as_str()).await?;
            println!("http://{}/mcp", listener.local_addr()?);
            server.serve_http(listener).await?;
        }
        _ => server.serve_stdio().await?,
    }
    Ok(())
}
