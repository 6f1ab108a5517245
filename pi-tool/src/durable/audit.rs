//! The audit log's chain: each record holds the hash of the one before, so an edited,
//! deleted or reordered record breaks the chain at that record.
//!
//! ```text
//! hash(n) = hex(SHA-256(prev(n) "\n" n "\n" JCS(body(n))))     prev(1) = 64 zeros
//! ```
//!
//! A store appends records under its own lock (one writer at a time computes the next
//! hash) and [`verify_chain`] recomputes every hash in order. What the chain does not
//! show: a log rewritten from the edited record to its end by someone who can write the
//! store and run this code, or records cut from the end; compare [`ChainReport::head`]
//! with a copy kept elsewhere for that (docs/durable-runs.md, "Threat model").

use serde_json::{Map, Value, json};

use super::digest::sha256_hex;
use super::jcs::canonicalize;

/// The `prev` of the first record.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What happened, as the audit log names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuditKind {
    /// A call needs a decision (tool, digest, redacted arguments).
    Requested,
    /// A person decided (approve or deny, by whom, the reason, when).
    Decided,
    /// A call is about to execute.
    Started,
    /// A call finished (its outcome and the digest of its result).
    Finished,
    /// A call started before a crash and was not run again.
    Interrupted,
    /// A pending decision expired.
    Expired,
    /// A suspended run was taken up again.
    Resumed,
    /// A run was suspended, waiting for decisions.
    Suspended,
}

impl AuditKind {
    /// The `kind` field's text.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditKind::Requested => "requested",
            AuditKind::Decided => "decided",
            AuditKind::Started => "started",
            AuditKind::Finished => "finished",
            AuditKind::Interrupted => "interrupted",
            AuditKind::Expired => "expired",
            AuditKind::Resumed => "resumed",
            AuditKind::Suspended => "suspended",
        }
    }
}

/// One event to append: its body is a JSON object with `kind`, `run`, `at` (Unix
/// milliseconds) and the kind's fields.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEvent {
    body: Map<String, Value>,
}

impl AuditEvent {
    /// An event of `kind` in run `run_id` at `at_ms`.
    pub fn new(kind: AuditKind, run_id: &str, at_ms: i64) -> Self {
        let mut body = Map::new();
        body.insert("kind".into(), json!(kind.as_str()));
        body.insert("run".into(), json!(run_id));
        body.insert("at".into(), json!(at_ms));
        AuditEvent { body }
    }

    /// Adds a field (`call`, `tool`, `digest`, `arguments`, `verdict`, `by`, ...).
    #[must_use]
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.body.insert(key.to_owned(), value.into());
        self
    }

    /// The body as JSON.
    pub fn body(&self) -> &Map<String, Value> {
        &self.body
    }

    /// The canonical (JCS) text a store keeps.
    pub fn canonical(&self) -> String {
        canonicalize(&Value::Object(self.body.clone()))
    }
}

/// One stored record of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    /// Its position, from 1, without gaps.
    pub seq: i64,
    /// The hash of the record before ([`GENESIS`] for the first).
    pub prev: String,
    /// This record's hash.
    pub hash: String,
    /// The body's JSON text as stored.
    pub body: String,
}

/// The hash of record `seq` whose body's canonical text is `canonical_body`.
pub fn chain_hash(prev: &str, seq: i64, canonical_body: &str) -> String {
    let mut input = String::with_capacity(prev.len() + canonical_body.len() + 24);
    input.push_str(prev);
    input.push('\n');
    input.push_str(&seq.to_string());
    input.push('\n');
    input.push_str(canonical_body);
    sha256_hex(input.as_bytes())
}

/// The record that follows `prev_record` (`None`: the first) with this body.
pub fn next_record(prev_record: Option<(i64, &str)>, event: &AuditEvent) -> AuditRecord {
    let (prev_seq, prev_hash) = prev_record.unwrap_or((0, GENESIS));
    let seq = prev_seq + 1;
    let body = event.canonical();
    AuditRecord {
        seq,
        prev: prev_hash.to_owned(),
        hash: chain_hash(prev_hash, seq, &body),
        body,
    }
}

