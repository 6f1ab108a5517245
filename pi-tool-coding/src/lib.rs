//! Pi 0.85.0's built-in coding tools — `read`, `bash`, `edit`, `write`, `grep`, `find` and
//! `ls` — as a [pi-tool](https://docs.rs/pi-tool) tool pack: the example of a published pack.
//!
//! ```
//! use pi_tool_core::context::ExtensionContext;
//! use pi_tool_core::{AbortSignal, OnUpdate, ToolInvocation, json};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // The seven tools, with Pi's names, schemas, descriptions and prompt lines.
//! let pack = pi_tool_coding::pack();
//! assert_eq!(pack.names().collect::<Vec<_>>(), ["read", "bash", "edit", "write", "grep", "find", "ls"]);
//!
//! // One call, as a host makes it: Pi's coercion and validation, then the tool, with the
//! // paths resolved against the call's context (Pi's `ctx.cwd`).
//! let read = pack.get("read").expect("read is in the pack");
//! let args = json!({"path": "README.md", "limit": "1"}); // "1" becomes 1, as in Pi
//! let args = read.check_arguments(&args).map_err(|e| e.message().to_owned())?;
//! let call = ToolInvocation::new("call_1", &*args, AbortSignal::never(), OnUpdate::none())
//!     .with_context(ExtensionContext::builder(env!("CARGO_MANIFEST_DIR")).build());
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! let result = runtime.block_on(read.execute(call)).map_err(|e| e.message().to_owned())?;
//! let text = result.text_content();
//! assert!(text.starts_with("# pi-tool-coding\n\n["));
//! assert!(text.ends_with("more lines in file. Use offset=2 to continue.]"));
//! # Ok(())
//! # }
//! ```
//!
//! # What each tool does
//!
//! Each tool is Pi's, ported: the same parameters (the same JSON schema), label,
//! description, prompt snippet and guidelines; the same output texts, truncation limits
//! and notes (2000 lines or 50 KB, the "Use offset=N to continue" hints); the same
//! `details`; the same error texts, down to Node's `ENOENT: no such file or directory,
//! access '…'`. `conformance/pi-tools/` holds Pi's recordings of 76 scenarios, and the
//! `pi-tool-conformance` test compares our output with them byte for byte.
//!
//! | tool | effect | what it does |
//! | --- | --- | --- |
//! | `read` | read-only | a text file's lines (`offset`/`limit`), or an image (JPEG, PNG, GIF, WebP; BMP converted to PNG), resized to 2000×2000 |
//! | `bash` | destructive | a `bash -c` command in its own process group: output streamed as progress (at most one update per 100 ms), the last 2000 lines / 50 KB kept, the whole output in `$TMPDIR/pi-bash-*.log` when cut, `timeout` in seconds, the group killed on abort |
//! | `edit` | destructive | exact replacements (`edits[]`), with Pi's fuzzy fallback (trailing white space, Unicode quotes, dashes and spaces), line endings and BOM kept, a numbered diff and a unified patch in `details` |
//! | `write` | destructive | a whole file, parent directories created |
//! | `grep` | read-only | ripgrep's own crates in process: `.gitignore` (inside a git work tree), `.ignore`, hidden files, `glob`, `ignoreCase`, `literal`, `context`, `limit` |
//! | `find` | read-only | names matching a glob, as `fd` finds them for Pi (`.gitignore` applied, `/` after directories) |
//! | `ls` | read-only | one directory, sorted as Pi sorts (ICU collation of the lower-cased names) |
//!
//! Each tool declares its effects for hosts that show or gate them (MCP clients read
//! them as annotations): `read`, `grep`, `find` and `ls` are read-only, `edit` and
//! `write` destructive, and all six act on local files only (`open_world = false`);
//! `bash` is destructive and, since a command may reach anything, left open-world. Each
//! has a title for people (`Read file`, `Run bash command`, `Edit file`, `Write file`,
//! `Search file contents`, `Find files`, `List directory`); the label stays Pi's.
//!
//! `write` and `edit` calls on one file run one after the other (Pi's mutation queue);
//! a file is replaced through a temporary file and a rename, so an interrupted call never
//! leaves half a file.
//!
//! # Options
//!
//! [`CodingTools::new`] with [`CodingOptions`] sets what Pi's `createTool(name, cwd,
//! options)` sets: `autoResizeImages` for `read`, `commandPrefix` and `shellPath` for
//! `bash`. [`pack`] is `CodingTools::new(CodingOptions::default()).pack()`.
//!
//! # Confined to a directory
//!
//! Pi's tools take any path (absolute, `~/...`, `../..`), and so does [`pack`].
//! [`pack_confined`] (or [`CodingTools::pack_confined`]) is the pack for a model you do
//! not trust with the whole file system: every path must stay inside the root once
//! resolved, symbolic links followed, or the call fails with [`OUTSIDE_ROOT`]. A shell
//! command cannot be confined by its text, so `bash` runs in a kernel sandbox
//! ([`BashSandbox`]): it writes only the root and a private temporary directory, reads
//! only those and the system's directories, has no network, and nothing it starts
//! outlives the call (`docs/sandbox.md` in the repository).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let root = std::env::temp_dir();
//! let pack = pi_tool_coding::pack_confined(&root);
//! assert_eq!(pack.names().collect::<Vec<_>>(), ["read", "bash", "edit", "write", "grep", "find", "ls"]);
//! # Ok(())
//! # }
//! ```
//!
//! # Where the pack differs from Pi
//!
//! `docs/differences-from-pi.md` in the repository lists each difference and its test: a
//! line cut by `grep` inside a surrogate pair ends in U+FFFD (JavaScript keeps a lone
//! surrogate), resized images are encoded by the `image` crate (same sizes, other bytes),
//! files are replaced rather than rewritten in place, and `bash` exposes no `PI_*` session
//! variables (a pack does not know the session's id).

