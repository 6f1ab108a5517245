//! `write` and the file replacement `write` and `edit` share.

use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use pi_tool_core::{JsonSchema, ToolError};
use serde::Deserialize;

use crate::js;

/// Arguments of `write`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(crate = "pi_tool_core::schemars")]
#[non_exhaustive]
pub struct WriteParams {
    /// Path to the file to write (relative or absolute)
    pub path: String,
    /// Content to write to the file
    pub content: String,
}

/// Node's `mkdir(dir, {recursive: true})`, with its error texts.
pub(crate) fn mkdir_recursive(dir: &Path) -> Result<(), ToolError> {
    match std::fs::create_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) => {
            // Node names the directory asked for; an existing non-directory is EEXIST on
            // the directory itself and ENOTDIR below it.
            let e = if dir.exists() && !dir.is_dir() {
                std::io::Error::from_raw_os_error(libc::EEXIST)
            } else if e.kind() == std::io::ErrorKind::AlreadyExists {
                std::io::Error::from_raw_os_error(libc::ENOTDIR)
            } else {
                e
            };
            Err(ToolError::new(js::fs_error(&e, "mkdir", Some(dir))))
        }
    }
}

fn random_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

/// Replaces the file's bytes as one step: the text goes to a temporary file in the same
/// directory, which is then renamed over the target, so that a crash or an abort leaves
/// the old file or the new one, never a mix. Pi writes in place (`fs.writeFile`); what
/// a caller can observe stays the same: a symbolic link is written through (its target
/// is replaced), an existing file keeps its permission bits, and errors read as Node's
/// (docs/differences-from-pi.md).
pub(crate) fn replace_file(path: &Path, bytes: &[u8]) -> Result<(), ToolError> {
    let open_error = |e: &std::io::Error| ToolError::new(js::fs_error(e, "open", Some(path)));
    // Write through links, as `open(path, "w")` does.
    let target: PathBuf = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(_) => match std::fs::symlink_metadata(path) {
            // A dangling link: Node creates the file it points to.
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(path).map_err(|e| open_error(&e))?;
                match path.parent() {
                    Some(parent) if link.is_relative() => parent.join(link),
                    _ => link,
                }
            }
            _ => path.to_path_buf(),
        },
    };
    let existing = std::fs::metadata(&target).ok();
    if let Some(meta) = &existing
        && meta.is_dir()
    {
        return Err(ToolError::new(js::fs_error(
            &std::io::Error::from_raw_os_error(libc::EISDIR),
            "open",
            Some(path),
        )));
    }
    if existing.as_ref().is_some_and(|m| !m.file_type().is_file()) {
        // A FIFO, a device: replacing it would change what it is; write into it as Pi does.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&target)
            .map_err(|e| open_error(&e))?;
        return file
            .write_all(bytes)
            .map_err(|e| ToolError::new(js::fs_error(&e, "write", None)));
    }
    let dir = target.parent().unwrap_or(Path::new("/"));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{name}.pi-tool-{}.tmp", random_suffix()));
    let result = (|| -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&temp)?;
        file.write_all(bytes)?;
        if let Some(meta) = &existing {
            file.set_permissions(std::fs::Permissions::from_mode(
                meta.permissions().mode() & 0o7777,
            ))?;
        }
        file.sync_all()?;
        std::fs::rename(&temp, &target)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&temp);
        // The temporary file could not be made (a read-only directory, say): report the
        // target, as an in-place open would.
        return Err(open_error(&e));
    }
    Ok(())
}
