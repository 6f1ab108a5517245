//! What both backends share: reading a stored verdict and the checks of a decision.

use pi_tool::durable::{Refusal, StoreError, Verdict};

/// A stored verdict, or the error that names the bad row.
pub(crate) fn verdict(text: &str, run_id: &str, call_id: &str) -> Result<Verdict, StoreError> {
    Verdict::parse(text).ok_or_else(|| {
        StoreError::Corrupt(format!(
            "approval of call {call_id} in run {run_id} has verdict {text:?} (expected approve or deny)"
        ))
    })
}

/// The checks of a decision against the stored approval: its digest, whether it was
/// decided, whether it expired.
pub(crate) fn check_decision(
    stored_digest: &str,
    decided: bool,
    expires_at_ms: i64,
    digest: &str,
    at_ms: i64,
) -> Result<(), StoreError> {
    if stored_digest != digest {
        return Err(StoreError::Refused(Refusal::WrongDigest));
    }
    if decided {
        return Err(StoreError::Refused(Refusal::AlreadyDecided));
    }
    if at_ms > expires_at_ms {
        return Err(StoreError::Refused(Refusal::Expired));
    }
    Ok(())
}

/// The checks of the use of an approval by a call that starts.
pub(crate) fn check_use(
    stored_digest: &str,
    verdict: Option<Verdict>,
    used: bool,
    digest: &str,
) -> Result<(), StoreError> {
    if stored_digest != digest {
        return Err(StoreError::Refused(Refusal::WrongDigest));
    }
    match verdict {
        None => Err(StoreError::Refused(Refusal::Unknown)),
        Some(Verdict::Deny) => Err(StoreError::Refused(Refusal::Denied)),
        Some(Verdict::Approve) if used => Err(StoreError::Refused(Refusal::AlreadyUsed)),
        Some(Verdict::Approve) => Ok(()),
    }
}

/// A JSON column's value, or the error that names the bad row.
pub(crate) fn json(text: &str, what: &str) -> Result<serde_json::Value, StoreError> {
    serde_json::from_str(text)
        .map_err(|error| StoreError::Corrupt(format!("{what} is not JSON ({error})")))
}
