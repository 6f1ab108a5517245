//! The session's tool registry: which tools exist, who owns them, which are active.
//!
//! Sources, in registry order (Pi's `_refreshToolRegistry`, SEMANTICS.md §3.2):
//! extension tools in load order (each extension's in registration order), then the
//! builder's custom tools. The allowlist (`tools`) and `exclude_tools` filter **the
//! registry itself**: a tool that is not allowed does not exist, and activating it by
//! name is reported as unknown.
//!
//! **Names are unique.** Pi lets a later source silently win (custom tools over
//! extensions, the first of two extensions, the last of one extension's registrations).
//! pi-tool refuses any name claimed by two owners, naming both; only an owner
//! re-registering its own tool replaces it (in place). See `docs/differences-from-pi.md`.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use crate::pack::{PackError, ToolOwner};
use pi_tool_core::AgentTool;

/// The owner of the builder's custom tools.
pub const CUSTOM_TOOLS_OWNER: &str = "custom tools";

/// Where a registered tool came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolSource {
    /// Registered by an extension (Pi's `inline`).
    Extension,
    /// Given to the session builder (Pi's `sdk`).
    Custom,
}

impl ToolSource {
    /// Pi's name for the source (`inline`, `sdk`).
    pub fn as_pi_str(self) -> &'static str {
        match self {
            ToolSource::Extension => "inline",
            ToolSource::Custom => "sdk",
        }
    }
}

/// One registered tool.
#[derive(Clone)]
#[non_exhaustive]
pub struct RegisteredTool {
    /// The definition (also its spec: name, snippet, guidelines).
    pub definition: Arc<dyn AgentTool>,
    /// Who registered it.
    pub owner: ToolOwner,
    /// Where it came from.
    pub source: ToolSource,
}

impl RegisteredTool {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.definition.spec().name
    }
}

impl fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.name())
            .field("owner", &self.owner)
            .field("source", &self.source)
            .finish()
    }
}

/// Two or more owners claimed the same names.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DuplicateToolError {
    /// Every conflict: name, first owner, second owner.
    pub conflicts: Vec<PackError>,
}

impl fmt::Display for DuplicateToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, conflict) in self.conflicts.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            conflict.fmt(f)?;
        }
        Ok(())
    }
}

impl std::error::Error for DuplicateToolError {}

/// The allowlist / exclude filter (Pi's `isAllowedTool`).
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolFilter {
    pub(crate) allowed: Option<Vec<String>>,
    pub(crate) excluded: HashSet<String>,
}

impl ToolFilter {
    pub(crate) fn allows(&self, name: &str) -> bool {
        self.allowed
            .as_ref()
            .is_none_or(|a| a.iter().any(|n| n == name))
            && !self.excluded.contains(name)
    }
}

/// Checks that no name has two owners (before filtering: a conflict is a bug in the
/// host's setup whether or not the allowlist happens to hide it).
pub(crate) fn check_unique<'a>(
    tools: impl IntoIterator<Item = (&'a ToolOwner, &'a Arc<dyn AgentTool>)>,
) -> Result<(), DuplicateToolError> {
    let mut seen: Vec<(&str, &ToolOwner)> = Vec::new();
    let mut conflicts = Vec::new();
    for (owner, definition) in tools {
        let name = definition.spec().name.as_str();
        // An extension's own re-registrations were already collapsed (replace in place),
        // so any repeat here is two owners, or one name twice in the custom tools list.
        match seen.iter().find(|(n, _)| *n == name) {
            Some((_, first)) => conflicts.push(PackError::Duplicate {
                name: name.to_owned(),
                first: (*first).clone(),
                second: owner.clone(),
            }),
            None => seen.push((name, owner)),
        }
    }
    if conflicts.is_empty() {
        Ok(())
    } else {
        Err(DuplicateToolError { conflicts })
    }
}

/// Builds the filtered registry in source order. Names must already be unique.
pub(crate) fn build_registry(
    tools: impl IntoIterator<Item = RegisteredTool>,
    filter: &ToolFilter,
) -> Vec<RegisteredTool> {
    tools
        .into_iter()
        .filter(|t| filter.allows(t.name()))
        .collect()
}

/// How the active list is recomputed after the registry changed.
pub(crate) enum Refresh<'a> {
    /// Construction: requested names, then every registered tool (Pi's
    /// `includeAllExtensionTools`).
    IncludeAll {
        /// The allowlist as requested names (in its order).
        requested: &'a [String],
    },
    /// A tool registered at run time: the previous active names, then names new to
    /// the registry.
    Runtime {
        /// The active names before the change.
        previous_active: &'a [String],
        /// The registry's names before the change.
        previous_names: &'a [String],
    },
}

