//! One tool call's side of the sandbox, for the host that runs it: what its sandboxed
//! processes were refused, and the widening the host granted it for one re-run.
//!
//! The host runs a call's `execute` inside a [`SandboxScope`]; [`SandboxViolation::find`]
//! (which [`Command`](crate::safety::Command) and `pi-tool-coding`'s `bash` call) reports
//! into it, and [`Sandbox::for_current_call`] (which both apply to their profile before
//! they spawn) reads its grant. The scope is a task-local value of the call's future, so
//! it reaches what the call runs in that future and nothing else: not a later call, not
//! a concurrent one, not a task the tool spawns.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use super::Sandbox;
use super::violation::{self, SandboxViolation};
use super::widen::Widening;

tokio::task_local! {
    static CURRENT: SandboxScope;
}

/// The sandbox side of one tool call (see the module docs): a host that offers to widen
/// a call's sandbox runs the call inside one, reads what was refused
/// ([`violations`](Self::violations)) and what that asks for
/// ([`widenings`](Self::widenings)), and, once a person approved, runs the call again
/// once inside [`SandboxScope::granting`] those widenings.
///
/// ```
/// use pi_tool_core::safety::{Sandbox, SandboxScope, SandboxViolation, Widening};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let sandbox = Sandbox::for_root("/work/project");
/// let first = SandboxScope::new();
/// first
///     .run(async {
///         // What a sandboxed run reports (`Command` and `bash` call `find`).
///         SandboxViolation::find("curl: (7) Network is unreachable", None, &sandbox, "/".as_ref());
///     })
///     .await;
/// assert_eq!(first.widenings(), [Widening::Network]);
///
/// // Approved: the re-run, and only the re-run, gets the network.
/// let again = SandboxScope::granting(first.widenings());
/// let widened = again.run(async { sandbox.for_current_call() }).await;
/// assert!(widened.allows_network());
/// assert!(!sandbox.for_current_call().allows_network());
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct SandboxScope {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    granted: Vec<Widening>,
    found: Mutex<Found>,
}

#[derive(Debug, Default)]
struct Found {
    violations: Vec<SandboxViolation>,
    widenings: Vec<Widening>,
}

impl SandboxScope {
    /// A scope that grants nothing: the call's first run.
    pub fn new() -> Self {
        Self::default()
    }

    /// A scope whose sandboxed processes run with `widenings` added to their profile
    /// (each within the rule of [`Sandbox::widening_for`]): the one re-run a person
    /// approved.
    pub fn granting(widenings: impl IntoIterator<Item = Widening>) -> Self {
        SandboxScope {
            inner: Arc::new(Inner {
                granted: widenings.into_iter().collect(),
                found: Mutex::default(),
            }),
        }
    }

    /// Runs `future` (a call's `execute`) inside this scope.
    pub async fn run<F: Future>(&self, future: F) -> F::Output {
        CURRENT.scope(self.clone(), future).await
    }

    /// What the call's sandboxes refused so far, each once, in order.
    pub fn violations(&self) -> Vec<SandboxViolation> {
        self.found().violations.clone()
    }

    /// The widenings those refusals ask for ([`Sandbox::widening_for`]), each once, in
    /// order: empty when none can be widened.
    pub fn widenings(&self) -> Vec<Widening> {
        self.found().widenings.clone()
    }

    /// The widenings this scope grants.
    pub fn granted(&self) -> &[Widening] {
        &self.inner.granted
    }

    fn found(&self) -> std::sync::MutexGuard<'_, Found> {
        // A panic while recording leaves whole entries: the data stays usable.
        self.inner
            .found
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn record(&self, violations: &[SandboxViolation], sandbox: &Sandbox) {
        let mut found = self.found();
        for violation in violations {
            if !found.violations.contains(violation) {
                found.violations.push(violation.clone());
            }
            if let Some(widening) = sandbox.widening_for(violation)
                && !found.widenings.contains(&widening)
            {
                found.widenings.push(widening);
            }
        }
    }
}

impl Sandbox {
    /// This profile with the widenings the host granted the tool call running now
    /// ([`SandboxScope::granting`]); the profile itself in any other call, and outside
    /// one. Whatever spawns a sandboxed process for a call applies it first, as
    /// [`Command`](crate::safety::Command) and `pi-tool-coding`'s `bash` do.
    pub fn for_current_call(&self) -> Sandbox {
        CURRENT
            .try_with(|scope| {
                scope
                    .granted()
                    .iter()
                    .fold(self.clone(), |sandbox, widening| sandbox.widen(widening))
            })
            .unwrap_or_else(|_| self.clone())
    }
}

impl SandboxViolation {
    /// The violations a sandboxed call's `output` (stdout and stderr, in any order) and
    /// its end (`signal`: the signal that killed it, if one did) show, each once, in
    /// order of appearance, for the profile the process ran with (`sandbox`). `cwd`
    /// resolves relative paths.
    ///
    /// Each is also a `tracing` event (level WARN, target `pi_tool::sandbox`, fields
    /// `kind` and `path`) in the current span, which in a tool's call is its
    /// `execute_tool` span, and is reported to the call's [`SandboxScope`] if the host
    /// runs it in one.
    pub fn find(output: &str, signal: Option<i32>, sandbox: &Sandbox, cwd: &Path) -> Vec<Self> {
        let found = violation::classify(output, signal, sandbox, cwd);
        for violation in &found {
            tracing::warn!(
                target: "pi_tool::sandbox",
                kind = ?violation.kind,
                path = ?violation.path,
                "{}",
                violation.message()
            );
        }
        if !found.is_empty() {
            // Outside a scope there is nobody to report to.
            let _ = CURRENT.try_with(|scope| scope.record(&found, sandbox));
        }
        found
    }
}
