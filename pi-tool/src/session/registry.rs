//! The session's tool registry: which tools exist, who owns them, which are active.
//!
//! Sources, in registry order (Pi's `_refreshToolRegistry`, conformance/SEMANTICS.md §3.2): the
//! host's built-in tools (Pi's `read`, `bash`, ... when the host passes
//! `pi_tool_coding`'s), then extension tools in load order (each extension's in
//! registration order), then the builder's custom tools. An extension or custom tool
//! with a built-in's name **shadows** it: it takes the built-in's place in the registry
//! and the built-in is gone. The allowlist (`tools`) and `exclude_tools` filter **the
//! registry itself**: a tool that is not allowed does not exist, and activating it by
//! name is reported as unknown.
//!
//! **Names are unique** among extension and custom tools. Pi lets a later source
//! silently win (custom tools over extensions, the first of two extensions, the last of
//! one extension's registrations). pi-tool refuses any name claimed by two of those
//! owners, naming both; only an owner re-registering its own tool replaces it (in place).
//! See `docs/differences-from-pi.md`.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use crate::pack::{PackError, ToolOwner};
use pi_tool_core::AgentTool;

/// The owner of the builder's custom tools.
pub const CUSTOM_TOOLS_OWNER: &str = "custom tools";

/// Where a registered tool came from (Pi's `sourceInfo.source`). Non-exhaustive: a new
/// kind of source (MCP servers, ...) is a new variant with its own name and path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolSource {
    /// One of the host's built-in tools (Pi's `builtin`), given with
    /// [`AgentSessionBuilder::builtin_tools`](super::AgentSessionBuilder::builtin_tools).
    Builtin,
    /// Registered by an extension (Pi's `inline`).
    Extension,
    /// Given to the session builder (Pi's `sdk`).
    Custom,
    /// Offered by a [`DynamicToolset`](pi_tool_core::DynamicToolset) given to
    /// [`AgentSessionBuilder::toolset`](super::AgentSessionBuilder::toolset): an MCP
    /// server's tools. The owner and the source path name it (`<mcp:weather>`).
    Toolset,
}

impl ToolSource {
    /// Pi's name for the source (`builtin`, `inline`, `sdk`; `toolset` for a dynamic
    /// toolset's tool, which Pi 0.85 does not have).
    pub fn as_pi_str(self) -> &'static str {
        match self {
            ToolSource::Builtin => "builtin",
            ToolSource::Extension => "inline",
            ToolSource::Custom => "sdk",
            ToolSource::Toolset => "toolset",
        }
    }
}

