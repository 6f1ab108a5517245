//! Pi's built-in coding tools, replayed: the scenarios of `conformance/pi-tools/` (FORMAT.md
//! there) run on `pi-tool-coding`'s pack, and each produces `OUT/<id>.json` in the format
//! Pi 0.85.0's recorder writes, so that the files compare byte for byte.
//!
//! Scenario files are data: a new one runs without code changes.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use pi_tool::context::ExtensionContext;
use pi_tool::{AbortController, AgentTool, JsonToolResult, OnUpdate, ToolInvocation};
use pi_tool_coding::{CodingOptions, CodingTools};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::canon::ecma_canonical_json;

/// Inline file contents and image data up to this many bytes/characters (FORMAT.md §4).
const INLINE_LIMIT: usize = 16384;

/// The fixed environment the recorder runs Pi's tools in (FORMAT.md §3), without the
/// per-run and per-scenario variables.
pub const FIXED_ENV: &[(&str, &str)] = &[
    ("PATH", "/usr/local/bin:/usr/bin:/bin"),
    ("LANG", "C.UTF-8"),
    ("LC_ALL", "C.UTF-8"),
    ("TZ", "UTC"),
    ("PI_OFFLINE", "1"),
];

/// Replaces the process environment with the recorder's (FORMAT.md §3) for `root`.
///
/// # Safety
/// Changes the process environment: call it while no other thread runs.
pub unsafe fn prepare_environment(root: &Path) {
    let keys: Vec<_> = std::env::vars_os().map(|(k, _)| k).collect();
    for key in keys {
        // SAFETY: the caller guarantees that no other thread runs.
        unsafe { std::env::remove_var(key) };
    }
    for (k, v) in FIXED_ENV {
        // SAFETY: as above.
        unsafe { std::env::set_var(k, v) };
    }
    let agent = root.join("agent");
    // SAFETY: as above.
    unsafe {
        std::env::set_var("PI_CODING_AGENT_DIR", &agent);
        std::env::set_var("RIPGREP_CONFIG_PATH", agent.join("ripgreprc"));
    }
}

/// The scenario files of a folder, sorted by name.
pub fn scenario_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    files
}