mod bash;
mod confine;
mod diff;
mod edit;
mod find;
mod grep;
mod image;
mod js;
mod ls;
mod output;
mod paths;
mod queue;
mod read;
mod shape;
mod truncate;
mod write;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_tool_core::context::ExtensionContext;
use pi_tool_core::pack::{ToolOwner, ToolPack};
use pi_tool_core::safety::Sandbox;
use pi_tool_core::{
    AbortSignal, AgentToolResult, Content, IntoAgentTool, OnUpdate, ToolError, pi_tools,
};

pub use bash::{BashDetails, BashParams};
pub use confine::OUTSIDE_ROOT;
pub use edit::{EditDetails, EditItem, EditParams};
pub use find::{FindDetails, FindParams};
pub use grep::{GrepDetails, GrepParams};
pub use ls::{LsDetails, LsParams};
pub use paths::resolve_to_cwd;
pub use read::{ReadDetails, ReadParams};
pub use truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, GREP_MAX_LINE_LENGTH, TruncatedOutput};
pub use write::WriteParams;

/// The options Pi's `createTool(name, cwd, options)` takes, for the JSON-serialisable
/// part (no custom `operations` or `spawnHook`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CodingOptions {
    /// `read`: resize images to at most 2000×2000 pixels and 4.5 MB (Pi's
    /// `autoResizeImages`, default `true`).
    pub auto_resize_images: bool,
    /// `bash`: a line run before every command (Pi's `commandPrefix`).
    pub command_prefix: Option<String>,
    /// `bash`: the shell to run instead of `/bin/bash` (Pi's `shellPath`).
    pub shell_path: Option<PathBuf>,
    /// `bash`: the agent directory whose `bin` goes first on `PATH` (Pi's
    /// `PI_CODING_AGENT_DIR`, default `~/.pi/agent`); `None` reads the environment at
    /// each call.
    pub agent_dir: Option<PathBuf>,
    /// `bash`: the kernel sandbox each command runs in (not in Pi; `None`, the default,
    /// is Pi's unconfined shell).
    pub sandbox: Option<BashSandbox>,
}

/// The sandbox `bash` runs its commands in
/// ([`Sandbox`], enforced by the kernel).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BashSandbox {
    /// Each call confined to the working directory of its context (a session's cwd is
    /// its root): [`Sandbox::for_root`](pi_tool_core::safety::Sandbox::for_root), no
    /// network.
    Cwd,
    /// This profile for every call.
    Profile(Sandbox),
}

impl Default for CodingOptions {
    fn default() -> Self {
        CodingOptions {
            auto_resize_images: true,
            command_prefix: None,
            shell_path: None,
            agent_dir: None,
            sandbox: None,
        }
    }
}

impl CodingOptions {
    /// Sets [`auto_resize_images`](Self::auto_resize_images).
    #[must_use]
    pub fn auto_resize_images(mut self, on: bool) -> Self {
        self.auto_resize_images = on;
        self
    }

