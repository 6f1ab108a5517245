//! Safety helpers for tool authors: paths, commands, result size, secrets.
//!
//! # Threat model
//!
//! A tool's arguments are written by the model, and the model writes what its context
//! steers it to: the user's request, but also text from web pages, files, issue
//! comments and earlier tool results that an attacker may control (prompt injection).
//! So **every argument is untrusted, even after schema validation**. The schema checks
//! shape, bounds and literals; it cannot decide whether a customer id, a path, a URL or
//! a command is one *this caller* may touch. Those decisions belong next to the side
//! effect, in the tool, re-checked there on every call (Pi's `tool_call` hooks may even
//! rewrite arguments after validation, without validating again). And what a tool
//! returns goes back into the model's context, where it is read, repeated and acted on:
//! it must not carry the host's secrets, and it must not be so large that it drowns
//! the conversation.
//!
//! The helpers, each answering one part of that:
//!
//! - [`resolve_existing_path_inside_root`] (and [`resolve_existing_path_inside_root_sync`]):
//!   a model-given path resolved through symlinks and `..`, refused unless it names an
//!   existing file inside the project root (Pi's custom-tool page's `resolveExistingPathInsideRoot`).
//! - [`resolve_new_path_inside_root`] (and its `_sync` twin): the same for a path a tool
//!   is about to create or overwrite: the parent resolved and checked, the last component
//!   a plain name, a symlink at the target refused ([`FinalSymlink`] can follow it
//!   inside the root instead).
//! - [`PathRoot`]: both checks against a root the caller names in the errors
//!   (`Path leaves the notes directory`), instead of "project root".
//! - [`Command`]: a fixed program with an argument array (never a shell string), an
//!   allowlisted environment, bounded output, a timeout, and a kill on abort.
//! - [`ResultBudget`]: results (and progress) cut to a line and byte limit with a note
//!   telling the model how to get more, while the full text stays in `details`.
//! - [`Redactor`]: configured secrets and credential-shaped text replaced with
//!   `[REDACTED]`; the runtime applies it to every error message the model reads.
//! - [`Sandbox`]: what a process started for a tool may read, write and reach, derived
//!   from the tool's declared effects and enforced by the kernel (Linux: Landlock,
//!   namespaces, seccomp); [`Command::sandbox`] takes one, and [`spawn_contained`] is the
//!   one spawn (and [`ProcessGroup`] the one killer) of every process pi-tool starts.
//!   What it refuses is a [`SandboxViolation`], which a host may turn into a question:
//!   widen the profile for that one call ([`Widening`]) and run it again once
//!   ([`SandboxScope`]).
//!
//! # Example
//!
//! A search tool that takes a model-given directory and pattern: the directory must be
//! inside the project, the pattern is one `argv` entry (after `--`, so it cannot be an
//! option either), the output is bounded twice (bytes captured, then lines shown), and
//! the host's token never reaches the model.
//!
//! ```
//! use std::time::Duration;
//! use pi_tool_core::safety::{Command, Redactor, ResultBudget, resolve_existing_path_inside_root};
//! use pi_tool_core::{AbortSignal, AgentToolResult, ToolError};
//! use pi_tool_core::context::ExtensionContext;
//!
//! async fn search(
//!     ctx: &ExtensionContext,
//!     dir: &str,
//!     pattern: &str,
//!     offset: usize,
//!     signal: &AbortSignal,
//! ) -> Result<AgentToolResult<pi_tool_core::safety::Truncated<()>>, ToolError> {
//!     let dir = resolve_existing_path_inside_root(ctx.cwd(), dir).await?;
//!     let output = Command::new("grep")
//!         .args(["-rn", "--", pattern, "."])
//!         .current_dir(&dir)
//!         .timeout(Duration::from_secs(20))
//!         .output_limit(1 << 20)
//!         .run(signal)
//!         .await?;
//!     let lines: String = output.stdout.text.lines().skip(offset).flat_map(|l| [l, "\n"]).collect();
//!     let budget = ResultBudget::new(20 * 1024, 200);
//!     Ok(budget.apply_from(AgentToolResult::text(lines, ()), offset))
//! }
//!
//! // In the host: built once from configuration, applied to every error message.
//! let redactor = Redactor::new(["host-api-token-from-config"]).expect("long enough");
//! let error = ToolError::new("upstream said: bad key host-api-token-from-config");
//! assert_eq!(redactor.redact_error(error).message(), "upstream said: bad key [REDACTED]");
//! ```
//!
//! The path checks make the common tools safe against a misled model; a hostile local
//! user racing the filesystem, or a program run with model arguments that is itself
//! dangerous (`sh`, `python`, `find -exec`), needs OS-level isolation: run it inside a
//! [`Sandbox`].

mod budget;
mod command;
mod new_path;
mod path;
mod redact;
mod sandbox;

pub use budget::{Continuation, ResultBudget, TrimmedText, Truncated, TruncatedBy, Truncation};
pub use command::{
    CapturedOutput, Command, CommandOutput, DEFAULT_ENV_ALLOWLIST, DEFAULT_OUTPUT_LIMIT,
    ERROR_STDERR_BYTES,
};
pub use new_path::{FinalSymlink, resolve_new_path_inside_root, resolve_new_path_inside_root_sync};
pub use path::{
    MAX_PATH_INPUT_BYTES, PathRoot, ResolvedPath, resolve_existing_path_inside_root,
    resolve_existing_path_inside_root_sync,
};
pub use redact::{MIN_SECRET_CHARS, REDACTED, Redactor, RedactorBuilder, RedactorError};
pub use sandbox::{
    ContainedChild, Mechanism, ProcessGroup, ProcessLeader, SYSTEM_READ_DIRS, Sandbox,
    SandboxError, SandboxScope, SandboxViolation, SpawnError, ViolationKind, Widening,
    spawn_contained,
};