/// A run's directories: `<root>` with `agent/bin`, `agent/ripgreprc` and `s/`.
pub fn make_root() -> Result<PathBuf, String> {
    let base = std::env::temp_dir().join(format!(
        "pi-tools-oracle-{}-{}",
        std::process::id(),
        nanos()
    ));
    std::fs::create_dir_all(base.join("agent").join("bin")).map_err(|e| e.to_string())?;
    std::fs::write(base.join("agent").join("ripgreprc"), "--sort=path\n")
        .map_err(|e| e.to_string())?;
    std::fs::canonicalize(&base).map_err(|e| e.to_string())
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

fn content_bytes(spec: Option<&Value>) -> Result<Vec<u8>, String> {
    let Some(spec) = spec else {
        return Ok(Vec::new());
    };
    if let Some(s) = spec.as_str() {
        return Ok(s.as_bytes().to_vec());
    }
    let obj = spec.as_object().ok_or("bad content spec")?;
    if let Some(t) = obj.get("text").and_then(Value::as_str) {
        return Ok(t.as_bytes().to_vec());
    }
    if let Some(b) = obj.get("base64").and_then(Value::as_str) {
        return STANDARD.decode(b).map_err(|e| e.to_string());
    }
    if let Some(r) = obj.get("repeat").and_then(Value::as_str) {
        let n = obj.get("count").and_then(Value::as_u64).unwrap_or(0) as usize;
        return Ok(r.repeat(n).into_bytes());
    }
    if let Some(lines) = obj.get("lines").and_then(Value::as_object) {
        let count = lines.get("count").and_then(Value::as_u64).unwrap_or(0);
        let template = lines
            .get("template")
            .and_then(Value::as_str)
            .unwrap_or("line {n}");
        let eol = lines.get("eol").and_then(Value::as_str).unwrap_or("\n");
        let trailing = lines
            .get("trailingNewline")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        let start = lines.get("start").and_then(Value::as_u64).unwrap_or(1);
        let parts: Vec<String> = (start..start + count)
            .map(|n| template.replace("{n}", &n.to_string()))
            .collect();
        let mut text = parts.join(eol);
        if trailing && count > 0 {
            text.push_str(eol);
        }
        return Ok(text.into_bytes());
    }
    if let Some(items) = obj.get("concat").and_then(Value::as_array) {
        let mut out = Vec::new();
        for item in items {
            out.extend(content_bytes(Some(item))?);
        }
        return Ok(out);
    }
    Err(format!("bad content spec: {spec}"))
}

fn build_tree(base: &Path, entries: Option<&Value>) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    std::fs::create_dir_all(base).map_err(io)?;
    std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o755)).map_err(io)?;
    let mut modes: Vec<(PathBuf, u32)> = Vec::new();
    for entry in entries.and_then(Value::as_array).into_iter().flatten() {
        let rel = entry
            .get("path")
            .and_then(Value::as_str)
            .ok_or("entry without path")?;
        let path = base.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let kind =
            entry
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or(if entry.get("target").is_some() {
                    "symlink"
                } else {
                    "file"
                });
        let mode = |default: &str| -> Result<u32, String> {
            let text = entry.get("mode").and_then(Value::as_str).unwrap_or(default);
            u32::from_str_radix(text, 8).map_err(|e| e.to_string())
        };
        match kind {
            "dir" => {
                std::fs::create_dir_all(&path).map_err(io)?;
                modes.push((path, mode("755")?));
            }
            "symlink" => {
                let target = entry
                    .get("target")
                    .and_then(Value::as_str)
                    .ok_or("symlink without target")?;
                std::os::unix::fs::symlink(target, &path).map_err(io)?;
            }
            "file" => {
                std::fs::write(&path, content_bytes(entry.get("content"))?).map_err(io)?;
                modes.push((path, mode("644")?));
            }
            other => return Err(format!("bad entry type {other}")),
        }
    }
    for (path, mode) in modes.into_iter().rev() {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).map_err(io)?;
    }
    Ok(())
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// FORMAT.md's FILE record.
pub fn file_record(bytes: &[u8]) -> Value {
    let mut rec = Map::new();
    rec.insert("size".into(), json!(bytes.len()));
    rec.insert("sha256".into(), json!(sha256_hex(bytes)));
    if bytes.len() <= INLINE_LIMIT {
        match std::str::from_utf8(bytes) {
            Ok(text) => rec.insert("text".into(), json!(text)),
            Err(_) => rec.insert("base64".into(), json!(STANDARD.encode(bytes))),
        };
    }
    Value::Object(rec)
}

fn snapshot_tree(base: &Path) -> Value {
    let mut out = Map::new();
    fn walk(abs: &Path, rel: &str, out: &mut Map<String, Value>) {
        let Ok(rd) = std::fs::read_dir(abs) else {
            return;
        };
        for entry in rd.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if rel.is_empty() && name == "tmp" {
                continue;
            }
            let path = entry.path();
            let r = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let mode = format!("{:03o}", meta.mode() & 0o7777);
            let ft = meta.file_type();
            if ft.is_symlink() {
                let target = std::fs::read_link(&path)
                    .map(|t| t.to_string_lossy().into_owned())
                    .unwrap_or_default();
                out.insert(r, json!({"type": "symlink", "target": target}));
            } else if ft.is_dir() {
                out.insert(r.clone(), json!({"type": "dir", "mode": mode}));
                walk(&path, &r, out);
            } else if ft.is_file() {
                let bytes = std::fs::read(&path).unwrap_or_default();
                let mut rec = file_record(&bytes);
                if let Some(obj) = rec.as_object_mut() {
                    obj.insert("type".into(), json!("file"));
                    obj.insert("mode".into(), json!(mode));
                }
                out.insert(r, rec);
            } else {
                out.insert(r, json!({"type": "other", "mode": mode}));
            }
        }
    }
    walk(base, "", &mut out);
    Value::Object(out)
}

