pub mod catalogue;
pub mod snapshot;
