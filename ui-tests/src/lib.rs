//! Compile tests of `#[pi_tool]` and `#[pi_tools]` (no library code).
//!
//! - `tests/ui/pass/*.rs`: every supported form compiles and its `main` runs (Pi's four-
//!   and five-argument forms, params only, no params, text results, `Result` aliases,
//!   `pub(crate)`, `#[doc = include_str!(..)]`, every attribute key, `#[pi_tools]` blocks,
//!   pi-tool under another name with `crate = "..."`).
//! - `tests/ui/fail/*.rs`: one mistake each; its `.stderr` snapshot is the one error the
//!   user sees, spanned on their own tokens and saying how to fix it.
//!
//! This crate depends on `pi-tool`, `serde` and `tokio` only: the cases also prove that a
//! tool crate needs no schemars or serde_json dependency of its own.
//!
//! Regenerate the snapshots after a deliberate diagnostic change with
//! `TRYBUILD=overwrite cargo test -p pi-tool-ui-tests`, then read every changed `.stderr`.
//! Snapshots depend on the compiler's wording; they were recorded with rustc 1.95.0
//! (stable), and an older or newer compiler may word type errors differently.