/// Pi's active-name computation (SEMANTICS.md §3.2), de-duplicated.
pub(crate) fn next_active(
    registry: &[RegisteredTool],
    filter: &ToolFilter,
    refresh: Refresh<'_>,
) -> Vec<String> {
    let exists = |n: &str| registry.iter().any(|t| t.name() == n);
    let mut next: Vec<String> = Vec::new();
    let mut push = |n: &str| {
        if exists(n) && filter.allows(n) && !next.iter().any(|x| x == n) {
            next.push(n.to_owned());
        }
    };
    match refresh {
        Refresh::IncludeAll { requested } => {
            requested.iter().for_each(|n| push(n));
            registry.iter().for_each(|t| push(t.name()));
        }
        Refresh::Runtime {
            previous_active,
            previous_names,
        } => {
            previous_active.iter().for_each(|n| push(n));
            if filter.allowed.is_some() {
                // Pi: with an allowlist every refresh re-adds every allowed tool.
                registry.iter().for_each(|t| push(t.name()));
            } else {
                registry
                    .iter()
                    .filter(|t| !previous_names.iter().any(|p| p == t.name()))
                    .for_each(|t| push(t.name()));
            }
        }
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(names: &[&str]) -> Vec<RegisteredTool> {
        names
            .iter()
            .map(|n| {
                let schema = Arc::new(crate::schema::ToolSchema::from_json(
                    serde_json::json!({"type": "object"}),
                ));
                let spec = pi_tool_core::ToolSpec::new(*n, "d", schema);
                RegisteredTool {
                    definition: Arc::new(SpecOnly(spec)) as Arc<dyn AgentTool>,
                    owner: ToolOwner::new("o"),
                    source: ToolSource::Custom,
                }
            })
            .collect()
    }

    struct SpecOnly(pi_tool_core::ToolSpec);

    #[async_trait::async_trait]
    impl AgentTool for SpecOnly {
        fn spec(&self) -> &pi_tool_core::ToolSpec {
            &self.0
        }
        async fn execute(
            &self,
            _call: crate::ToolInvocation<'_>,
        ) -> Result<pi_tool_core::JsonToolResult, pi_tool_core::ToolError> {
            Ok(pi_tool_core::JsonToolResult::error("unused"))
        }
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn construction_activates_the_allowlist_order_then_the_registry_order() {
        let registry = tools(&["a", "b", "c"]);
        let filter = ToolFilter {
            allowed: Some(strings(&["c", "a", "zz"])),
            excluded: HashSet::new(),
        };
        let registry = build_registry(registry, &filter);
        let requested = strings(&["c", "a", "zz"]);
        let active = next_active(
            &registry,
            &filter,
            Refresh::IncludeAll {
                requested: &requested,
            },
        );
        assert_eq!(active, ["c", "a"]);
    }

    #[test]
    fn a_runtime_refresh_keeps_deactivated_tools_off_and_adds_only_new_ones() {
        let filter = ToolFilter::default();
        let registry = tools(&["a", "b", "new"]);
        let active = next_active(
            &registry,
            &filter,
            Refresh::Runtime {
                previous_active: &strings(&["b"]),
                previous_names: &strings(&["a", "b"]),
            },
        );
        assert_eq!(active, ["b", "new"]);
        // With an allowlist Pi re-adds every allowed tool on any refresh (SEMANTICS §8.11).
        let filter = ToolFilter {
            allowed: Some(strings(&["a", "b", "new"])),
            excluded: HashSet::new(),
        };
        let active = next_active(
            &registry,
            &filter,
            Refresh::Runtime {
                previous_active: &strings(&["b"]),
                previous_names: &strings(&["a", "b"]),
            },
        );
        assert_eq!(active, ["b", "a", "new"]);
    }

    #[test]
    fn excludes_win_over_the_allowlist_and_conflicts_name_both_owners() {
        let filter = ToolFilter {
            allowed: Some(strings(&["a"])),
            excluded: ["a".to_owned()].into_iter().collect(),
        };
        assert!(!filter.allows("a"));
        let one = tools(&["x"]).remove(0);
        let mut two = tools(&["x"]).remove(0);
        two.owner = ToolOwner::new("p");
        let error = check_unique([(&one.owner, &one.definition), (&two.owner, &two.definition)])
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "tool name \"x\" is registered twice: by o and by p"
        );
    }
}
