//! Pi's `OutputAccumulator`: streamed command output with bounded memory. It decodes UTF-8
//! as a stream, keeps a tail of at most 200 KB for display, counts lines and bytes of the
//! whole output, and spills every raw byte to a temporary file once the output is over
//! the limits.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use crate::truncate::{TruncatedOutput, truncate_tail};

/// A view of the output so far: the tail to show, the truncation, the full-output file.
pub(crate) struct Snapshot {
    pub content: String,
    pub truncation: TruncatedOutput,
    pub full_output_path: Option<PathBuf>,
}

pub(crate) struct OutputAccumulator {
    max_lines: usize,
    max_bytes: usize,
    max_rolling_bytes: usize,
    prefix: &'static str,
    pending: Vec<u8>,
    raw_chunks: Vec<Vec<u8>>,
    tail: String,
    tail_starts_at_line_boundary: bool,
    total_raw_bytes: usize,
    total_decoded_bytes: usize,
    completed_lines: usize,
    total_lines: usize,
    current_line_bytes: usize,
    finished: bool,
    temp_path: Option<PathBuf>,
    temp_file: Option<BufWriter<File>>,
    temp_error: Option<std::io::Error>,
}

/// Node's `os.tmpdir()`: `$TMPDIR` without a trailing slash, else `/tmp`.
pub(crate) fn temp_dir() -> PathBuf {
    match std::env::var("TMPDIR") {
        Ok(dir) if !dir.is_empty() => {
            let trimmed = dir.trim_end_matches('/');
            PathBuf::from(if trimmed.is_empty() { "/" } else { trimmed })
        }
        _ => PathBuf::from("/tmp"),
    }
}

fn random_hex16() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{:016x}", h.finish())
}

impl OutputAccumulator {
    pub(crate) fn new(max_lines: usize, max_bytes: usize, prefix: &'static str) -> Self {
        OutputAccumulator {
            max_lines,
            max_bytes,
            max_rolling_bytes: (max_bytes * 2).max(1),
            prefix,
            pending: Vec::new(),
            raw_chunks: Vec::new(),
            tail: String::new(),
            tail_starts_at_line_boundary: true,
            total_raw_bytes: 0,
            total_decoded_bytes: 0,
            completed_lines: 0,
            total_lines: 0,
            current_line_bytes: 0,
            finished: false,
            temp_path: None,
            temp_file: None,
            temp_error: None,
        }
    }

    pub(crate) fn append(&mut self, data: &[u8]) {
        if self.finished {
            return;
        }
        self.total_raw_bytes += data.len();
        let text = self.decode(data, false);
        self.append_decoded(&text);
        if self.temp_file.is_some() || self.should_use_temp_file() {
            self.ensure_temp_file();
            self.write_temp(data);
        } else if !data.is_empty() {
            self.raw_chunks.push(data.to_vec());
        }
    }

