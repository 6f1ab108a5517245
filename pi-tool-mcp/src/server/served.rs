//! The tools a [`PackServer`](crate::PackServer) serves, which may change while it serves
//! ([`ServedTools`]): every client session reads the same list, and each change is told
//! to the clients (`notifications/tools/list_changed` before 2026-07-28, the same
//! notification on a `subscriptions/listen` stream at 2026-07-28).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use pi_tool_core::pack::{check_reaches, check_tool_name};
use pi_tool_core::{AgentTool, TaskSupport};
use rmcp::model::Tool;
use rmcp::service::{Peer, RoleServer};
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use super::convert::mcp_tool;
use crate::error::ServeError;

/// Wraps a tool the way the server's pack tools are (with the server's context factory).
pub(crate) type Wrap = Arc<dyn Fn(Arc<dyn AgentTool>) -> Arc<dyn AgentTool> + Send + Sync>;

/// One served tool: the tool, its listing and what the `mcp` profile said about it.
#[derive(Clone)]
pub(crate) struct Entry {
    pub(crate) tool: Arc<dyn AgentTool>,
    pub(crate) listed: Tool,
    pub(crate) report: Vec<String>,
}

impl Entry {
    fn new(tool: Arc<dyn AgentTool>, declared: bool) -> Entry {
        let (listed, report) = mcp_tool(tool.spec(), declared);
        Entry {
            tool,
            listed,
            report,
        }
    }
}

/// What every session shares: the current list, the change channel, whether the handle
/// was taken (then `tools.listChanged` is declared), and how new tools are wrapped.
pub(crate) struct Served {
    entries: RwLock<Arc<[Entry]>>,
    changes: broadcast::Sender<()>,
    taken: AtomicBool,
    /// Whether tools are listed with their declared schemas
    /// (`PackServer::list_declared_schemas`).
    declared: AtomicBool,
    wrap: Wrap,
}

impl Served {
    pub(crate) fn new(tools: Vec<Arc<dyn AgentTool>>, wrap: Wrap) -> Served {
        Served {
            entries: RwLock::new(tools.into_iter().map(|t| Entry::new(t, false)).collect()),
            changes: broadcast::channel(16).0,
            taken: AtomicBool::new(false),
            declared: AtomicBool::new(false),
            wrap,
        }
    }

    /// The current list, in order.
    pub(crate) fn entries(&self) -> Arc<[Entry]> {
        self.entries
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The served tool `name`.
    pub(crate) fn find(&self, name: &str) -> Option<Arc<dyn AgentTool>> {
        self.entries()
            .iter()
            .find(|entry| entry.tool.name() == name)
            .map(|entry| entry.tool.clone())
    }

    /// Whether every tool a served tool reaches is served.
    pub(crate) fn check_reaches(&self) -> Result<(), ServeError> {
        check_list_reaches(&self.entries())
    }

    /// Whether the list may change (the handle was taken): `tools.listChanged`.
    pub(crate) fn may_change(&self) -> bool {
        self.taken.load(Ordering::Acquire)
    }

    /// Lists every tool, now and later, with its declared schema (`declared`) or the
    /// portable one; the current listings are rebuilt.
    pub(crate) fn list_declared(&self, declared: bool) {
        self.declared.store(declared, Ordering::Release);
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        *entries = entries
            .iter()
            .map(|e| Entry::new(e.tool.clone(), declared))
            .collect();
    }

    /// Whether tools are listed with their declared schemas.
    fn declared(&self) -> bool {
        self.declared.load(Ordering::Acquire)
    }

    /// A receiver of the list's changes.
    pub(crate) fn changes(&self) -> broadcast::Receiver<()> {
        self.changes.subscribe()
    }

    /// Marks the list as one that may change (the handle was taken).
    pub(crate) fn take(&self) {
        self.taken.store(true, Ordering::Release);
    }

    /// Applies `change` to the list (it says whether it changed anything) and tells every
    /// session when it did.
    fn change(
        &self,
        change: impl FnOnce(&mut Vec<Entry>) -> Result<bool, ServeError>,
    ) -> Result<bool, ServeError> {
        let changed = {
            let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
            let mut list = entries.to_vec();
            let changed = change(&mut list)?;
            if changed {
                *entries = list.into();
            }
            changed
        };
        if changed {
            // No session listening is fine.
            let _ = self.changes.send(());
        }
        Ok(changed)
    }
}

fn check_list_reaches(list: &[Entry]) -> Result<(), ServeError> {
    check_reaches(list.iter().map(|entry| entry.tool.spec())).map_err(ServeError::MissingReach)
}

/// A handle on the tools a [`PackServer`](crate::PackServer) serves, from
/// [`PackServer::served_tools`](crate::PackServer::served_tools): add, remove or replace
/// tools while the server serves. Every client session sees the new list at once, and
/// each change is told to the clients: `notifications/tools/list_changed` on each
/// session before 2026-07-28, and the same notification on each `subscriptions/listen`
/// stream that asked for tool-list changes at 2026-07-28.
///
/// Cheap to clone; all clones change the same list. A tool added here gets the server's
/// context, as the pack's tools do.
#[derive(Clone)]
pub struct ServedTools(pub(crate) Arc<Served>);

impl fmt::Debug for ServedTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ServedTools").field(&self.names()).finish()
    }
}

