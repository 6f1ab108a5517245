#![doc = include_str!("../../guide.md")]