/// What [`verify_chain`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainReport {
    /// How many records were read.
    pub records: usize,
    /// The first record that breaks the chain, and why (`None`: the chain holds).
    pub first_bad: Option<BadRecord>,
    /// The hash of the last good record ([`GENESIS`] for an empty log): keep it elsewhere
    /// to detect records cut from the end.
    pub head: String,
}

impl ChainReport {
    /// Whether every record is where the chain says.
    pub fn ok(&self) -> bool {
        self.first_bad.is_none()
    }
}

/// A record that breaks the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRecord {
    /// Its `seq` as stored.
    pub seq: i64,
    /// What is wrong: `seq N follows M` (deleted or reordered), `prev does not match`, `hash
    /// does not match the body` (edited), `body is not a JSON object`.
    pub reason: String,
}

/// Recomputes the chain over `records` in their stored order (by `seq`).
pub fn verify_chain(records: &[AuditRecord]) -> ChainReport {
    let mut prev = GENESIS.to_owned();
    for (expected_seq, record) in (1i64..).zip(records) {
        let bad = |reason: String| ChainReport {
            records: records.len(),
            first_bad: Some(BadRecord {
                seq: record.seq,
                reason,
            }),
            head: prev.clone(),
        };
        if record.seq != expected_seq {
            return bad(format!(
                "seq {} follows {} (a record was deleted or moved)",
                record.seq,
                expected_seq - 1
            ));
        }
        if record.prev != prev {
            return bad("prev does not match the hash of the record before".to_owned());
        }
        let canonical = match serde_json::from_str::<Value>(&record.body) {
            Ok(value @ Value::Object(_)) => canonicalize(&value),
            _ => return bad("body is not a JSON object".to_owned()),
        };
        if chain_hash(&prev, record.seq, &canonical) != record.hash {
            return bad("hash does not match the body (the record was edited)".to_owned());
        }
        prev.clone_from(&record.hash);
    }
    ChainReport {
        records: records.len(),
        first_bad: None,
        head: prev,
    }
}

/// One JSON line per record: `{"seq", "prev", "hash", "body"}` with the body as JSON.
pub fn export_jsonl(records: &[AuditRecord]) -> String {
    let mut out = String::new();
    for record in records {
        let body = serde_json::from_str::<Value>(&record.body)
            .unwrap_or_else(|_| Value::String(record.body.clone()));
        let line =
            json!({"seq": record.seq, "prev": record.prev, "hash": record.hash, "body": body});
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(n: i64) -> Vec<AuditRecord> {
        let mut records: Vec<AuditRecord> = Vec::new();
        for i in 0..n {
            let event = AuditEvent::new(AuditKind::Started, "run", i).with("call", format!("c{i}"));
            let prev = records.last().map(|r| (r.seq, r.hash.as_str()));
            let record = next_record(prev, &event);
            records.push(record);
        }
        records
    }

    #[test]
    fn an_untouched_chain_verifies() {
        let records = log(5);
        let report = verify_chain(&records);
        assert!(report.ok());
        assert_eq!(report.records, 5);
        assert_eq!(report.head, records[4].hash);
    }

    #[test]
    fn an_edit_a_deletion_and_a_swap_each_name_the_first_bad_record() {
        let mut edited = log(5);
        edited[2].body = edited[2].body.replace("c2", "c9");
        assert_eq!(verify_chain(&edited).first_bad.unwrap().seq, 3);

        let mut deleted = log(5);
        deleted.remove(1);
        assert_eq!(verify_chain(&deleted).first_bad.unwrap().seq, 3);

        let mut swapped = log(5);
        swapped.swap(1, 3);
        assert_eq!(verify_chain(&swapped).first_bad.unwrap().seq, 4);

        // Renumbering a swap keeps seq in order; the prev links still break.
        let mut renumbered = log(5);
        let (a, b) = (renumbered[1].clone(), renumbered[2].clone());
        renumbered[1] = AuditRecord { seq: 2, ..b };
        renumbered[2] = AuditRecord { seq: 3, ..a };
        assert_eq!(verify_chain(&renumbered).first_bad.unwrap().seq, 2);
    }
}