    pub(crate) fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let text = self.decode(&[], true);
        self.append_decoded(&text);
        if self.should_use_temp_file() {
            self.ensure_temp_file();
        }
    }

    /// A streaming UTF-8 decoder (WHATWG's, as `TextDecoder` is): an incomplete sequence at
    /// the end waits for the next chunk; an invalid one becomes U+FFFD.
    fn decode(&mut self, data: &[u8], flush: bool) -> String {
        let mut bytes = std::mem::take(&mut self.pending);
        bytes.extend_from_slice(data);
        let mut out = String::with_capacity(bytes.len());
        let mut rest: &[u8] = &bytes;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(s);
                    break;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    // SAFETY-free: `valid_up_to` bytes are valid UTF-8 by definition.
                    out.push_str(std::str::from_utf8(&rest[..valid]).unwrap_or_default());
                    match e.error_len() {
                        Some(n) => {
                            out.push('\u{FFFD}');
                            rest = &rest[valid + n..];
                        }
                        None => {
                            if flush {
                                out.push('\u{FFFD}');
                            } else {
                                self.pending = rest[valid..].to_vec();
                            }
                            break;
                        }
                    }
                }
            }
        }
        out
    }

    fn append_decoded(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let bytes = text.len();
        self.total_decoded_bytes += bytes;
        self.tail.push_str(text);
        if self.tail.len() > self.max_rolling_bytes * 2 {
            self.trim_tail();
        }
        let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
        if newlines == 0 {
            self.current_line_bytes += bytes;
            self.total_lines = self.completed_lines + 1;
        } else {
            self.completed_lines += newlines;
            let last = memchr::memrchr(b'\n', text.as_bytes()).unwrap_or(0);
            let tail_len = bytes - last - 1;
            self.current_line_bytes = tail_len;
            self.total_lines = self.completed_lines + usize::from(tail_len > 0);
        }
    }

    fn trim_tail(&mut self) {
        if self.tail.len() <= self.max_rolling_bytes {
            return;
        }
        let mut start = self.tail.len() - self.max_rolling_bytes;
        while !self.tail.is_char_boundary(start) {
            start += 1;
        }
        self.tail_starts_at_line_boundary = self.tail.as_bytes()[start - 1] == b'\n';
        self.tail.drain(..start);
    }

    fn snapshot_text(&self) -> &str {
        if self.tail_starts_at_line_boundary {
            return &self.tail;
        }
        match self.tail.find('\n') {
            Some(i) => &self.tail[i + 1..],
            None => &self.tail,
        }
    }

    pub(crate) fn snapshot(&mut self, persist_if_truncated: bool) -> Snapshot {
        let mut t = truncate_tail(self.snapshot_text(), self.max_lines, self.max_bytes);
        let truncated =
            self.total_lines > self.max_lines || self.total_decoded_bytes > self.max_bytes;
        t.truncated_by = if truncated {
            t.truncated_by
                .or(Some(if self.total_decoded_bytes > self.max_bytes {
                    "bytes"
                } else {
                    "lines"
                }))
        } else {
            None
        };
        t.truncated = truncated;
        t.total_lines = self.total_lines;
        t.total_bytes = self.total_decoded_bytes;
        if persist_if_truncated && truncated {
            self.ensure_temp_file();
        }
        Snapshot {
            content: t.content.clone(),
            truncation: t,
            full_output_path: self.temp_path.clone(),
        }
    }

    /// Flushes and closes the full-output file; the first write error, if any.
    pub(crate) fn close_temp_file(&mut self) -> Result<(), std::io::Error> {
        if let Some(mut file) = self.temp_file.take() {
            file.flush()?;
        }
        match self.temp_error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    pub(crate) fn last_line_bytes(&self) -> usize {
        self.current_line_bytes
    }

    fn should_use_temp_file(&self) -> bool {
        self.total_raw_bytes > self.max_bytes
            || self.total_decoded_bytes > self.max_bytes
            || self.total_lines > self.max_lines
    }

    fn ensure_temp_file(&mut self) {
        if self.temp_path.is_some() {
            return;
        }
        let path = temp_dir().join(format!("{}-{}.log", self.prefix, random_hex16()));
        self.temp_path = Some(path.clone());
        match File::create(&path) {
            Ok(file) => {
                let mut writer = BufWriter::with_capacity(256 * 1024, file);
                for chunk in std::mem::take(&mut self.raw_chunks) {
                    if let Err(e) = writer.write_all(&chunk) {
                        self.temp_error.get_or_insert(e);
                    }
                }
                self.temp_file = Some(writer);
            }
            Err(e) => {
                self.raw_chunks.clear();
                self.temp_error = Some(e);
            }
        }
    }

    fn write_temp(&mut self, data: &[u8]) {
        if let Some(file) = &mut self.temp_file
            && let Err(e) = file.write_all(data)
        {
            self.temp_error.get_or_insert(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_characters_decode_across_chunks() {
        let mut acc = OutputAccumulator::new(10, 100, "pi-test");
        let bytes = "é\n".as_bytes();
        acc.append(&bytes[..1]);
        acc.append(&bytes[1..]);
        acc.finish();
        let snap = acc.snapshot(false);
        assert_eq!(snap.content, "é\n");
        assert_eq!(snap.truncation.total_lines, 1);
        assert!(!snap.truncation.truncated);
    }

    #[test]
    fn memory_stays_bounded() {
        let mut acc = OutputAccumulator::new(2000, 50 * 1024, "pi-test");
        let line = vec![b'x'; 1023]
            .into_iter()
            .chain([b'\n'])
            .collect::<Vec<u8>>();
        for _ in 0..2000 {
            acc.append(&line);
        }
        acc.finish();
        assert!(acc.tail.len() <= 4 * 100 * 1024);
        let snap = acc.snapshot(true);
        assert!(snap.truncation.truncated);
        let path = snap.full_output_path.clone().unwrap();
        acc.close_temp_file().unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 2000 * 1024);
        std::fs::remove_file(path).unwrap();
    }
}
