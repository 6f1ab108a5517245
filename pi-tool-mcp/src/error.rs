//! [`ServeError`]: why serving stopped, for every transport of the server.

use std::fmt;

/// Why serving stopped with an error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServeError {
    /// The MCP handshake failed (rmcp's error, as text).
    Initialize(String),
    /// The service task ended with an error (rmcp's error, as text).
    Service(String),
    /// The HTTP listener could not accept a connection.
    Accept(String),
    /// The server's settings are not valid (an allowed host or origin that is not one).
    Config(String),
    /// A served tool reaches (`#[pi_tool(reaches = [...])]`) a tool the server does not
    /// serve: serving refuses to start, naming both.
    MissingReach(pi_tool_core::pack::MissingReach),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::Initialize(error) => write!(f, "MCP initialisation failed: {error}"),
            ServeError::Service(error) => write!(f, "MCP service task failed: {error}"),
            ServeError::Accept(error) => write!(f, "cannot accept a connection: {error}"),
            ServeError::Config(error) => write!(f, "invalid server settings: {error}"),
            ServeError::MissingReach(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for ServeError {}
