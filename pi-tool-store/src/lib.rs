//! Durable runs for pi-tool on real databases: [`SqliteStore`] (a file, the embedded
//! default) and [`PostgresStore`] (a server that replicas share). Both implement
//! [`pi_tool::durable::DurableStore`]: suspended runs, approvals and decisions,
//! exactly-once call markers and the hash-chained audit log.
//!
//! ```no_run
//! # async fn demo() -> Result<(), pi_tool::durable::StoreError> {
//! let store = pi_tool_store::open("sqlite:/var/lib/agent/runs.db").await?;
//! let log = store.audit_log().await?;
//! assert!(pi_tool::durable::verify_chain(&log).ok());
//! # Ok(())
//! # }
//! ```
//!
//! The schema is versioned ([`SCHEMA_VERSION`]); opening a store runs the migrations it
//! lacks, and refuses one written by a newer version ([`StoreError::NewerSchema`])
//! instead of misreading it.
//!
//! Features: `sqlite` (rusqlite, bundled SQLite) and `postgres` (tokio-postgres), both on
//! by default; `mcp` (off by default: it brings rmcp) gives `pi-tool-mcp`'s `TaskStore`
//! both backends (`SqlTaskStore`), so replicas share MCP tasks and a finished task
//! survives a restart.

use std::sync::Arc;

use pi_tool::durable::{DurableStore, StoreError};

#[cfg(feature = "mcp")]
mod mcp;
#[cfg(feature = "postgres")]
mod postgres;
mod rows;
#[cfg(feature = "sqlite")]
mod sqlite;

#[cfg(feature = "mcp")]
pub use mcp::SqlTaskStore;
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;

/// The newest schema version this build writes and reads.
pub const SCHEMA_VERSION: i64 = 2;

/// Opens the store a URL names: `sqlite:PATH` (created if missing) or
/// `postgres://...` / `postgresql://...`.
pub async fn open(url: &str) -> Result<Arc<dyn DurableStore>, StoreError> {
    #[cfg(feature = "sqlite")]
    if let Some(path) = url.strip_prefix("sqlite:") {
        return Ok(Arc::new(SqliteStore::open(path).await?));
    }
    #[cfg(feature = "postgres")]
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok(Arc::new(PostgresStore::connect(url).await?));
    }
    Err(StoreError::Backend(format!(
        "unsupported store URL (expected sqlite:PATH or postgres://...): {}",
        url.split(['@', '?']).next().unwrap_or("")
    )))
}
