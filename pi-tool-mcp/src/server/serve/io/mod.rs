//! Newline-delimited JSON-RPC (MCP's stdio framing) in front of rmcp: the checks of
//! each line (`framing.rs`) and the back-pressure window (`window.rs`).

pub(crate) mod framing;
mod window;

pub use framing::DEFAULT_MAX_MESSAGE_BYTES;
pub(crate) use framing::serve_framed;
pub use window::DEFAULT_MAX_PENDING_REQUESTS;
