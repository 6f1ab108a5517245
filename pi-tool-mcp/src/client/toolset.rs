//! [`McpToolset`]: the tools one connection (`connection.rs`) offers, which of them are
//! approved, and what changed.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use pi_tool_core::{AgentTool, DynamicToolset, ToolsetListener};
use rmcp::model::ProtocolVersion;
use tokio::sync::watch;

use super::connection::Connection;
use super::listen;
use super::tool::{McpTool, Pins, digest};
use super::{McpClientError, McpServer, names};

/// Which of a server's tools are offered, approved and pinned.
#[derive(Default)]
pub(crate) struct State {
    /// Original name to our name, for the toolset's whole life.
    names: HashMap<String, String>,
    taken: HashSet<String>,
    /// The approved digest of each tool (pinned at first listing).
    pinned: HashMap<String, String>,
    /// The digest of each tool in the server's latest listing.
    listed: HashMap<String, String>,
    /// The approved tools, by original name.
    tools: BTreeMap<String, Arc<McpTool>>,
    /// Tools whose listed definition differs from the approved one.
    pending: BTreeMap<String, Arc<McpTool>>,
}

impl Pins for Mutex<State> {
    fn callable(&self, original: &str, digest: &str) -> Result<(), String> {
        self.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .callable(original, digest)
    }
}

impl State {
    /// Whether a tool approved with `digest` may be called now; otherwise why not.
    pub(crate) fn callable(&self, original: &str, digest: &str) -> Result<(), String> {
        let Some(listed) = self.listed.get(original) else {
            return Err(format!(
                "(`{original}` on the server) is no longer offered by the server"
            ));
        };
        if self.pinned.get(original).map(String::as_str) != Some(digest) {
            return Err(format!(
                "(`{original}` on the server) was replaced by a newer approved definition; \
                 use the toolset's current tools"
            ));
        }
        if listed != digest {
            return Err(format!(
                "(`{original}` on the server) changed its description or schema since it was \
                 approved (digest {} is now {}); calls are refused until the host accepts \
                 the change (McpToolset::accept_change)",
                &digest[..12],
                &listed[..12.min(listed.len())]
            ));
        }
        Ok(())
    }
}

/// What a refresh found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolsetChanges {
    /// New tools, offered from now on (our names).
    pub added: Vec<String>,
    /// Tools the server no longer lists (our names); their calls are refused.
    pub removed: Vec<String>,
    /// Tools whose definition changed (our names): refused until accepted.
    pub changed: Vec<String>,
}

impl ToolsetChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// A changed tool definition waiting for the host's decision.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PendingChange {
    /// Our name of the tool.
    pub name: String,
    /// The new description.
    pub description: String,
    /// The new input schema.
    pub parameters: pi_tool_core::Value,
    /// The digest of the approved definition.
    pub approved_digest: String,
    /// The digest of the new definition.
    pub new_digest: String,
}

struct Inner {
    server: McpServer,
    conn: Arc<Connection>,
    state: Arc<Mutex<State>>,
    generation: watch::Sender<u64>,
    /// One refresh at a time.
    refreshing: tokio::sync::Mutex<()>,
    /// The sessions that take this toolset as a source (`DynamicToolset::on_change`).
    listeners: Mutex<Vec<ToolsetListener>>,
}

/// The tools of one MCP server, each an `Arc<dyn AgentTool>` (see the [module
/// docs](super)).
///
/// Cloning shares the connection. The connection ends when the toolset and every tool
/// it handed out are dropped (a stdio server's process group is killed then), or at
/// [`McpToolset::close`].
#[derive(Clone)]
pub struct McpToolset {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for McpToolset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolset")
            .field("server", &self.inner.server)
            .field("protocol_version", &self.inner.conn.protocol_version)
            .finish_non_exhaustive()
    }
}

impl McpToolset {
    /// Starts or reaches the server, agrees on a revision, and lists its tools.
    pub async fn connect(server: McpServer) -> Result<McpToolset, McpClientError> {
        let timeout = server.connect_timeout;
        let name = server.name.clone();
        match tokio::time::timeout(timeout, Self::connect_inner(server)).await {
            Ok(result) => result,
            Err(_) => Err(McpClientError::new(
                &name,
                format!("connecting took longer than {timeout:?}"),
            )),
        }
    }

    async fn connect_inner(server: McpServer) -> Result<McpToolset, McpClientError> {
        let conn = Connection::open(&server).await?;
        Self::start(server, conn).await
    }

