//! Turning the fuzzer's bytes into the shapes the parsers take.
//!
//! libFuzzer's inputs are small (4 KiB by default), but the bugs the targets look for
//! need big ones: nesting 100 000 deep overflows a stack, a quadratic loop only shows on
//! megabytes. [`expand`] lets a small input stand for a big one (a piece repeated many
//! times), so the fuzzer can reach both without slowing every run. [`chunks`] cuts a body
//! at fuzzer-chosen points, as a network delivers it.

/// The most [`expand`] makes of an input: 1 MiB.
pub const MAX_EXPANDED: usize = 1 << 20;

/// The stack of the threads that run amplified inputs: tokio's worker threads have
/// 2 MiB, and providers and tools parse on them.
pub const STACK: usize = 2 << 20;

/// The input as a text to parse, amplified when it asks to be.
///
/// An input starting with the byte `0xFA` is `0xFA, times, n, piece (n bytes), tail`:
/// `piece` repeated `times * 512` times (so up to 130 560 times), then `tail`, at most
/// [`MAX_EXPANDED`] bytes in all. `[` repeated reads as JSON nested that deep; `"a":`
/// inside an object as a long object. Any other input is taken as it is.
pub fn expand(data: &[u8]) -> Expanded<'_> {
    let Some((&0xFA, rest)) = data.split_first() else {
        return Expanded::Plain(data);
    };
    let (times, n, rest) = match rest {
        [times, n, rest @ ..] => (*times as usize * 512, *n as usize, rest),
        _ => return Expanded::Plain(data),
    };
    let n = n.min(rest.len());
    let (piece, tail) = rest.split_at(n);
    if piece.is_empty() || times == 0 {
        return Expanded::Plain(data);
    }
    let mut out = Vec::with_capacity(MAX_EXPANDED.min(piece.len() * times + tail.len()));
    for _ in 0..times {
        if out.len() + piece.len() > MAX_EXPANDED {
            break;
        }
        out.extend_from_slice(piece);
    }
    let room = MAX_EXPANDED.saturating_sub(out.len());
    out.extend_from_slice(&tail[..tail.len().min(room)]);
    Expanded::Big(out)
}

/// An input after [`expand`].
pub enum Expanded<'a> {
    /// As the fuzzer gave it.
    Plain(&'a [u8]),
    /// Amplified: run it with [`on_worker_stack`].
    Big(Vec<u8>),
}

impl Expanded<'_> {
    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Expanded::Plain(b) => b,
            Expanded::Big(b) => b,
        }
    }

    /// Runs `f` on the bytes: a big input on a thread with a worker's stack ([`STACK`]),
    /// where deep recursion overflows as it would in production.
    pub fn run<R: Send>(&self, f: impl FnOnce(&[u8]) -> R + Send) -> R {
        match self {
            Expanded::Plain(b) => f(b),
            Expanded::Big(b) => on_worker_stack(|| f(b)),
        }
    }
}

/// Runs `f` on a thread with a tokio worker's stack ([`STACK`]). A panic there is the
/// target's failure (libfuzzer-sys aborts the process on any panic).
pub fn on_worker_stack<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(scope, f)
            .expect("spawn a fuzz thread");
        match thread.join() {
            Ok(result) => result,
            Err(payload) => std::panic::resume_unwind(payload),
        }
    })
}

/// Cuts `body` into network chunks. The first byte of `data` picks the largest chunk
/// (0: one chunk; else 1 to 255 bytes) and the second seeds the cut points; the rest of
/// `data` is the body. Returns the body and its chunks.
pub fn chunks(data: &[u8]) -> (&[u8], Vec<&[u8]>) {
    let (max, seed, body) = match data {
        [max, seed, body @ ..] => (*max as usize, *seed as u32, body),
        _ => return (data, vec![data]),
    };
    (body, cut(body, max, seed))
}

/// `body` in chunks of 1 to `max` bytes at points drawn from `seed` (one chunk when
/// `max` is 0). Every byte is in exactly one chunk, in order.
pub fn cut(body: &[u8], max: usize, seed: u32) -> Vec<&[u8]> {
    if max == 0 || body.is_empty() {
        return vec![body];
    }
    // A tiny xorshift: deterministic, so a crash replays with the same chunks.
    let mut state = seed.wrapping_mul(2_654_435_761).wrapping_add(1) | 1;
    let mut out = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let n = (state as usize % max + 1).min(rest.len());
        let (head, tail) = rest.split_at(n);
        out.push(head);
        rest = tail;
    }
    out
}

/// `text` cut into pieces on `char` boundaries at the points [`cut`] would choose (for
/// streaming deltas, which are strings).
pub fn cut_str(text: &str, max: usize, seed: u32) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut end = 0;
    for piece in cut(text.as_bytes(), max, seed) {
        end += piece.len();
        if text.is_char_boundary(end) && end > start {
            out.push(&text[start..end]);
            start = end;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    if out.is_empty() {
        out.push(text);
    }
    out
}