    /// Sets [`command_prefix`](Self::command_prefix).
    #[must_use]
    pub fn command_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.command_prefix = Some(prefix.into());
        self
    }

    /// Sets [`sandbox`](Self::sandbox).
    #[must_use]
    pub fn sandbox(mut self, sandbox: BashSandbox) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// Sets [`shell_path`](Self::shell_path).
    #[must_use]
    pub fn shell_path(mut self, shell: impl Into<PathBuf>) -> Self {
        self.shell_path = Some(shell.into());
        self
    }

    /// Sets [`agent_dir`](Self::agent_dir).
    #[must_use]
    pub fn agent_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.agent_dir = Some(dir.into());
        self
    }
}

/// The coding tools sharing one set of [`CodingOptions`].
#[derive(Debug, Default)]
pub struct CodingTools {
    options: CodingOptions,
}

async fn blocking<T: Send + 'static>(
    signal: &AbortSignal,
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    // Pi's read-only tools reject as soon as the signal fires, whatever the file system
    // is doing; the blocking work then finishes unobserved.
    let task = tokio::task::spawn_blocking(f);
    tokio::select! {
        joined = task => joined.map_err(|e| ToolError::new(format!("Tool task failed: {e}")))?,
        () = signal.token().cancelled() => Err(ToolError::new("Operation aborted")),
    }
}

/// `grep`, `find` and `ls`: a walk of the file system against the call's directory, on a
/// blocking thread, whose text is the result's one content block.
async fn listing<D: Send + 'static>(
    signal: AbortSignal,
    ctx: &ExtensionContext,
    walk: impl FnOnce(&std::path::Path, &AbortSignal) -> Result<(String, D), ToolError> + Send + 'static,
) -> Result<AgentToolResult<D>, ToolError> {
    if signal.is_aborted() {
        return Err(aborted());
    }
    let cwd = ctx.cwd().to_path_buf();
    let inner = signal.clone();
    let (text, details) = blocking(&signal, move || walk(&cwd, &inner)).await?;
    Ok(AgentToolResult::new(vec![Content::text(text)], details))
}

fn aborted() -> ToolError {
    ToolError::new("Operation aborted")
}