/// Which tools a session starts without (Pi's `noTools`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NoTools {
    /// No built-in is active at the start; every built-in stays registered, so
    /// [`AgentSession::set_active_tools`](super::AgentSession::set_active_tools) can turn
    /// one on. Extension and custom tools are active as usual (Pi's `"builtin"`).
    Builtin,
    /// No tool exists at all (an empty allowlist), unless
    /// [`tools`](super::AgentSessionBuilder::tools) names some (Pi's `"all"`).
    All,
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

    /// Pi's `sourceInfo.path` for the tool: `<builtin:NAME>` for a built-in, the
    /// extension (`<inline:EXT>`) for an extension tool, `<sdk:NAME>` for a custom tool,
    /// the toolset (`<mcp:SERVER>`) for a dynamic toolset's tool.
    pub fn source_path(&self) -> String {
        match self.source {
            ToolSource::Builtin => format!("<builtin:{}>", self.name()),
            ToolSource::Extension | ToolSource::Toolset => self.owner.to_string(),
            ToolSource::Custom => format!("<sdk:{}>", self.name()),
        }
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

/// Builds the filtered registry: the built-ins in their order, then every other tool in
/// source order, a tool with a built-in's name taking that built-in's place (Pi's
/// `Map.set` on the built-ins' map). Names of the other tools must already be unique.
pub(crate) fn build_registry(
    builtins: &[RegisteredTool],
    others: impl IntoIterator<Item = RegisteredTool>,
    filter: &ToolFilter,
) -> Vec<RegisteredTool> {
    let mut registry: Vec<RegisteredTool> = builtins.to_vec();
    for tool in others {
        match registry.iter_mut().find(|t| t.name() == tool.name()) {
            Some(slot) => *slot = tool,
            None => registry.push(tool),
        }
    }
    registry.retain(|t| filter.allows(t.name()));
    registry
}

/// How the active list is recomputed after the registry changed.
pub(crate) enum Refresh<'a> {
    /// Construction (Pi's `includeAllExtensionTools`): the initially requested names,
    /// then, with an allowlist, every registered tool in registry order, and without one,
    /// every extension and custom tool in source order.
    IncludeAll {
        /// The names asked for first: the allowlist, or the built-ins active by default
        /// (none under `no_tools`), without the excluded names.
        requested: &'a [String],
        /// The extension and custom tools' names, in source order (extensions in load
        /// order, then custom tools).
        extension_and_custom: &'a [String],
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

/// Pi's active-name computation (conformance/SEMANTICS.md §3.2), de-duplicated.
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
        Refresh::IncludeAll {
            requested,
            extension_and_custom,
        } => {
            requested.iter().for_each(|n| push(n));
            if filter.allowed.is_some() {
                registry.iter().for_each(|t| push(t.name()));
            } else {
                extension_and_custom.iter().for_each(|n| push(n));
            }
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

    fn with_source(mut tools: Vec<RegisteredTool>, source: ToolSource) -> Vec<RegisteredTool> {
        for t in &mut tools {
            t.source = source;
        }
        tools
    }

    fn names(registry: &[RegisteredTool]) -> Vec<String> {
        registry.iter().map(|t| t.name().to_owned()).collect()
    }

    #[test]
    fn construction_activates_the_allowlist_order_then_the_registry_order() {
        let registry = tools(&["a", "b", "c"]);
        let filter = ToolFilter {
            allowed: Some(strings(&["c", "a", "zz"])),
            excluded: HashSet::new(),
        };
        let registry = build_registry(&[], registry, &filter);
        let requested = strings(&["c", "a", "zz"]);
        let active = next_active(
            &registry,
            &filter,
            Refresh::IncludeAll {
                requested: &requested,
                extension_and_custom: &strings(&["a", "b", "c"]),
            },
        );
        assert_eq!(active, ["c", "a"]);
    }

    #[test]
    fn a_shadowing_tool_takes_the_builtin_place_and_sources_are_reported() {
        let builtins = with_source(tools(&["read", "bash", "grep"]), ToolSource::Builtin);
        let mut others = with_source(tools(&["zz", "read"]), ToolSource::Custom);
        others[0].source = ToolSource::Extension;
        others[0].owner = ToolOwner::new("<inline:ext>");
        let registry = build_registry(&builtins, others, &ToolFilter::default());
        assert_eq!(names(&registry), ["read", "bash", "grep", "zz"]);
        let paths: Vec<String> = registry.iter().map(RegisteredTool::source_path).collect();
        assert_eq!(
            paths,
            [
                "<sdk:read>",
                "<builtin:bash>",
                "<builtin:grep>",
                "<inline:ext>"
            ]
        );
        assert_eq!(registry[1].source.as_pi_str(), "builtin");
        // Without an allowlist, construction adds extension and custom tools in source
        // order after the requested built-ins (Pi's `includeAllExtensionTools`).
        let active = next_active(
            &registry,
            &ToolFilter::default(),
            Refresh::IncludeAll {
                requested: &[],
                extension_and_custom: &strings(&["zz", "read"]),
            },
        );
        assert_eq!(active, ["zz", "read"]);
        let active = next_active(
            &registry,
            &ToolFilter::default(),
            Refresh::IncludeAll {
                requested: &strings(&["read", "bash", "edit"]),
                extension_and_custom: &strings(&["zz", "read"]),
            },
        );
        assert_eq!(active, ["read", "bash", "zz"]);
    }

    #[test]
    fn filters_apply_to_builtins_by_name() {
        let builtins = with_source(tools(&["read", "bash", "grep"]), ToolSource::Builtin);
        let filter = ToolFilter {
            allowed: None,
            excluded: ["bash".to_owned()].into_iter().collect(),
        };
        let registry = build_registry(&builtins, tools(&["bash"]), &filter);
        assert_eq!(names(&registry), ["read", "grep"]);
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
