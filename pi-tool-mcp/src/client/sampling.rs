//! Model calls a server asks the host for (MCP's sampling: `sampling/createMessage` at
//! 2025-11-25, a `createMessage` input request at 2026-07-28).
//!
//! Declined unless the host gave a [`SamplingHandler`]
//! ([`McpServer::sampling_handler`](super::McpServer::sampling_handler)): a server is
//! untrusted, and a model call spends the host's tokens on a prompt the server wrote.
//! With a handler the client announces the `sampling` capability, and every request goes
//! to it with the server's name, so the host can ask the user, apply a policy, or call
//! its model.

// SEP-2577 deprecates sampling in a later revision; 2025-11-25 and 2026-07-28 have it,
// and servers (the reference `everything` server among them) still send it.
#![allow(deprecated)]

use pi_tool_core::async_trait;
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult};

/// Answers a server's sampling requests for the host, usually with its own model.
#[async_trait]
pub trait SamplingHandler: Send + Sync + 'static {
    /// Answers one request from `server` (its [`McpServer`](super::McpServer) name): the
    /// model's message, or why there is none (sent to the server as the request's error).
    async fn create_message(
        &self,
        server: &str,
        request: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, String>;
}
