//! Test support for pi-tool-mcp's MCP client: `hostile-mcp`, a server with one way of
//! misbehaving per mode (see `src/bin/hostile-mcp.rs`), and the tests in `tests/` that
//! point [`McpToolset`](https://docs.rs/pi-tool-mcp) at it and at MCP servers from npm.
