//! `#[params]` on something that is not a type.
#[pi_tool::params]
pub fn weather() {}

fn main() {}