/// Replaces each token by its path in every string of `v` (keys stay).
fn substitute(v: &Value, pairs: &[(String, &str)]) -> Value {
    match v {
        Value::String(s) => {
            let mut s = s.clone();
            for (abs, token) in pairs {
                s = s.replace(token, abs);
            }
            Value::String(s)
        }
        Value::Array(items) => Value::Array(items.iter().map(|x| substitute(x, pairs)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, x)| (k.clone(), substitute(x, pairs)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn normalise_string(s: &str, pairs: &[(String, &str)]) -> String {
    let mut s = s.to_owned();
    for (abs, token) in pairs {
        s = s.replace(abs.as_str(), token);
    }
    // `pi-bash-` + 16 hex digits + `.log` → `pi-bash-<random>.log`.
    let mut out = String::with_capacity(s.len());
    let mut rest = s.as_str();
    while let Some(pos) = rest.find("pi-bash-") {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 8..];
        let is_random = after.len() >= 20
            && after.as_bytes()[..16]
                .iter()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
            && &after[16..20] == ".log";
        if is_random {
            out.push_str("pi-bash-<random>.log");
            rest = &after[20..];
        } else {
            out.push_str("pi-bash-");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn normalise(v: &Value, pairs: &[(String, &str)]) -> Value {
    match v {
        Value::String(s) => Value::String(normalise_string(s, pairs)),
        Value::Array(items) => Value::Array(items.iter().map(|x| normalise(x, pairs)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, x)| (normalise_string(k, pairs), normalise(x, pairs)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A payload as the recorder keeps it: `{content, details?}`, large images by digest.
fn payload(result: &JsonToolResult) -> Value {
    let content: Vec<Value> = result
        .content
        .iter()
        .map(|c| {
            let mut v = serde_json::to_value(c).unwrap_or(Value::Null);
            if let Some(obj) = v.as_object_mut()
                && obj.get("type").and_then(Value::as_str) == Some("image")
                && let Some(data) = obj.get("data").and_then(Value::as_str).map(str::to_owned)
                && data.len() > INLINE_LIMIT
            {
                obj.remove("data");
                let decoded = STANDARD.decode(&data).unwrap_or_default();
                obj.insert("dataLength".into(), json!(data.len()));
                obj.insert("dataSha256".into(), json!(sha256_hex(data.as_bytes())));
                obj.insert("decodedSha256".into(), json!(sha256_hex(&decoded)));
            }
            v
        })
        .collect();
    let mut out = Map::new();
    out.insert("content".into(), Value::Array(content));
    if let Some(details) = &result.details {
        out.insert("details".into(), details.as_value().clone());
    }
    Value::Object(out)
}

fn options_from(tool_options: Option<&Value>) -> CodingOptions {
    let mut options = CodingOptions::default();
    let Some(tool_options) = tool_options else {
        return options;
    };
    if let Some(on) = tool_options
        .pointer("/read/autoResizeImages")
        .and_then(Value::as_bool)
    {
        options = options.auto_resize_images(on);
    }
    if let Some(prefix) = tool_options
        .pointer("/bash/commandPrefix")
        .and_then(Value::as_str)
    {
        options = options.command_prefix(prefix);
    }
    if let Some(shell) = tool_options
        .pointer("/bash/shellPath")
        .and_then(Value::as_str)
    {
        options = options.shell_path(shell);
    }
    options
}

async fn run_call(
    call: &Value,
    tool: &Arc<dyn AgentTool>,
    cwd: &Path,
    pairs: &[(String, &str)],
) -> Map<String, Value> {
    let mut rec = Map::new();
    let args = call.get("args").cloned().unwrap_or(json!({}));
    rec.insert(
        "tool".into(),
        call.get("tool").cloned().unwrap_or(Value::Null),
    );
    rec.insert("args".into(), args.clone());
    if let Some(ms) = call.get("abortAfterMs") {
        rec.insert("abortAfterMs".into(), ms.clone());
    }
    let pre_aborted = call
        .get("preAborted")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if pre_aborted {
        rec.insert("preAborted".into(), json!(true));
    }
    let validate = call
        .get("validate")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    if !validate {
        rec.insert("validate".into(), json!(false));
    }
    let updates_mode = call.get("updates").and_then(Value::as_str).unwrap_or("all");
    if updates_mode != "all" {
        rec.insert("updatesMode".into(), json!(updates_mode));
    }
    let raw = substitute(&args, pairs);
    let args = if validate {
        if tool.name() == "edit"
            && let Ok(prepared) = tool.prepare_arguments(&raw)
        {
            rec.insert("prepared".into(), prepared.into_owned());
        }
        match tool.check_arguments(&raw) {
            Ok(v) => {
                let v = v.into_owned();
                rec.insert("validated".into(), v.clone());
                v
            }
            Err(e) => {
                rec.insert("validationError".into(), json!(e.message()));
                return rec;
            }
        }
    } else {
        raw
    };

    let controller = AbortController::new();
    if pre_aborted {
        controller.abort();
    }
    let updates: Arc<Mutex<Vec<Value>>> = Arc::default();
    let sink = updates.clone();
    let on_update = OnUpdate::new(move |u: JsonToolResult| {
        sink.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(payload(&u));
    });
    let ctx = ExtensionContext::builder(cwd).build();
    let invocation =
        ToolInvocation::new("call_1", &args, controller.signal(), on_update).with_context(ctx);
    let abort_after = call.get("abortAfterMs").and_then(Value::as_f64);
    let timer = abort_after.map(|ms| {
        let controller = controller.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0)).await;
            controller.abort();
        })
    });
    let outcome = tool.execute(invocation).await;
    if let Some(timer) = timer {
        timer.abort();
    }
    let result_payload = match &outcome {
        Ok(result) => {
            let p = payload(result);
            rec.insert("result".into(), p.clone());
            Some(p)
        }
        Err(e) => {
            rec.insert("error".into(), json!(e.message()));
            None
        }
    };
    let updates = std::mem::take(&mut *updates.lock().unwrap_or_else(PoisonError::into_inner));
    let last_path = updates
        .last()
        .and_then(|u| u.pointer("/details/fullOutputPath"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    match updates_mode {
        "edges" if updates.len() > 2 => {
            rec.insert(
                "updates".into(),
                json!([updates[0].clone(), updates[updates.len() - 1].clone()]),
            );
        }
        "none" => {}
        _ => {
            rec.insert("updates".into(), Value::Array(updates));
        }
    }
    let full = result_payload
        .as_ref()
        .and_then(|p| p.pointer("/details/fullOutputPath"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or(last_path);
    if let Some(path) = full {
        let rec_file = match std::fs::read(&path) {
            Ok(bytes) => file_record(&bytes),
            Err(e) => json!({"error": format!("ENOENT: {e}")}),
        };
        rec.insert("fullOutputFile".into(), rec_file);
    }
    rec
}

/// Runs one scenario file under `root` and returns the output file's content.
pub async fn run_scenario_file(file: &Path, root: &Path) -> Result<(String, String), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let sc: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let id = sc
        .get("id")
        .and_then(Value::as_str)
        .ok_or("scenario without id")?
        .to_owned();
    if file.file_stem().and_then(|s| s.to_str()) != Some(id.as_str()) {
        return Err(format!(
            "{}: id {id} does not match the file name",
            file.display()
        ));
    }
    let s = root.join("s").join(&id);
    let (cwd, home, outside, tmp) = (
        s.join("cwd"),
        s.join("home"),
        s.join("outside"),
        s.join("tmp"),
    );
    std::fs::create_dir_all(&s).map_err(|e| e.to_string())?;
    if sc.get("git").and_then(Value::as_bool) == Some(true) {
        std::fs::create_dir_all(cwd.join(".git")).map_err(|e| e.to_string())?;
    }
    build_tree(&cwd, sc.get("tree"))?;
    build_tree(&home, sc.get("home"))?;
    build_tree(&outside, sc.get("outside"))?;
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    let agent = root.join("agent");
    let string = |p: &Path| p.to_string_lossy().into_owned();
    let mut pairs: Vec<(String, &str)> = vec![
        (string(&cwd), "<cwd>"),
        (string(&home), "<home>"),
        (string(&outside), "<outside>"),
        (string(&tmp), "<tmp>"),
        (string(&agent), "<agent>"),
        (string(&s), "<scenario>"),
        (string(root), "<root>"),
    ];
    let substitution = pairs.clone();
    pairs.sort_by_key(|p| std::cmp::Reverse(p.0.len()));

    // The scenario's environment (FORMAT.md §3), undone afterwards.
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    env.insert("HOME".into(), string(&home));
    env.insert("TMPDIR".into(), string(&tmp));
    if let Some(extra) = sc.get("env").and_then(Value::as_object) {
        for (k, v) in extra {
            env.insert(k.clone(), v.as_str().unwrap_or_default().to_owned());
        }
    }
    let saved: Vec<(String, Option<std::ffi::OsString>)> = env
        .keys()
        .map(|k| (k.clone(), std::env::var_os(k)))
        .collect();
    for (k, v) in &env {
        // SAFETY: the runner runs one scenario at a time and no tool is running between
        // calls; nothing else reads the environment concurrently.
        unsafe { std::env::set_var(k, v) };
    }

    let tools = Arc::new(CodingTools::new(options_from(sc.get("toolOptions")))).pack();
    let mut out = Map::new();
    out.insert("id".into(), json!(id));
    out.insert(
        "description".into(),
        sc.get("description").cloned().unwrap_or(Value::Null),
    );
    out.insert("initialTree".into(), snapshot_tree(&s));
    if let Some(opts) = sc.get("toolOptions") {
        out.insert("toolOptions".into(), opts.clone());
    }
    let mut calls = Vec::new();
    let mut failure = None;
    for call in sc
        .get("calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = call.get("tool").and_then(Value::as_str).unwrap_or_default();
        let Some(tool) = tools.get(name) else {
            failure = Some(format!("unknown tool {name}"));
            break;
        };
        let mut rec = run_call(call, tool, &cwd, &substitution).await;
        rec.insert("treeAfter".into(), snapshot_tree(&s));
        calls.push(Value::Object(rec));
        if let Some(ms) = call.get("pauseAfterMs").and_then(Value::as_f64) {
            tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0)).await;
        }
    }
    for (k, v) in saved {
        // SAFETY: as above.
        unsafe {
            match v {
                Some(v) => std::env::set_var(&k, v),
                None => std::env::remove_var(&k),
            }
        }
    }
    if let Some(failure) = failure {
        return Err(failure);
    }
    out.insert("calls".into(), Value::Array(calls));
    let normalised = normalise(&Value::Object(out), &pairs);
    Ok((id, ecma_canonical_json(&normalised)))
}

/// `--pi-tools SCENARIO_DIR --out OUT`: every scenario, written to `OUT/<id>.json`.
/// Returns the number written and the failures.
pub async fn run_all(scenarios: &Path, out: &Path, root: &Path) -> (usize, Vec<String>) {
    let mut written = 0;
    let mut failures = Vec::new();
    if let Err(e) = std::fs::create_dir_all(out) {
        failures.push(format!("{}: {e}", out.display()));
        return (0, failures);
    }
    for file in scenario_files(scenarios) {
        match run_scenario_file(&file, root).await {
            Ok((id, text)) => match std::fs::write(out.join(format!("{id}.json")), text) {
                Ok(()) => written += 1,
                Err(e) => failures.push(format!("{id}: {e}")),
            },
            Err(e) => failures.push(e),
        }
    }
    (written, failures)
}
