//! What the fuzz targets share: how a fuzzer's bytes become inputs (chunks, amplified
//! texts), the schema catalogue, and the provider harness (a loopback server and the
//! checks every provider event stream must pass).
//!
//! Every target states what must hold and panics when it does not; libFuzzer turns a
//! panic, an abort (a stack overflow), a timeout or an out-of-memory into a crash with
//! the input saved under `fuzz/artifacts/<target>/`.

pub mod catalogue;
pub mod input;
pub mod provider;

#[cfg(test)]
mod tests;
