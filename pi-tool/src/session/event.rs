//! What a session tells its subscribers ([`SessionEvent`]) and what a change of its
//! active tools did ([`ActiveToolsChange`]).

use crate::agent::AgentEvent;

/// A failing extension handler, reported to the session's subscribers (Pi's
/// `bindExtensions({onError})`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExtensionErrorEvent {
    /// The extension (`<inline:NAME>`).
    pub extension_path: String,
    /// The event whose handler failed (`tool_result`).
    pub event: String,
    /// The error message.
    pub error: String,
}

/// What session subscribers receive: the agent's events and the extension events.
#[derive(Debug, Clone, PartialEq)]
// Listeners receive events by reference; boxing the common variant would cost an
// allocation per event to save stack space on the rare one.
#[allow(clippy::large_enum_variant)]
#[non_exhaustive]
pub enum SessionEvent {
    /// An agent event (Pi's `AgentEvent`).
    Agent(AgentEvent),
    /// An extension handler failed and was skipped.
    ExtensionError(ExtensionErrorEvent),
}

/// What a change of the active tools did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ActiveToolsChange {
    /// The active tool names now, in order.
    pub active: Vec<String>,
    /// Requested names that are not in the registry (unknown, or filtered out by the
    /// allowlist / excludes); ignored.
    pub unknown: Vec<String>,
    /// Names requested more than once; kept once (Pi keeps duplicates).
    pub duplicates: Vec<String>,
}

/// Identifies a session subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubscriptionId(pub(super) u64);
