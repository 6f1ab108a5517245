//! Newline-delimited JSON-RPC (MCP's stdio framing) in front of rmcp: the checks of
//! each line (`framing.rs`), rmcp's transport that reads and writes the lines
//! (`transport.rs`), the batches of a 2025-03-26 session (`batch.rs`) and the
//! back-pressure window (`window.rs`).

mod batch;
pub(crate) mod framing;
mod transport;
mod window;

pub use framing::DEFAULT_MAX_MESSAGE_BYTES;
pub(crate) use transport::serve_framed;
pub use window::DEFAULT_MAX_PENDING_REQUESTS;
