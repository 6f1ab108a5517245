//! Exactly-once markers (docs/durable-runs.md, "Exactly once"): a call a resumed batch or
//! a later batch of a resumed run executes, direct or nested, is marked started in the
//! store before `execute` and finished after, with its result, and each mark is a record
//! of the audit log.
//!
//! On a later resume of the same batch, a finished call's result is replayed and a
//! started one is never run again (the model, or the outer tool, reads that it was
//! interrupted), unless its own tool declares itself idempotent. A nested call's id is
//! its outer call's id, `/` and its number (`call_1/2`), so the same outer call running
//! again makes the same ids: a nested call that finished inside an idempotent outer call
//! that runs again is replayed, not run again, if it asks for the same thing (its
//! digest); asking for something else under a finished id is refused.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::policy::RunPolicy;
use crate::durable::{
    AuditEvent, AuditKind, CallMark, DurableStore, canonicalize, now_ms, sha256_hex,
};
use pi_tool_core::{AgentTool, CallFailure, JsonToolResult, ToolErrorKind};

/// `error.type` of a call the store refused or that was interrupted.
pub(super) const FAILED: CallFailure = CallFailure::of(ToolErrorKind::Failed);

/// Marks one call started before it executes and finished after (see the module docs).
pub(super) struct Marker {
    store: Arc<dyn DurableStore>,
    run_id: String,
    call_id: String,
    tool_name: String,
    idempotent: bool,
    /// The approval a direct call uses up as it starts.
    approval: Option<String>,
    /// A nested call's outer call and its digest: its records name both, and a replay
    /// of its id must be of the same digest.
    nested: Option<(Arc<str>, String)>,
    prior: Option<CallMark>,
    /// Nested calls below this one that started and never finished: if this call is
    /// interrupted, so are they, and their records say it.
    open_below: Vec<String>,
}

impl Marker {
    /// The marker of `call_id`, a call of `tool`, given the marks the run had when it
    /// was claimed.
    pub(super) fn new(
        (store, run_id): (Arc<dyn DurableStore>, &str),
        call_id: &str,
        tool: &dyn AgentTool,
        marks: &HashMap<String, CallMark>,
    ) -> Self {
        let below = format!("{call_id}/");
        let mut open_below: Vec<String> = marks
            .values()
            .filter(|mark| mark.finished.is_none() && mark.call_id.starts_with(&below))
            .map(|mark| mark.call_id.clone())
            .collect();
        open_below.sort();
        Marker {
            store,
            run_id: run_id.to_owned(),
            call_id: call_id.to_owned(),
            tool_name: tool.name().to_owned(),
            idempotent: tool.spec().annotations.idempotent == Some(true),
            approval: None,
            nested: None,
            prior: marks.get(call_id).cloned(),
            open_below,
        }
    }

    /// A direct call running under the approval of this digest.
    #[must_use]
    pub(super) fn approval(mut self, digest: Option<String>) -> Self {
        self.approval = digest;
        self
    }

    /// A nested call of `parent` whose validated call has this digest.
    #[must_use]
    pub(super) fn nested(mut self, parent: Arc<str>, digest: String) -> Self {
        self.nested = Some((parent, digest));
        self
    }

    fn event(&self, kind: AuditKind) -> AuditEvent {
        let mut event = AuditEvent::new(kind, &self.run_id, now_ms())
            .with("call", self.call_id.clone())
            .with("tool", self.tool_name.clone());
        if let Some(digest) = &self.approval {
            event = event.with("digest", digest.clone());
        }
        if let Some((parent, digest)) = &self.nested {
            event = event
                .with("parent", &**parent)
                .with("digest", digest.clone());
        }
        event
    }

