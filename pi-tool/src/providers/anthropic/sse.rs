//! pi-ai's own SSE reader for Anthropic (`iterateSseMessages`, `consumeLine`,
//! `decodeSseLine`, `flushSseEvent` in `api/anthropic-messages.js`), byte for byte.
//!
//! It differs from the SSE specification in ways a recording shows, so they are kept:
//! a chunk that ends in `\r` ends a line at once, and a `\n` at the start of the next
//! chunk is then an empty line that dispatches the event early (pi's CR-at-chunk-end bug);
//! comment lines stay in the `raw` lines of the next event; an event is dispatched only
//! when it has a non-empty name or data, and otherwise keeps its raw lines.

/// One dispatched SSE event: its `event:` name, its `data:` lines joined by `\n`, and every
/// line it was read from (for pi's parse-error text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SseEvent {
    pub(super) event: Option<String>,
    pub(super) data: String,
    pub(super) raw: Vec<String>,
}

/// The decoder: a streaming UTF-8 decoder (WHATWG `TextDecoder`, BOM stripped,
/// U+FFFD for invalid bytes) feeding pi's line splitter and field parser.
#[derive(Debug, Default)]
pub(super) struct SseDecoder {
    /// Bytes of a UTF-8 sequence cut by a chunk boundary.
    pending: Vec<u8>,
    /// Whether the first character was looked at for a BOM.
    bom_checked: bool,
    /// Decoded text not yet split into lines.
    buffer: String,
    /// How far `buffer` is known to hold no line break (keeps a long line linear).
    scanned: usize,
    event: Option<String>,
    data: Vec<String>,
    raw: Vec<String>,
}

impl SseDecoder {
    pub(super) fn new() -> Self {
        SseDecoder::default()
    }

