//! What the MCP floor bench's driver (`mcp-floor`) and its two peer servers
//! (`rmcp-weather`, `jsonrpc-echo`) share.

/// `get_weather`'s result for Tokyo in celsius as `weather-mcp` sends it (the `result`
/// member of its `tools/call` response), which the echo answers with and every side's
/// answer is checked against.
pub const WEATHER_RESULT: &str = r#"{"content":[{"type":"text","text":"Tokyo: 24 degrees celsius"}],"isError":false,"_meta":{"pi-tool/details":{"phase":"done","city":"Tokyo","unit":"celsius","temperature":24}}}"#;

/// The text every side's answer carries.
pub const ANSWER: &str = "Tokyo: 24 degrees celsius";