impl ServedTools {
    /// The names of the served tools, in listing order.
    pub fn names(&self) -> Vec<String> {
        self.0
            .entries()
            .iter()
            .map(|entry| entry.tool.name().to_owned())
            .collect()
    }

    /// Whether a tool of that name is served.
    pub fn contains(&self, name: &str) -> bool {
        self.0.find(name).is_some()
    }

    /// Serves `tool` too, after the others. A name that breaks pi-tool's rule, or that
    /// a served tool has, is [`ServeError::Config`], and a reach to a tool that is not
    /// served [`ServeError::MissingReach`]; either changes nothing.
    pub fn add(&self, tool: Arc<dyn AgentTool>) -> Result<(), ServeError> {
        let name = tool.name().to_owned();
        check_tool_name(&name).map_err(|error| ServeError::Config(error.to_string()))?;
        let entry = Entry::new((self.0.wrap)(tool), self.0.declared());
        self.0
            .change(|list| {
                if list.iter().any(|e| e.tool.name() == name) {
                    return Err(ServeError::Config(format!(
                        "a tool named {name:?} is served already (replace it instead)"
                    )));
                }
                list.push(entry);
                check_list_reaches(list)?;
                Ok(true)
            })
            .map(drop)
    }

    /// Serves `tool` in place of the served tool of the same name, at its position. No
    /// such tool is [`ServeError::Config`], and a reach to a tool that is not served
    /// [`ServeError::MissingReach`]; either changes nothing.
    pub fn replace(&self, tool: Arc<dyn AgentTool>) -> Result<(), ServeError> {
        let name = tool.name().to_owned();
        let entry = Entry::new((self.0.wrap)(tool), self.0.declared());
        self.0
            .change(|list| {
                let Some(slot) = list.iter_mut().find(|e| e.tool.name() == name) else {
                    return Err(ServeError::Config(format!(
                        "no tool named {name:?} is served (add it instead)"
                    )));
                };
                *slot = entry;
                check_list_reaches(list)?;
                Ok(true)
            })
            .map(drop)
    }

    /// Stops serving the tool `name`; `false` (and no notification) when none is served.
    /// Calls already running end as they would. A served tool that reaches `name` stays
    /// served; its nested calls of `name` then fail with `Tool name not found`.
    pub fn remove(&self, name: &str) -> bool {
        self.0
            .change(|list| {
                let before = list.len();
                list.retain(|e| e.tool.name() != name);
                Ok(list.len() != before)
            })
            .unwrap_or(false)
    }
}

/// The task support `tool` declares, unless `overrides` has its name.
pub(crate) fn effective_support(
    tool: &dyn AgentTool,
    overrides: &std::collections::HashMap<String, TaskSupport>,
) -> Option<TaskSupport> {
    overrides
        .get(tool.name())
        .copied()
        .or(tool.spec().task_support)
        .filter(|support| *support != TaskSupport::Forbidden)
}

/// How often a session's forwarding task looks whether its session has ended.
const SESSION_CHECK: Duration = Duration::from_secs(30);

/// Sends `notifications/tools/list_changed` to `peer` (a session before 2026-07-28) on
/// every change of the list, until the session ends.
pub(crate) async fn forward_list_changes(
    mut changes: broadcast::Receiver<()>,
    peer: Peer<RoleServer>,
) {
    let mut check = tokio::time::interval(SESSION_CHECK);
    loop {
        tokio::select! {
            change = changes.recv() => match change {
                Ok(()) | Err(RecvError::Lagged(_)) => {
                    if peer.notify_tool_list_changed().await.is_err() {
                        return;
                    }
                }
                Err(RecvError::Closed) => return,
            },
            _ = check.tick() => {
                if peer.is_transport_closed() {
                    return;
                }
            }
        }
    }
}