#[pi_tools]
impl CodingTools {
    /// Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.
    #[pi_tool(
        name = "read",
        label = "read",
        title = "Read file",
        prompt_snippet = "Read file contents",
        prompt_guidelines = ["Use read to examine files instead of cat or sed."],
        read_only,
        open_world = false
    )]
    pub async fn read(
        &self,
        params: ReadParams,
        signal: AbortSignal,
        ctx: ExtensionContext,
    ) -> Result<AgentToolResult<Option<ReadDetails>>, ToolError> {
        if signal.is_aborted() {
            return Err(aborted());
        }
        let auto_resize = self.options.auto_resize_images;
        let cwd = ctx.cwd().to_path_buf();
        let out = blocking(&signal, move || {
            let absolute = paths::resolve_read_path(&params.path, &cwd);
            read::read_blocking(
                &params.path,
                &absolute,
                params.offset,
                params.limit,
                auto_resize,
            )
        })
        .await?;
        Ok(AgentToolResult::new(out.content, out.details))
    }

    /// Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.
    #[pi_tool(
        name = "bash",
        label = "bash",
        title = "Run bash command",
        prompt_snippet = "Execute bash commands (ls, grep, find, etc.)",
        prompt_guidelines = ["You can inspect PI_* environment variables for current model and session details."],
        destructive
    )]
    pub async fn bash(
        &self,
        params: BashParams,
        signal: AbortSignal,
        on_update: OnUpdate<Option<BashDetails>>,
        ctx: ExtensionContext,
    ) -> Result<AgentToolResult<Option<BashDetails>>, ToolError> {
        let config = bash::ShellConfig {
            command_prefix: self.options.command_prefix.as_deref(),
            shell: self.options.shell_path.as_deref(),
            agent_dir: self.options.agent_dir.as_deref(),
            powershell: false,
            // With the widening the host granted this call, if it is a re-run.
            sandbox: match &self.options.sandbox {
                None => None,
                Some(BashSandbox::Cwd) => Some(Sandbox::for_root(ctx.cwd()).for_current_call()),
                Some(BashSandbox::Profile(sandbox)) => Some(sandbox.for_current_call()),
            },
        };
        bash::run(params, ctx.cwd(), config, signal, on_update).await
    }

    /// Execute a PowerShell command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.
    #[pi_tool(
        name = "powershell",
        label = "powershell",
        title = "Run PowerShell command",
        prompt_snippet = "Execute PowerShell commands",
        prompt_guidelines = ["You can inspect PI_* environment variables for current model and session details."],
        destructive
    )]
    pub async fn powershell(
        &self,
        params: BashParams,
        signal: AbortSignal,
        on_update: OnUpdate<Option<BashDetails>>,
        ctx: ExtensionContext,
    ) -> Result<AgentToolResult<Option<BashDetails>>, ToolError> {
        // Pi registers `powershell` on every platform and resolves PowerShell only on
        // Windows; this crate runs on Unix, where every call ends as Pi's does there:
        // the first empty update, the timeout and abort checks, then Pi's error.
        let config = bash::ShellConfig {
            command_prefix: self.options.command_prefix.as_deref(),
            shell: None,
            agent_dir: self.options.agent_dir.as_deref(),
            powershell: true,
            sandbox: None,
        };
        bash::run(params, ctx.cwd(), config, signal, on_update).await
    }

    /// Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.
    #[pi_tool(
        name = "edit",
        label = "edit",
        title = "Edit file",
        prompt_snippet = "Make precise file edits with exact text replacement, including multiple disjoint edits in one call",
        prompt_guidelines = [
            "Use edit for precise changes (edits[].oldText must match exactly)",
            "When changing multiple separate locations in one file, use one edit call with multiple entries in edits[] instead of multiple edit calls",
            "Each edits[].oldText is matched against the original file, not after earlier edits are applied. Do not emit overlapping or nested edits. Merge nearby changes into one edit.",
            "Keep edits[].oldText as small as possible while still being unique in the file. Do not pad with large unchanged regions."
        ],
        destructive,
        open_world = false
    )]
    pub async fn edit(
        &self,
        params: EditParams,
        signal: AbortSignal,
        ctx: ExtensionContext,
    ) -> Result<AgentToolResult<EditDetails>, ToolError> {
        if params.edits.is_empty() {
            return Err(ToolError::new(
                "Edit tool input is invalid. edits must contain at least one replacement.",
            ));
        }
        let absolute = paths::resolve_to_cwd(&params.path, ctx.cwd());
        let key = absolute.clone();
        queue::with_file_mutation_queue(&key, async move {
            if signal.is_aborted() {
                return Err(aborted());
            }
            let signal_in = signal.clone();
            // One blocking step, run to its end even if the caller stops waiting: the
            // queue stays held until the file is settled.
            let task =
                tokio::task::spawn_blocking(move || -> Result<(String, EditDetails), ToolError> {
                    let path = &params.path;
                    if path.contains('\0') {
                        return Err(ToolError::new(format!(
                            "Could not edit file: {path}. Error code: ERR_INVALID_ARG_VALUE."
                        )));
                    }
                    if let Err(e) = read::access(&absolute, libc::R_OK | libc::W_OK) {
                        if signal_in.is_aborted() {
                            return Err(aborted());
                        }
                        return Err(ToolError::new(format!(
                            "Could not edit file: {path}. Error code: {}.",
                            js::error_code(&e)
                        )));
                    }
                    let bytes = std::fs::read(&absolute).map_err(|e| {
                        let eisdir = e.raw_os_error() == Some(libc::EISDIR);
                        ToolError::new(js::fs_error(
                            &e,
                            if eisdir { "read" } else { "open" },
                            (!eisdir).then_some(absolute.as_path()),
                        ))
                    })?;
                    if signal_in.is_aborted() {
                        return Err(aborted());
                    }
                    let raw = String::from_utf8_lossy(&bytes);
                    let (bom, content) = match raw.strip_prefix('\u{FEFF}') {
                        Some(rest) => ("\u{FEFF}", rest),
                        None => ("", &*raw),
                    };
                    let ending = edit::detect_line_ending(content);
                    let normalized = edit::normalize_to_lf(content);
                    let new_content = edit::apply_edits(&normalized, &params.edits, path)?;
                    if signal_in.is_aborted() {
                        return Err(aborted());
                    }
                    let restored = if ending == "\r\n" {
                        new_content.replace('\n', "\r\n")
                    } else {
                        new_content.clone()
                    };
                    write::replace_file(&absolute, format!("{bom}{restored}").as_bytes())?;
                    if signal_in.is_aborted() {
                        return Err(aborted());
                    }
                    let message = format!(
                        "Successfully replaced {} block(s) in {path}.",
                        params.edits.len()
                    );
                    Ok((message, edit::details(path, &normalized, &new_content)))
                });
            let (message, details) = task
                .await
                .map_err(|e| ToolError::new(format!("Tool task failed: {e}")))??;
            Ok(AgentToolResult::new(vec![Content::text(message)], details))
        })
        .await
    }

    /// Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.
    #[pi_tool(
        name = "write",
        label = "write",
        title = "Write file",
        prompt_snippet = "Create or overwrite files",
        prompt_guidelines = ["Use write only for new files or complete rewrites."],
        destructive,
        open_world = false
    )]
    pub async fn write(
        &self,
        params: WriteParams,
        signal: AbortSignal,
        ctx: ExtensionContext,
    ) -> Result<AgentToolResult<Option<()>>, ToolError> {
        let absolute = paths::resolve_to_cwd(&params.path, ctx.cwd());
        let key = absolute.clone();
        queue::with_file_mutation_queue(&key, async move {
            if signal.is_aborted() {
                return Err(aborted());
            }
            let signal_in = signal.clone();
            let path = params.path.clone();
            let task = tokio::task::spawn_blocking(move || -> Result<(), ToolError> {
                if params.path.contains('\0') {
                    return Err(ToolError::new(js::nul_path_error(
                        &absolute.to_string_lossy(),
                    )));
                }
                if let Some(dir) = absolute.parent() {
                    write::mkdir_recursive(dir)?;
                }
                if signal_in.is_aborted() {
                    return Err(aborted());
                }
                write::replace_file(&absolute, params.content.as_bytes())
            });
            task.await
                .map_err(|e| ToolError::new(format!("Tool task failed: {e}")))??;
            if signal.is_aborted() {
                return Err(aborted());
            }
            Ok(AgentToolResult::new(
                vec![Content::text(format!("Successfully wrote to {path}"))],
                None,
            ))
        })
        .await
    }

    /// Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore. Output is truncated to 100 matches or 50KB (whichever is hit first). Long lines are truncated to 500 chars.
    #[pi_tool(
        name = "grep",
        label = "grep",
        title = "Search file contents",
        prompt_snippet = "Search file contents for patterns (respects .gitignore)",
        read_only,
        open_world = false
    )]
    pub async fn grep(
        &self,
        params: GrepParams,
        signal: AbortSignal,
        ctx: ExtensionContext,
    ) -> Result<AgentToolResult<Option<GrepDetails>>, ToolError> {
        listing(signal, &ctx, move |cwd, signal| {
            grep::run_blocking(&params, cwd, signal)
        })
        .await
    }

    /// Search for files by glob pattern. Returns matching file paths relative to the search directory. Respects .gitignore. Output is truncated to 1000 results or 50KB (whichever is hit first).
    #[pi_tool(
        name = "find",
        label = "find",
        title = "Find files",
        prompt_snippet = "Find files by glob pattern (respects .gitignore)",
        read_only,
        open_world = false
    )]
    pub async fn find(
        &self,
        params: FindParams,
        signal: AbortSignal,
        ctx: ExtensionContext,
    ) -> Result<AgentToolResult<Option<FindDetails>>, ToolError> {
        listing(signal, &ctx, move |cwd, signal| {
            find::run_blocking(&params, cwd, signal)
        })
        .await
    }

    /// List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles. Output is truncated to 500 entries or 50KB (whichever is hit first).
    #[pi_tool(
        name = "ls",
        label = "ls",
        title = "List directory",
        prompt_snippet = "List directory contents",
        read_only,
        open_world = false
    )]
    pub async fn ls(
        &self,
        params: LsParams,
        signal: AbortSignal,
        ctx: ExtensionContext,
    ) -> Result<AgentToolResult<Option<LsDetails>>, ToolError> {
        listing(signal, &ctx, move |cwd, signal| {
            ls::run_blocking(&params, cwd, signal)
        })
        .await
    }
}