    /// Runs `run` at most once across processes.
    pub(super) async fn run(
        self,
        run: impl std::future::Future<Output = (JsonToolResult, Option<CallFailure>)>,
    ) -> (JsonToolResult, Option<CallFailure>) {
        match &self.prior {
            Some(CallMark {
                finished: Some(saved),
                ..
            }) => return self.replay(saved),
            Some(_) if !self.idempotent => {
                let mut events = vec![self.event(AuditKind::Interrupted)];
                events.extend(
                    self.open_below
                        .iter()
                        .map(|id| interrupted_below(&self.run_id, id)),
                );
                if let Err(error) = self.store.append_audit(&events).await {
                    tracing::warn!(%error, call = %self.call_id, "the audit record of an interrupted call was not written");
                }
                return (
                    JsonToolResult::error(format!(
                        "Tool {} was interrupted: the process running it stopped before it finished, so it may have run. It was not run again.",
                        self.tool_name
                    )),
                    Some(FAILED),
                );
            }
            // Idempotent: run again; its started marker is there already.
            Some(_) => {
                let event = self.event(AuditKind::Started).with("again", true);
                if let Err(error) = self.store.append_audit(&[event]).await {
                    tracing::warn!(%error, call = %self.call_id, "the audit record of a re-run call was not written");
                }
            }
            None => {
                let started = self.event(AuditKind::Started);
                let begun = self
                    .store
                    .begin_call(
                        &self.run_id,
                        &self.call_id,
                        self.approval.as_deref(),
                        &started,
                    )
                    .await;
                if let Err(error) = begun {
                    return not_run(&self.tool_name, &error);
                }
            }
        }
        let (result, failure) = run.await;
        let mut saved = json!({"result": result, "isError": failure.is_some()});
        if let (Some((_, digest)), Value::Object(map)) = (&self.nested, &mut saved) {
            map.insert("digest".to_owned(), json!(digest));
        }
        let finished = self
            .event(AuditKind::Finished)
            .with("outcome", if failure.is_some() { "error" } else { "ok" })
            .with("resultDigest", sha256_hex(canonicalize(&saved).as_bytes()));
        if let Err(error) = self
            .store
            .end_call(&self.run_id, &self.call_id, &saved, &finished)
            .await
        {
            // The call ran; a resume would call it interrupted, never run it again.
            tracing::warn!(%error, call = %self.call_id, "a finished call's marker was not written");
        }
        (result, failure)
    }

    /// The result a finished call had: a direct call's by its id, a nested call's by its
    /// id and digest.
    fn replay(&self, saved: &Value) -> (JsonToolResult, Option<CallFailure>) {
        let tool = &self.tool_name;
        if let Some((_, digest)) = &self.nested
            && saved.get("digest").and_then(Value::as_str) != Some(digest.as_str())
        {
            return (
                JsonToolResult::error(format!(
                    "Tool {tool} was not run: nested call {} finished before with other arguments (its outer call ran again and asked for something else), and a call runs at most once",
                    self.call_id
                )),
                Some(FAILED),
            );
        }
        let result = saved
            .get("result")
            .cloned()
            .and_then(|r| serde_json::from_value::<JsonToolResult>(r).ok());
        match result {
            Some(result) => {
                let failed = saved.get("isError").and_then(Value::as_bool) == Some(true);
                (result, failed.then_some(FAILED))
            }
            None => (
                JsonToolResult::error(format!(
                    "Tool {tool} finished before, but its stored result cannot be read; it was not run again"
                )),
                Some(FAILED),
            ),
        }
    }
}

/// The error of a call the store did not let start.
pub(super) fn not_run(
    tool: &str,
    error: &dyn std::fmt::Display,
) -> (JsonToolResult, Option<CallFailure>) {
    (
        JsonToolResult::error(format!("Tool {tool} was not run: {error}")),
        Some(FAILED),
    )
}

/// The record of a nested call `id` cut short with the call above it.
fn interrupted_below(run_id: &str, id: &str) -> AuditEvent {
    let event = AuditEvent::new(AuditKind::Interrupted, run_id, now_ms()).with("call", id);
    match id.rsplit_once('/') {
        Some((parent, _)) => event.with("parent", parent),
        None => event,
    }
}

/// The arguments as the audit log keeps them: every string through the call policy's
/// redactor.
pub(super) fn redacted(value: &Value, policy: &RunPolicy) -> Value {
    let Some(redactor) = &policy.call.redactor else {
        return value.clone();
    };
    match value {
        Value::String(s) => Value::String(redactor.redact(s).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(|v| redacted(v, policy)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), redacted(v, policy)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A text the audit log or a person reads, through the call policy's redactor.
pub(super) fn redacted_text(text: &str, policy: &RunPolicy) -> String {
    match &policy.call.redactor {
        Some(redactor) => redactor.redact(text).into_owned(),
        None => text.to_owned(),
    }
}
