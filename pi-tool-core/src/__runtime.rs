//! What `pi-tool`, released in lockstep with this crate (an `=` version), uses of the
//! core's internals. Not a public API: it changes with any release.

/// JavaScript value semantics (numbers, `trim`, key order, `JSON.stringify`), one copy for
/// the schema pipeline, the providers and the conformance runner.
pub mod js {
    pub use crate::js::*;
}

pub use crate::call::panic_text;
pub use crate::context::SessionLink;