impl CodingTools {
    /// The tools with these options.
    pub fn new(options: CodingOptions) -> Self {
        CodingTools { options }
    }

    /// The options.
    pub fn options(&self) -> &CodingOptions {
        &self.options
    }

    /// The seven tools as a pack, in the order Pi registers them (`read`, `bash`,
    /// `edit`, `write`, `grep`, `find`, `ls`). Each call's paths resolve against the
    /// context the host passes (a session's cwd); a host without one gets
    /// [`ExtensionContext::detached`] (the process's directory): use
    /// [`ToolPack::tools_with_context`] to choose the directory.
    pub fn pack(self: &Arc<Self>) -> ToolPack {
        let owner = ToolOwner::module(env!("CARGO_PKG_NAME"), module_path!());
        let tools = [
            shape::pi_shaped(self.read_tool().into_agent_tool(), false),
            shape::pi_shaped(self.bash_tool().into_agent_tool(), false),
            shape::pi_shaped(self.edit_tool().into_agent_tool(), true),
            shape::pi_shaped(self.write_tool().into_agent_tool(), false),
            shape::pi_shaped(self.grep_tool().into_agent_tool(), false),
            shape::pi_shaped(self.find_tool().into_agent_tool(), false),
            shape::pi_shaped(self.ls_tool().into_agent_tool(), false),
        ];
        let mut pack = ToolPack::new();
        for tool in tools {
            // Seven distinct, valid names: a push cannot fail.
            if let Err(error) = pack.push(owner.clone(), tool) {
                debug_assert!(false, "{error}");
            }
        }
        pack
    }
}

