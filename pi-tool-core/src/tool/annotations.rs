//! Declared effects: what a tool says it does to the world, with MCP's `ToolAnnotations`
//! meanings (spec 2025-06-18 and 2025-11-25).
//!
//! Every hint is a tri-state: `Some(true)`, `Some(false)`, or `None` (not declared).
//! "Not declared" is published as an absent field, so an MCP client applies MCP's own
//! defaults (`readOnlyHint` false, `destructiveHint` true, `idempotentHint` false,
//! `openWorldHint` true); pi-tool's runtime reads an absent hint with the same defaults
//! ([`ToolAnnotations::effective_destructive`], [`ToolAnnotations::effective_open_world`]).
//! So a tool that declares nothing is treated as MCP treats it: it may change and reach
//! anything. `destructive` and `idempotent` mean something only for a tool that is not
//! read-only (MCP's rule), which is why `#[pi_tool]` rejects them next to `read_only`.

use std::borrow::Cow;

/// A tool's declared effects (MCP's `ToolAnnotations`): hints for approval, scheduling
/// and clients, never a security boundary (a tool's own code decides what it does).
///
/// ```
/// use pi_tool_core::ToolAnnotations;
///
/// let lookup = ToolAnnotations::new().read_only(true).open_world(true);
/// assert!(!lookup.needs_approval());
/// assert!(ToolAnnotations::new().needs_approval()); // MCP's defaults: destructive, open world
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// The tool does not change its environment (MCP's `readOnlyHint`).
    pub read_only: Option<bool>,
    /// The tool may destroy or overwrite, not only add (MCP's `destructiveHint`; absent
    /// means `true`). Meaningful only when the tool is not read-only.
    pub destructive: Option<bool>,
    /// Calling it again with the same arguments has no further effect (MCP's
    /// `idempotentHint`). Meaningful only when the tool is not read-only.
    pub idempotent: Option<bool>,
    /// The tool reaches an open world (the web, other people's systems) rather than a
    /// closed one such as a local store (MCP's `openWorldHint`; absent means `true`).
    pub open_world: Option<bool>,
    /// A human title (MCP's `annotations.title`).
    pub title: Option<Cow<'static, str>>,
}

impl ToolAnnotations {
    /// Nothing declared.
    pub const NONE: ToolAnnotations = ToolAnnotations {
        read_only: None,
        destructive: None,
        idempotent: None,
        open_world: None,
        title: None,
    };

    /// Nothing declared (the same as [`Self::NONE`]).
    pub const fn new() -> Self {
        Self::NONE
    }

    /// Every field at once, in a `const` (what `#[pi_tool]` generates).
    pub const fn declared(
        read_only: Option<bool>,
        destructive: Option<bool>,
        idempotent: Option<bool>,
        open_world: Option<bool>,
        title: Option<&'static str>,
    ) -> Self {
        ToolAnnotations {
            read_only,
            destructive,
            idempotent,
            open_world,
            title: match title {
                Some(t) => Some(Cow::Borrowed(t)),
                None => None,
            },
        }
    }

    /// Sets `read_only`.
    #[must_use]
    pub fn read_only(mut self, value: bool) -> Self {
        self.read_only = Some(value);
        self
    }

    /// Sets `destructive`.
    #[must_use]
    pub fn destructive(mut self, value: bool) -> Self {
        self.destructive = Some(value);
        self
    }

    /// Sets `idempotent`.
    #[must_use]
    pub fn idempotent(mut self, value: bool) -> Self {
        self.idempotent = Some(value);
        self
    }

    /// Sets `open_world`.
    #[must_use]
    pub fn open_world(mut self, value: bool) -> Self {
        self.open_world = Some(value);
        self
    }

    /// Sets the title.
    #[must_use]
    pub fn title(mut self, title: impl Into<Cow<'static, str>>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// MCP's `annotations` object (`title`, `readOnlyHint`, `destructiveHint`,
    /// `idempotentHint`, `openWorldHint`), with only what was declared; `None` when
    /// nothing was.
    pub fn mcp_json(&self) -> Option<serde_json::Value> {
        if self.is_empty() {
            return None;
        }
        let mut m = serde_json::Map::new();
        if let Some(title) = &self.title {
            m.insert("title".into(), title.to_string().into());
        }
        for (key, value) in [
            ("readOnlyHint", self.read_only),
            ("destructiveHint", self.destructive),
            ("idempotentHint", self.idempotent),
            ("openWorldHint", self.open_world),
        ] {
            if let Some(value) = value {
                m.insert(key.into(), value.into());
            }
        }
        Some(serde_json::Value::Object(m))
    }

    /// Whether nothing is declared (no hint, no title).
    pub fn is_empty(&self) -> bool {
        *self == Self::NONE
    }

    /// Whether the tool declared itself read-only.
    pub fn is_read_only(&self) -> bool {
        self.read_only == Some(true)
    }

    /// `destructive` with MCP's default: `false` for a read-only tool, `true` when absent.
    pub fn effective_destructive(&self) -> bool {
        !self.is_read_only() && self.destructive.unwrap_or(true)
    }

    /// `open_world` with MCP's default: `true` when absent.
    pub fn effective_open_world(&self) -> bool {
        self.open_world.unwrap_or(true)
    }

    /// Whether a permission gate should ask before a call: never for a read-only tool;
    /// otherwise when the tool is destructive or open-world, with MCP's defaults for
    /// what it did not declare (see pi-tool's `agent::ApprovalPolicy`).
    pub fn needs_approval(&self) -> bool {
        !self.is_read_only() && (self.effective_destructive() || self.effective_open_world())
    }
}

#[cfg(test)]
mod tests {
    use super::ToolAnnotations;

    #[test]
    fn mcp_defaults_decide_what_is_not_declared() {
        assert!(ToolAnnotations::NONE.needs_approval());
        assert!(!ToolAnnotations::new().read_only(true).needs_approval());
        // Read-only wins over open world: a web search changes nothing.
        assert!(
            !ToolAnnotations::new()
                .read_only(true)
                .open_world(true)
                .needs_approval()
        );
        // Not destructive but (by default) open world: ask.
        assert!(ToolAnnotations::new().destructive(false).needs_approval());
        assert!(
            !ToolAnnotations::new()
                .destructive(false)
                .open_world(false)
                .needs_approval()
        );
        assert!(
            ToolAnnotations::new()
                .destructive(true)
                .open_world(false)
                .needs_approval()
        );
    }

    #[test]
    fn declared_builds_in_a_const() {
        const A: ToolAnnotations =
            ToolAnnotations::declared(Some(true), None, None, Some(false), Some("Weather"));
        assert_eq!(
            A,
            ToolAnnotations::new()
                .read_only(true)
                .open_world(false)
                .title("Weather")
        );
        assert!(!A.is_empty());
        assert_eq!(
            A.mcp_json(),
            Some(
                serde_json::json!({"title": "Weather", "readOnlyHint": true, "openWorldHint": false})
            )
        );
        assert_eq!(ToolAnnotations::NONE.mcp_json(), None);
        assert!(ToolAnnotations::NONE.is_empty());
    }
}