    /// Feeds one body chunk and returns the events it completed.
    pub(super) fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let text = self.decode(chunk, false);
        self.buffer.push_str(&text);
        let mut events = Vec::new();
        self.drain_lines(&mut events);
        events
    }

    /// The end of the body: flushes the decoder, the last unterminated line and the
    /// event in progress.
    pub(super) fn finish(&mut self) -> Vec<SseEvent> {
        let text = self.decode(&[], true);
        self.buffer.push_str(&text);
        let mut events = Vec::new();
        self.drain_lines(&mut events);
        if !self.buffer.is_empty() {
            let line = std::mem::take(&mut self.buffer);
            self.scanned = 0;
            if let Some(event) = self.decode_line(line) {
                events.push(event);
            }
        }
        if let Some(event) = self.flush_event() {
            events.push(event);
        }
        events
    }

    fn decode(&mut self, chunk: &[u8], end: bool) -> String {
        let mut bytes = std::mem::take(&mut self.pending);
        bytes.extend_from_slice(chunk);
        let mut out = String::with_capacity(bytes.len());
        let mut rest: &[u8] = &bytes;
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    out.push_str(valid);
                    break;
                }
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match error.error_len() {
                        Some(len) => {
                            out.push('\u{fffd}');
                            rest = &after[len..];
                        }
                        None => {
                            // An unfinished sequence: wait for the next chunk, or at the
                            // end emit one replacement character for it.
                            if end {
                                out.push('\u{fffd}');
                            } else {
                                self.pending = after.to_vec();
                            }
                            break;
                        }
                    }
                }
            }
        }
        if !self.bom_checked && !out.is_empty() {
            self.bom_checked = true;
            if let Some(stripped) = out.strip_prefix('\u{feff}') {
                return stripped.to_owned();
            }
        }
        out
    }

    /// `consumeLine` until no line break is left: the first `\r` or `\n` ends a line, and
    /// a `\r\n` counts as one break only when both are in the buffer already.
    fn drain_lines(&mut self, events: &mut Vec<SseEvent>) {
        let mut start = 0;
        loop {
            let from = self.scanned.max(start);
            let Some(offset) = self.buffer[from..].find(['\r', '\n']) else {
                break;
            };
            let at = from + offset;
            let mut next = at + 1;
            if self.buffer.as_bytes()[at] == b'\r'
                && self.buffer.as_bytes().get(next) == Some(&b'\n')
            {
                next += 1;
            }
            let line = self.buffer[start..at].to_owned();
            start = next;
            self.scanned = next;
            if let Some(event) = self.decode_line(line) {
                events.push(event);
            }
        }
        if start > 0 {
            self.buffer.drain(..start);
        }
        self.scanned = self.buffer.len();
    }

    /// `decodeSseLine`.
    fn decode_line(&mut self, line: String) -> Option<SseEvent> {
        if line.is_empty() {
            return self.flush_event();
        }
        if line.starts_with(':') {
            self.raw.push(line);
            return None;
        }
        let (field, value) = match line.find(':') {
            Some(at) => (&line[..at], &line[at + 1..]),
            None => (line.as_str(), ""),
        };
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => self.data.push(value.to_owned()),
            _ => {}
        }
        self.raw.push(line);
        None
    }

    /// `flushSseEvent`: nothing (and the raw lines kept) while neither a name nor data
    /// was read.
    fn flush_event(&mut self) -> Option<SseEvent> {
        let unnamed = self.event.as_deref().is_none_or(str::is_empty);
        if unnamed && self.data.is_empty() {
            return None;
        }
        let event = SseEvent {
            event: self.event.take(),
            data: self.data.join("\n"),
            raw: std::mem::take(&mut self.raw),
        };
        self.data.clear();
        Some(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::new();
        let mut events = Vec::new();
        for chunk in chunks {
            events.extend(decoder.push(chunk));
        }
        events.extend(decoder.finish());
        events
    }

    fn ev(event: Option<&str>, data: &str, raw: &[&str]) -> SseEvent {
        SseEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
            raw: raw.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn whole_crlf_events_read_like_lf_events() {
        let events = read(&[b"event: a\r\ndata: 1\r\n\r\nevent: b\ndata: 2\n\n"]);
        assert_eq!(
            events,
            [
                ev(Some("a"), "1", &["event: a", "data: 1"]),
                ev(Some("b"), "2", &["event: b", "data: 2"])
            ]
        );
    }

    #[test]
    fn a_chunk_ending_in_cr_dispatches_the_event_before_its_data() {
        let events = read(&[b"event: x\r", b"\ndata: {}\r\n\r\n"]);
        assert_eq!(
            events,
            [
                ev(Some("x"), "", &["event: x"]),
                ev(None, "{}", &["data: {}"])
            ]
        );
    }

    #[test]
    fn comments_stay_in_the_raw_lines_of_the_next_event() {
        let events = read(&[b": ping\n\nevent: e\ndata: a\ndata: b\n\n"]);
        assert_eq!(
            events,
            [ev(
                Some("e"),
                "a\nb",
                &[": ping", "event: e", "data: a", "data: b"]
            )]
        );
    }

    #[test]
    fn the_last_line_and_event_are_read_without_a_trailing_break() {
        assert_eq!(
            read(&[b"event: e\ndata:x"]),
            [ev(Some("e"), "x", &["event: e", "data:x"])]
        );
    }

    #[test]
    fn multibyte_characters_split_across_chunks_decode_whole() {
        let text = "data: h\u{e9}\u{1f600}\n\n".as_bytes();
        for cut in 0..text.len() {
            let (a, b) = text.split_at(cut);
            assert_eq!(read(&[a, b])[0].data, "h\u{e9}\u{1f600}", "cut at {cut}");
        }
    }

    #[test]
    fn invalid_bytes_become_replacement_characters_and_a_bom_is_dropped() {
        let events = read(&[b"\xef\xbb\xbfdata: a\xffb\n\ndata: \xe2\x82"]);
        assert_eq!(events[0].data, "a\u{fffd}b");
        assert_eq!(events[1].data, "\u{fffd}");
    }

    #[test]
    fn a_long_line_over_many_chunks_is_read_once() {
        let mut decoder = SseDecoder::new();
        assert!(decoder.push(b"data: ").is_empty());
        for _ in 0..1000 {
            assert!(decoder.push(b"xxxxxxxxxx").is_empty());
        }
        let events = decoder.push(b"\n\n");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data.len(), 10_000);
    }
}
