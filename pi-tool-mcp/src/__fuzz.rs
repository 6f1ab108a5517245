//! The stdio framing's parsers of untrusted bytes (`server/serve/io/framing.rs`), for the fuzz crate
//! (`fuzz/`) only.
//!
//! cargo-fuzz builds every crate with `--cfg fuzzing`; lib.rs declares this module under
//! that cfg alone, so no normal build, no docs and no public-API snapshot see it. The
//! functions run the framing's own line reader and line check; the streamable-HTTP
//! framing (`server/serve/http/framing.rs`) answers a body with the same check.

use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use serde_json::Value;
use tokio::io::{AsyncRead, BufReader, ReadBuf};

use crate::server::serve::io::framing;

/// How much of an oversized line is kept to read its id from.
pub const ID_SCAN_PREFIX: usize = framing::ID_SCAN_PREFIX;

/// What the framing does with one complete line.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Nothing (a blank line, or a notification rmcp cannot read).
    Skip,
    /// The line goes to rmcp unchanged.
    Forward,
    /// The framing answers with this JSON-RPC error; rmcp never sees the line.
    Answer(Value),
}

/// The framing's decision for one line (without its newline).
pub fn check_line(line: &[u8]) -> Verdict {
    match framing::check(line) {
        framing::Verdict::Skip => Verdict::Skip,
        framing::Verdict::Forward => Verdict::Forward,
        framing::Verdict::Answer(answer) => Verdict::Answer(answer),
    }
}

/// The answer to a message over `limit` bytes, `length` bytes long, starting `prefix`.
pub fn oversized_answer(prefix: &[u8], limit: usize, length: usize) -> Value {
    framing::oversized_answer(prefix, limit, length)
}

/// One line as the framing's reader delivers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A whole line, without `\n` or `\r\n`.
    Complete(Vec<u8>),
    /// A line over the limit: the bytes kept of it, and how many it had.
    Oversized {
        /// Its first bytes.
        prefix: Vec<u8>,
        /// Its length as counted by the reader.
        length: usize,
    },
}

/// Reads every line of a client's input that arrives in `chunks` (one read each, through
/// a `BufReader` of `capacity` bytes), with the message limit `limit`.
pub fn read_lines(chunks: &[&[u8]], capacity: usize, limit: usize) -> Vec<Line> {
    let mut read = BufReader::with_capacity(
        capacity.max(1),
        Chunks {
            chunks: chunks.iter().map(|c| c.to_vec()).collect(),
            next: 0,
        },
    );
    let mut reader = framing::LineReader::new(limit);
    let mut lines = Vec::new();
    loop {
        let line = {
            let next = std::pin::pin!(reader.next(&mut read));
            // The input is all in memory, so every read is ready at once.
            match next.poll(&mut Context::from_waker(Waker::noop())) {
                Poll::Ready(Ok(line)) => line,
                Poll::Ready(Err(_)) | Poll::Pending => break,
            }
        };
        match line {
            framing::Line::Eof => break,
            framing::Line::Complete => lines.push(Line::Complete(reader.line().to_vec())),
            framing::Line::Oversized { length } => lines.push(Line::Oversized {
                prefix: reader.line().to_vec(),
                length,
            }),
        }
    }
    lines
}

/// A reader that returns the given chunks, one per read (a chunk larger than the
/// caller's buffer is split), then EOF.
struct Chunks {
    chunks: Vec<Vec<u8>>,
    next: usize,
}

impl AsyncRead for Chunks {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        // Empty chunks would read as EOF: skip them.
        while this.chunks.get(this.next).is_some_and(Vec::is_empty) {
            this.next += 1;
        }
        if let Some(chunk) = this.chunks.get_mut(this.next) {
            let n = chunk.len().min(buf.remaining());
            buf.put_slice(&chunk[..n]);
            chunk.drain(..n);
            if chunk.is_empty() {
                this.next += 1;
            }
        }
        Poll::Ready(Ok(()))
    }
}
