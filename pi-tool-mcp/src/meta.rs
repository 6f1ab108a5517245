//! The `_meta` keys pi-tool writes beside MCP's own fields, read by the server and the
//! client alike: Pi's host-only fields have no slot in MCP, and MCP reserves `_meta` for
//! implementation-specific data under a prefix of one's own.

/// The prefix of every `_meta` key this crate writes.
pub const TOOL_META_PREFIX: &str = "pi-tool/";

/// `_meta` key of a call result: the tool's `details` (for hosts; never shown to the model).
pub const DETAILS_META_KEY: &str = "pi-tool/details";

/// `_meta` key of a structured call result whose `structuredContent` wraps the tool's
/// value as `{"result": value}` (the output type's root is not an object): `true`. The
/// details are then `structuredContent.result`.
pub const WRAPPED_RESULT_META_KEY: &str = "pi-tool/wrappedResult";

/// `_meta` key of a progress notification: the whole partial result (`content`, `details`).
pub const PARTIAL_RESULT_META_KEY: &str = "pi-tool/partialResult";

/// `_meta` key of a listed tool: the tools it may call through its context (its declared
/// reach, Pi 1.2's `reachesTools`), as an array of names, so a client can show them
/// before it approves the tool.
pub const REACHES_META_KEY: &str = "pi-tool/reaches";

/// `_meta` key of a listed tool: its concurrency class, `{"class": name, "weight": n}`.
pub const CONCURRENCY_META_KEY: &str = "pi-tool/concurrency";