    async fn start(server: McpServer, conn: Arc<Connection>) -> Result<McpToolset, McpClientError> {
        let (generation, _) = watch::channel(0);
        let toolset = McpToolset {
            inner: Arc::new(Inner {
                server,
                conn,
                state: Arc::default(),
                generation,
                refreshing: tokio::sync::Mutex::new(()),
                listeners: Mutex::new(Vec::new()),
            }),
        };
        // At 2026-07-28 the stream is open before the first listing, so no change after
        // it is missed.
        let conn = &toolset.inner.conn;
        let subscription = if conn.protocol_version == ProtocolVersion::V_2026_07_28.as_str()
            && listen::server_announces_tool_changes(&conn.peer)
        {
            listen::open(&conn.server_name, &conn.peer).await
        } else {
            None
        };
        toolset.refresh().await?;
        toolset.watch_list_changes();
        if let Some(subscription) = subscription {
            let conn = &toolset.inner.conn;
            listen::spawn(
                conn.server_name.clone(),
                conn.peer.clone(),
                conn.handler.clone(),
                conn.ended.signal(),
                subscription,
            );
        }
        Ok(toolset)
    }

    /// Refreshes the toolset when the server says its list changed, for as long as the
    /// connection lasts.
    fn watch_list_changes(&self) {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let shared = self.inner.conn.handler.clone();
        let ended = self.inner.conn.ended.signal();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = shared.tools_changed.notified() => {}
                    () = ended.aborted() => return,
                }
                let Some(inner) = weak.upgrade() else { return };
                let toolset = McpToolset { inner };
                if let Err(error) = toolset.refresh().await {
                    tracing::warn!(target: "pi_tool_mcp::client", "{error}");
                }
            }
        });
    }

    /// The server's name.
    pub fn server_name(&self) -> &str {
        &self.inner.server.name
    }

    /// The protocol revision agreed with the server (`2026-07-28`, `2025-11-25`, …).
    pub fn protocol_version(&self) -> &str {
        &self.inner.conn.protocol_version
    }

    /// The server's instructions for the model, if it gave any.
    pub fn instructions(&self) -> Option<String> {
        self.inner
            .conn
            .peer
            .peer_info()
            .and_then(|info| info.instructions.clone())
    }

    /// The approved tools, by name: what to give an agent.
    pub fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        let state = self.state();
        let mut tools: Vec<Arc<dyn AgentTool>> = state
            .tools
            .iter()
            .filter(|(original, _)| state.listed.contains_key(*original))
            .map(|(_, tool)| tool.clone() as Arc<dyn AgentTool>)
            .collect();
        tools.sort_by(|a, b| a.name().cmp(b.name()));
        tools
    }

    /// Tool definitions the server changed since they were approved.
    pub fn pending_changes(&self) -> Vec<PendingChange> {
        let state = self.state();
        state
            .pending
            .iter()
            .map(|(original, tool)| PendingChange {
                name: tool.spec.name.clone(),
                description: tool.spec.description.clone(),
                parameters: tool.spec.parameters.json().clone(),
                approved_digest: state.pinned.get(original).cloned().unwrap_or_default(),
                new_digest: tool.digest.clone(),
            })
            .collect()
    }

    /// Approves the server's new definition of the tool `name` (ours): the tool in
    /// [`Self::tools`] becomes the new one, and calls go through again. `false` when no
    /// change of that tool is pending.
    pub fn accept_change(&self, name: &str) -> bool {
        let accepted = {
            let mut state = self.state();
            let original = state
                .pending
                .iter()
                .find(|(_, tool)| tool.spec.name == name)
                .map(|(original, _)| original.clone());
            match original.and_then(|o| state.pending.remove(&o).map(|tool| (o, tool))) {
                Some((original, tool)) => {
                    state.pinned.insert(original.clone(), tool.digest.clone());
                    state.tools.insert(original, tool);
                    true
                }
                None => false,
            }
        };
        if accepted {
            self.changed();
        }
        accepted
    }

    /// A receiver that changes after every refresh that changed something (a new tool,
    /// a removed one, a pending change, an accepted one).
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.inner.generation.subscribe()
    }

    /// Lists the server's tools again and applies the rules of the module docs.
    pub async fn refresh(&self) -> Result<ToolsetChanges, McpClientError> {
        let _one = self.inner.refreshing.lock().await;
        let server = &self.inner.server;
        let listing = loop {
            let error = match self.inner.conn.peer.list_all_tools().await {
                Ok(tools) => {
                    self.inner.conn.accepted();
                    break tools;
                }
                Err(error) => error,
            };
            match self.inner.conn.reauthorized(&error).await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(why) => {
                    return Err(McpClientError::new(
                        &server.name,
                        format!("tools/list failed: {why}"),
                    ));
                }
            }
            {
                let why = match self.inner.conn.reason.get() {
                    Some(why) => why,
                    None => error.to_string(),
                };
                return Err(McpClientError::new(
                    &server.name,
                    format!("tools/list failed: {why}"),
                ));
            }
        };
        let wanted: Vec<&rmcp::model::Tool> = listing
            .iter()
            .filter(|tool| server.wants(&tool.name))
            .collect();
        let changes = {
            let mut state = self.state();
            let state = &mut *state;
            let new_names: Vec<&str> = wanted
                .iter()
                .map(|tool| tool.name.as_ref())
                .filter(|original| !state.names.contains_key(*original))
                .collect();
            for (original, name) in
                names::assign(&server.tool_prefix(), &new_names, &mut state.taken)
            {
                state.names.insert(original, name);
            }
            let mut changes = ToolsetChanges::default();
            let mut listed = HashMap::new();
            for tool in &wanted {
                let original = tool.name.to_string();
                let name = state.names.get(&original).cloned().unwrap_or_default();
                let digest = digest(tool);
                listed.insert(original.clone(), digest.clone());
                let make = || {
                    Arc::new(McpTool::new(
                        self.inner.conn.clone(),
                        Arc::downgrade(&self.inner.state) as Weak<dyn Pins>,
                        name.clone(),
                        tool,
                        server.trusted,
                        server.call_timeout,
                    ))
                };
                match state.pinned.get(&original) {
                    None => {
                        state.pinned.insert(original.clone(), digest);
                        state.tools.insert(original, make());
                        changes.added.push(name);
                    }
                    Some(pinned) if *pinned == digest => {
                        state.pending.remove(&original);
                        if !state.listed.contains_key(&original) {
                            // Back after being removed, unchanged.
                            changes.added.push(name);
                        }
                    }
                    Some(_) => {
                        let known = state.pending.get(&original).map(|t| t.digest.clone());
                        if known.as_deref() != Some(digest.as_str()) {
                            state.pending.insert(original, make());
                            changes.changed.push(name);
                        }
                    }
                }
            }
            for original in state.listed.keys() {
                if !listed.contains_key(original) {
                    state.pending.remove(original);
                    if let Some(name) = state.names.get(original) {
                        changes.removed.push(name.clone());
                    }
                }
            }
            state.listed = listed;
            changes.added.sort();
            changes.removed.sort();
            changes.changed.sort();
            changes
        };
        if !changes.is_empty() {
            self.changed();
        }
        Ok(changes)
    }

    /// Ends the connection now: a stdio server gets MCP's shutdown (stdin closed, then
    /// `SIGTERM`, then `SIGKILL` to its process group, each after the grace period).
    /// Calls still running fail; tools handed out fail from now on.
    pub async fn close(&self) {
        let conn = &self.inner.conn;
        conn.reason.set("the client closed the connection");
        conn.ended.abort();
        let running = conn.service.lock().await.take();
        if let Some(mut running) = running {
            let _ = running.close_with_timeout(conn.shutdown_grace).await;
        }
        if let Some(child) = &conn.child {
            child.shutdown(conn.shutdown_grace).await;
        }
    }

    /// The process id of a stdio server (for tests and diagnostics).
    pub fn server_pid(&self) -> Option<u32> {
        self.inner.conn.child.as_ref().and_then(|c| c.pid())
    }

    /// Says that the tools changed: to the listening sessions, then to [`Self::changes`]
    /// (called with no lock of ours held: a session reads [`Self::tools`]).
    fn changed(&self) {
        let listeners: Vec<ToolsetListener> = self
            .inner
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let mut forgotten = false;
        for listener in &listeners {
            forgotten |= !listener.notify();
        }
        if forgotten {
            self.inner
                .listeners
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .retain(|listener| !listener.is_closed());
        }
        // After the sessions: whoever waits on `changes()` sees them updated.
        self.inner.generation.send_modify(|g| *g += 1);
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// A session takes the toolset as a source of tools
/// (`AgentSessionBuilder::toolset` in pi-tool): it reports them as `<mcp:SERVER>` and
/// registers them again after each refresh that changed something and each accepted
/// change.
impl DynamicToolset for McpToolset {
    fn source_name(&self) -> String {
        format!("mcp:{}", self.inner.server.name)
    }

    fn current_tools(&self) -> Vec<Arc<dyn AgentTool>> {
        self.tools()
    }

    fn on_change(&self, listener: ToolsetListener) {
        self.inner
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(listener);
    }
}
