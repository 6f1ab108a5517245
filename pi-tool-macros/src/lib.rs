//! The `#[pi_tool]` and `#[pi_tools]` attribute macros (see the `pi-tool` crate).