/// Pi's seven coding tools with the default options.
pub fn pack() -> ToolPack {
    Arc::new(CodingTools::default()).pack()
}

/// The coding tools with the default options, confined to `root`
/// ([`CodingTools::pack_confined`]).
pub fn pack_confined(root: impl AsRef<Path>) -> ToolPack {
    Arc::new(CodingTools::default()).pack_confined(root)
}

impl CodingTools {
    /// The tools of [`pack`](Self::pack), confined to `root`: a call whose `path`
    /// resolves outside `root` (through `..`, an absolute or `~` path, or a symbolic link
    /// anywhere on the way) fails with [`OUTSIDE_ROOT`] before the tool runs. `bash`
    /// cannot be confined by its text: it runs in the kernel sandbox
    /// ([`Sandbox::for_root`](pi_tool_core::safety::Sandbox::for_root)`(root)`, no network,
    /// unless [`CodingOptions::sandbox`] names another profile), and a call the kernel
    /// cannot sandbox is refused.
    ///
    /// A call without a session's context runs with `root` as its directory (relative
    /// paths resolve against it); a call with one resolves against the context's
    /// directory, as the tool does, and is checked there. Pi's own tools are not confined:
    /// this is for a host that gives the tools to a model it does not trust with the rest
    /// of the file system.
    pub fn pack_confined(self: &Arc<Self>, root: impl AsRef<Path>) -> ToolPack {
        let root = root.as_ref();
        let sandboxed = match &self.options.sandbox {
            Some(BashSandbox::Profile(_)) => self.clone(),
            _ => {
                let mut options = self.options.clone();
                options.sandbox = Some(BashSandbox::Profile(Sandbox::for_root(root)));
                Arc::new(CodingTools { options })
            }
        };
        confine::confine(&sandboxed.pack(), root, true)
    }

    /// The built-in tools of Pi's session, in the order of its registry: `read`, `bash`,
    /// `powershell`, `edit`, `write`, `grep`, `find`, `ls` (Pi's
    /// `createAllToolDefinitions`). `powershell` is there because Pi registers it on
    /// every platform; on Unix, where this crate runs, a call fails with Pi's text ("The
    /// powershell tool is only available on Windows."). Give them to a session with
    /// `AgentSessionBuilder::builtin_tools(tools, CODING_TOOL_NAMES)`.
    pub fn builtin_tools(self: &Arc<Self>) -> ToolPack {
        let owner = ToolOwner::module(env!("CARGO_PKG_NAME"), module_path!());
        let seven = self.pack();
        let mut pack = ToolPack::new();
        for entry in seven.entries() {
            if entry.tool.spec().name == "edit" {
                let powershell = shape::pi_shaped(self.powershell_tool().into_agent_tool(), false);
                if let Err(error) = pack.push(owner.clone(), powershell) {
                    debug_assert!(false, "{error}");
                }
            }
            if let Err(error) = pack.push(entry.owner.clone(), entry.tool.clone()) {
                debug_assert!(false, "{error}");
            }
        }
        pack
    }
}

/// Pi's session built-ins with the default options ([`CodingTools::builtin_tools`]).
pub fn builtin_tools() -> ToolPack {
    Arc::new(CodingTools::default()).builtin_tools()
}

/// The names of the tools Pi activates by default (`createCodingToolDefinitions`, the
/// session's default active tools).
pub const CODING_TOOL_NAMES: [&str; 4] = ["read", "bash", "edit", "write"];
/// The names of the read-only tools (`createReadOnlyToolDefinitions`).
pub const READ_ONLY_TOOL_NAMES: [&str; 4] = ["read", "grep", "find", "ls"];
