//! MCP's streamable HTTP in front of rmcp's service: `Host`/`Origin` checks
//! (`access.rs`), the framing checks of a POSTed body (`framing.rs`), what depends on
//! the revision a request speaks (`revision.rs`), and the layer that puts them in order
//! (`layer.rs`), the session rules rmcp lacks (`sessions.rs`), the sessions themselves (`table/`), and the connections with
//! their bounds and shutdown (`accept.rs`, `limits.rs`), and the memory of ended sessions given back
//! (`trim.rs`).

pub(crate) mod accept;
pub(crate) mod access;
pub(crate) mod framing;
pub(crate) mod layer;
pub(crate) mod limits;
mod revision;
pub(crate) mod sessions;
pub(crate) mod table;
pub(crate) mod trim;
