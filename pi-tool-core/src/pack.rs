//! Tool packs: the unit in which library authors ship tools and hosts mount them.
//!
//! A [`ToolPack`] is an ordered set of tools with **unique names**, each remembering its
//! [`ToolOwner`] (the crate and module that put it there). Names stay unique through every
//! operation: [`tool_pack!`](crate::tool_pack) rejects a duplicate among macro tools at
//! compile time; [`ToolPack::merge`], [`prefixed`](ToolPack::prefixed) and
//! [`renamed`](ToolPack::renamed) return a [`PackError`] naming both owners at run time.
//! Pi instead lets the first (agent) or last (extension) registration win silently; we
//! refuse, because a model calling `get_weather` should never reach a tool nobody meant.
//!
//! ```
//! use pi_tool_core::ToolSpec;
//! use pi_tool_core::pack::{ToolPack, ToolOwner};
//! use pi_tool_core::schema::ToolSchema;
//! # use pi_tool_core::{AgentTool, JsonToolResult, ToolError, ToolInvocation};
//! # use std::sync::Arc;
//! # struct Echo(ToolSpec);
//! # #[pi_tool_core::async_trait]
//! # impl AgentTool for Echo {
//! #     fn spec(&self) -> &ToolSpec { &self.0 }
//! #     async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
//! #         Ok(JsonToolResult::error(call.params.to_string()))
//! #     }
//! # }
//! # fn echo(name: &str) -> Arc<dyn AgentTool> {
//! #     let schema = Arc::new(ToolSchema::from_json(pi_tool_core::json!({"type": "object", "properties": {}})));
//! #     Arc::new(Echo(ToolSpec::new(name, "echo", schema)))
//! # }
//! let mut weather = ToolPack::new();
//! weather.push(ToolOwner::new("weather-pack"), echo("get_weather")).unwrap();
//! let mut maps = ToolPack::new();
//! maps.push(ToolOwner::new("maps-pack"), echo("get_weather")).unwrap();
//!
//! let error = weather.clone().merge(maps.clone()).unwrap_err();
//! assert_eq!(
//!     error.to_string(),
//!     "tool name \"get_weather\" is registered twice: by weather-pack and by maps-pack"
//! );
//! let both = weather.prefixed("weather_").unwrap().merge(maps).unwrap();
//! assert_eq!(both.names().collect::<Vec<_>>(), ["weather_get_weather", "get_weather"]);
//! ```

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::context::ExtensionContext;
use crate::error::ToolError;
use crate::result::JsonToolResult;
use crate::tool::{AgentTool, IntoAgentTool, ToolInvocation, ToolSpec, wrap_tool_definition};

/// The longest tool name every major provider accepts.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// Why a tool name breaks `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`, the names every major
/// provider accepts. [`check_tool_name`] returns it; its `Display` says what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolNameError {
    /// The name is empty.
    Empty,
    /// The first character is not an ASCII letter or `_`.
    BadStart {
        /// The name.
        name: String,
    },
    /// A character other than ASCII letters, digits, `_` and `-`.
    BadChar {
        /// The name.
        name: String,
        /// The first offending character.
        bad: char,
    },
    /// Longer than [`MAX_TOOL_NAME_LEN`].
    TooLong {
        /// The name.
        name: String,
    },
}

impl fmt::Display for ToolNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolNameError::Empty => f.write_str("a tool name cannot be empty"),
            ToolNameError::BadStart { name } => {
                write!(
                    f,
                    "tool name \"{name}\" must start with an ASCII letter or `_`"
                )
            }
            ToolNameError::BadChar { name, bad } => {
                write!(
                    f,
                    "tool name \"{name}\" contains `{bad}`: use ASCII letters, digits, `_` and `-`"
                )?;
                if *bad == '.' {
                    f.write_str(
                        " (MCP allows `.` in tool names, but model providers do not: pi-tool \
                         keeps to the names every provider accepts)",
                    )?;
                }
                Ok(())
            }
            ToolNameError::TooLong { name } => write!(
                f,
                "tool name \"{name}\" is {} characters long; providers accept at most {MAX_TOOL_NAME_LEN}",
                name.len()
            ),
        }
    }
}

impl std::error::Error for ToolNameError {}

/// The rule itself, over bytes so that it runs at compile time too: `#[pi_tool]` checks
/// each tool's name with it in a `const` (see `__private::assert_tool_name`), so the
/// macro's own friendlier messages can never let through a name this rejects.
enum NameProblem {
    Empty,
    BadStart,
    /// At this byte offset.
    BadChar(usize),
    TooLong,
}

const fn name_problem(name: &str) -> Option<NameProblem> {
    let bytes = name.as_bytes();
    if bytes.is_empty() {
        return Some(NameProblem::Empty);
    }
    if !(bytes[0].is_ascii_alphabetic() || bytes[0] == b'_') {
        return Some(NameProblem::BadStart);
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !(b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
            return Some(NameProblem::BadChar(i));
        }
        i += 1;
    }
    if bytes.len() > MAX_TOOL_NAME_LEN {
        return Some(NameProblem::TooLong);
    }
    None
}

/// A tool whose declared reach names a tool its host does not have (see
/// [`check_reaches`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingReach {
    /// The tool that declares the reach.
    pub tool: String,
    /// The tool it reaches, which the host does not have.
    pub missing: String,
}

impl fmt::Display for MissingReach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the tool `{}` reaches `{}`, which this host does not have: add `{}` to the host's tools, or remove it from `{}`'s `reaches`",
            self.tool, self.missing, self.missing, self.tool
        )
    }
}

impl std::error::Error for MissingReach {}

/// Checks, when tools are mounted in a host, that every tool each of them reaches
/// ([`ToolSpec::reaches`]) is among them: the first that is not, naming both.
pub fn check_reaches<'a, I>(specs: I) -> Result<(), MissingReach>
where
    I: IntoIterator<Item = &'a ToolSpec>,
    I::IntoIter: Clone,
{
    let specs = specs.into_iter();
    for spec in specs.clone() {
        for reached in &spec.reaches {
            if !specs.clone().any(|other| &other.name == reached) {
                return Err(MissingReach {
                    tool: spec.name.clone(),
                    missing: reached.clone(),
                });
            }
        }
    }
    Ok(())
}

/// Checks a tool name against `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`, the set every major
/// provider accepts; the error says what is wrong.
///
/// MCP allows more (`[A-Za-z0-9_.-]`, 1 to 64 characters, as the conformance suite checks;
/// the spec allows 128): pi-tool's rule is the provider-portable subset of MCP's, so a
/// pack served over MCP works with every provider its clients forward it to. A `.` is
/// refused with that reason. Tests: `tests/tool_names.rs`.
pub fn check_tool_name(name: &str) -> Result<(), ToolNameError> {
    let owned = || name.to_owned();
    match name_problem(name) {
        None => Ok(()),
        Some(NameProblem::Empty) => Err(ToolNameError::Empty),
        Some(NameProblem::BadStart) => Err(ToolNameError::BadStart { name: owned() }),
        Some(NameProblem::BadChar(at)) => Err(ToolNameError::BadChar {
            name: owned(),
            bad: name[at..].chars().next().unwrap_or('?'),
        }),
        Some(NameProblem::TooLong) => Err(ToolNameError::TooLong { name: owned() }),
    }
}

/// A name that [`check_tool_name`] accepts made from one it may not (a foreign tool's, an
/// MCP server's): each character outside `[A-Za-z0-9_-]` becomes `_`, and a name that does
/// not start with a letter or `_` gets a leading `_`. The length is left to the caller,
/// which knows what to keep of a long name.
///
/// ```
/// use pi_tool_core::pack::sanitize_tool_name;
/// assert_eq!(sanitize_tool_name("files.read"), "files_read");
/// assert_eq!(sanitize_tool_name("3d-render"), "_3d-render");
/// ```
pub fn sanitize_tool_name(name: &str) -> String {
    crate::tool_name_repair::repair(name)
}

/// The compile-time form of [`check_tool_name`], for generated code: panics (a compile
/// error in a `const`) with the rule when `name` breaks it.
#[doc(hidden)]
pub const fn assert_tool_name(name: &str) {
    if name_problem(name).is_some() {
        panic!(
            "this tool name breaks ^[A-Za-z_][A-Za-z0-9_-]{{0,63}}$, the names every major model provider accepts: use ASCII letters, digits, `_` and `-`, starting with a letter or `_`"
        );
    }
}

/// Who registered a tool: shown when two owners claim one name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolOwner(Arc<str>);

impl ToolOwner {
    /// An owner with a free-form name (`custom tools`, `<inline:ext-a>`, a crate name).
    pub fn new(name: impl AsRef<str>) -> Self {
        ToolOwner(Arc::from(name.as_ref()))
    }

    /// The owner recorded by [`tool_pack!`](crate::tool_pack): crate and module path.
    pub fn module(crate_name: &str, module_path: &str) -> Self {
        if module_path == crate_name.replace('-', "_") {
            ToolOwner::new(crate_name)
        } else {
            ToolOwner::new(format!("{module_path} (crate {crate_name})"))
        }
    }

    /// The owner's name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a pack operation was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PackError {
    /// Two tools would share one name.
    Duplicate {
        /// The contested name.
        name: String,
        /// The owner of the tool already in the pack.
        first: ToolOwner,
        /// The owner of the tool that was refused.
        second: ToolOwner,
    },
    /// A name (after prefixing or renaming) is not a valid tool name.
    InvalidName(ToolNameError),
    /// [`ToolPack::renamed`] named a tool the pack does not have.
    UnknownTool {
        /// The missing name.
        name: String,
    },
}

impl fmt::Display for PackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PackError::Duplicate {
                name,
                first,
                second,
            } => write!(
                f,
                "tool name \"{name}\" is registered twice: by {first} and by {second}"
            ),
            PackError::InvalidName(error) => error.fmt(f),
            PackError::UnknownTool { name } => write!(f, "the pack has no tool named \"{name}\""),
        }
    }
}

impl std::error::Error for PackError {}

/// One tool of a pack and who put it there.
#[derive(Clone)]
#[non_exhaustive]
pub struct PackEntry {
    /// The tool.
    pub tool: Arc<dyn AgentTool>,
    /// Who registered it.
    pub owner: ToolOwner,
}

impl fmt::Debug for PackEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PackEntry")
            .field("name", &self.tool.spec().name)
            .field("owner", &self.owner)
            .finish()
    }
}

/// An ordered set of tools with unique names. See the [module docs](self).
#[derive(Debug, Clone, Default)]
pub struct ToolPack {
    entries: Vec<PackEntry>,
}

impl ToolPack {
    /// An empty pack.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool at the end; refuses a name the pack already has or an invalid name.
    pub fn push(&mut self, owner: ToolOwner, tool: impl IntoAgentTool) -> Result<(), PackError> {
        self.push_tool(owner, tool.into_agent_tool())
    }

    fn push_tool(&mut self, owner: ToolOwner, tool: Arc<dyn AgentTool>) -> Result<(), PackError> {
        let name = &tool.spec().name;
        check_tool_name(name).map_err(PackError::InvalidName)?;
        if let Some(existing) = self.get_entry(name) {
            return Err(PackError::Duplicate {
                name: name.clone(),
                first: existing.owner.clone(),
                second: owner,
            });
        }
        self.entries.push(PackEntry { tool, owner });
        Ok(())
    }

    /// This pack followed by `other`; fails on the first shared name, naming both owners.
    pub fn merge(mut self, other: ToolPack) -> Result<ToolPack, PackError> {
        for entry in other.entries {
            self.push_tool(entry.owner, entry.tool)?;
        }
        Ok(self)
    }

    /// Every name prefixed (`weather_` + `get_forecast`); fails if a result is invalid.
    pub fn prefixed(self, prefix: &str) -> Result<ToolPack, PackError> {
        let mut out = ToolPack::new();
        for entry in self.entries {
            let name = format!("{prefix}{}", entry.tool.spec().name);
            out.push_tool(entry.owner, rename(entry.tool, name))?;
        }
        Ok(out)
    }

    /// Only the tools whose spec satisfies `keep`, in order.
    pub fn filter(mut self, mut keep: impl FnMut(&ToolSpec) -> bool) -> ToolPack {
        self.entries.retain(|entry| keep(entry.tool.spec()));
        self
    }

    /// The tool `from` renamed to `to`, keeping its position.
    pub fn renamed(self, from: &str, to: &str) -> Result<ToolPack, PackError> {
        if self.get_entry(from).is_none() {
            return Err(PackError::UnknownTool {
                name: from.to_owned(),
            });
        }
        let mut out = ToolPack::new();
        for entry in self.entries {
            let tool = if entry.tool.spec().name == from {
                rename(entry.tool, to.to_owned())
            } else {
                entry.tool
            };
            out.push_tool(entry.owner, tool)?;
        }
        Ok(out)
    }

    /// The names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.tool.spec().name.as_str())
    }

    /// The entries, in order.
    pub fn entries(&self) -> &[PackEntry] {
        &self.entries
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn AgentTool>> {
        self.get_entry(name).map(|e| &e.tool)
    }

    fn get_entry(&self, name: &str) -> Option<&PackEntry> {
        self.entries.iter().find(|e| e.tool.spec().name == name)
    }

    /// How many tools the pack has.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the pack is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The tools, for a host to hold. A host with a session passes each call its
    /// context; elsewhere a tool that takes one gets [`ExtensionContext::detached`].
    pub fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        self.entries.iter().map(|e| e.tool.clone()).collect()
    }

    /// The tools with `ctx_factory` building the context of each call (Pi's
    /// `wrapToolDefinition`, see [`wrap_tool_definition`]).
    pub fn tools_with_context<F>(&self, ctx_factory: F) -> Vec<Arc<dyn AgentTool>>
    where
        F: Fn() -> ExtensionContext + Clone + Send + Sync + 'static,
    {
        self.entries
            .iter()
            .map(|e| wrap_tool_definition(e.tool.clone(), ctx_factory.clone()))
            .collect()
    }
}

fn rename(tool: Arc<dyn AgentTool>, name: String) -> Arc<dyn AgentTool> {
    let mut spec = tool.spec().clone();
    spec.name = name;
    Arc::new(Renamed { inner: tool, spec })
}

struct Renamed {
    inner: Arc<dyn AgentTool>,
    spec: ToolSpec,
}

#[async_trait]
impl AgentTool for Renamed {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare_arguments<'a>(
        &self,
        arguments: &'a Value,
    ) -> Result<std::borrow::Cow<'a, Value>, ToolError> {
        self.inner.prepare_arguments(arguments)
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        self.inner.execute(call).await
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Builds a [`ToolPack`] from typed tools and `#[pi_tools]` blocks, checking at compile
/// time that their names are unique; the owner recorded is the calling crate and module.
///
/// Each item is one of:
/// - a `#[pi_tool]` tool that is a unit struct: `GetWeather`;
/// - `Type = value` for a tool with state: `GetForecastTool = almanac.get_forecast_tool()`;
/// - a `#[pi_tools]` block with its state, which brings every tool of the block:
///   `Almanac = almanac`, where `almanac` is an `Almanac` or an `Arc<Almanac>`.
///
/// ```
/// use std::sync::Arc;
///
/// use pi_tool_core::{NoParams, ToolError, pi_tool, pi_tools, tool_pack};
/// use pi_tool_core::pack::ToolPack;
///
/// /// Say hello.
/// #[pi_tool(name = "hello")]
/// async fn hello(_params: NoParams) -> Result<String, ToolError> {
///     Ok("hello".to_owned())
/// }
///
/// pub struct Greeter {
///     farewell: String,
/// }
///
/// #[pi_tools]
/// impl Greeter {
///     /// Say goodbye.
///     #[pi_tool(name = "goodbye")]
///     async fn goodbye(&self) -> Result<String, ToolError> {
///         Ok(self.farewell.clone())
///     }
///
///     /// Say goodnight.
///     #[pi_tool(name = "goodnight")]
///     async fn goodnight(&self) -> Result<String, ToolError> {
///         Ok(format!("{}, and goodnight", self.farewell))
///     }
/// }
///
/// let greeter = Arc::new(Greeter { farewell: "bye".to_owned() });
/// let pack: ToolPack = tool_pack![Hello, Greeter = greeter];
/// assert_eq!(pack.names().collect::<Vec<_>>(), ["hello", "goodbye", "goodnight"]);
/// ```
///
/// Two tools with one name do not compile: the error is on the second item.
///
/// ```compile_fail,E0277
/// use pi_tool_core::{NoParams, ToolError, pi_tool, tool_pack};
///
/// /// One.
/// #[pi_tool(name = "same")]
/// async fn one(_params: NoParams) -> Result<String, ToolError> { Ok(String::new()) }
///
/// /// Two.
/// #[pi_tool(name = "same")]
/// async fn two(_params: NoParams) -> Result<String, ToolError> { Ok(String::new()) }
///
/// let pack = tool_pack![One, Two]; // error on `Two`: it has a tool name of an earlier item
/// ```
///
/// A pack built at run time (from [`ToolPack::push`], [`merge`](ToolPack::merge) and the
/// like) checks names as it goes, and returns a [`PackError`] naming both owners.
#[macro_export]
macro_rules! tool_pack {
    ($($items:tt)*) => {
        $crate::__private::tool_pack_items!($crate; $($items)*)
    };
}

/// What an item of [`tool_pack!`](crate::tool_pack) of type `Self`, built from a `V`,
/// brings to the pack: every `#[pi_tool]` tool (built from itself) and every `#[pi_tools]`
/// block (built from itself or an `Arc` of itself, which `#[pi_tools]` implements).
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an item of `tool_pack!` (built from a `{V}`)",
    label = "not a #[pi_tool] tool or a #[pi_tools] block with its state",
    note = "an item is a #[pi_tool] tool (`GetWeather`), a tool with its value (`GetForecastTool = almanac.get_forecast_tool()`), or a #[pi_tools] block with its state (`Almanac = almanac`, an `Almanac` or an `Arc<Almanac>`)"
)]
pub trait PackItem<V = Self> {
    /// The tool names the item brings, checked unique across the pack at compile time.
    const NAMES: &'static [&'static str];

    /// The item's tools.
    fn __tools(value: V) -> Vec<Arc<dyn AgentTool>>;
}

#[diagnostic::do_not_recommend]
impl<T: crate::Tool> PackItem<T> for T {
    const NAMES: &'static [&'static str] = &[T::NAME];

    fn __tools(value: T) -> Vec<Arc<dyn AgentTool>> {
        vec![value.into_agent_tool()]
    }
}

/// A `tool_pack!` item written by its name alone (`GetWeather`): a `#[pi_tool]` tool, whose
/// unit struct `#[pi_tool]` gives this constant. Such an item's names and tools are read
/// through this trait alone, so a type that is not such a tool (a `#[pi_tools]` block's
/// state, a tool written by hand, anything else) is one error that says what to write,
/// instead of rustc's "expected value, found struct".
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be listed in `tool_pack!` by its name alone",
    label = "not a #[pi_tool] tool: write `{Self} = ...` with its value",
    note = "only a #[pi_tool] tool is listed by its name alone (`GetWeather`); a #[pi_tools] block is listed with its state (`Counter = Counter::default()`, or an `Arc<Counter>`), a tool with its value (`GetForecastTool = almanac.get_forecast_tool()`, `MyTool = MyTool`)"
)]
pub trait UnitItem: crate::Tool + Sized {
    /// The tool's value: its unit struct.
    const VALUE: Self;

    /// The tool name it brings, checked unique across the pack at compile time.
    const NAMES: &'static [&'static str] = &[Self::NAME];

    /// The item's one tool.
    fn __tools() -> Vec<Arc<dyn AgentTool>> {
        <Self as PackItem<Self>>::__tools(Self::VALUE)
    }
}

/// An item of a `tool_pack!` none of whose names an earlier item of the pack has:
/// `tool_pack!` names `<Item as NameNotRepeated<{ repeats(..) }>>::OK` per item.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` has a tool name that an earlier item of this `tool_pack!` has",
    label = "a second tool with this name",
    note = "tool names are unique in a pack: give one of them another name with #[pi_tool(name = \"...\")], or put it in its own pack and mount that with `ToolPack::prefixed`"
)]
pub trait NameNotRepeated<const REPEATED: bool> {
    /// Names the check.
    const OK: ();
}

#[diagnostic::do_not_recommend]
impl<T: ?Sized> NameNotRepeated<false> for T {
    const OK: () = ();
}

/// Whether one of `names` is one of the `earlier` items' names (const, for
/// [`tool_pack!`](crate::tool_pack)).
#[doc(hidden)]
pub const fn repeats(earlier: &[&[&str]], names: &[&str]) -> bool {
    let mut i = 0;
    while i < earlier.len() {
        let mut j = 0;
        while j < earlier[i].len() {
            let mut k = 0;
            while k < names.len() {
                if str_eq(earlier[i][j], names[k]) {
                    return true;
                }
                k += 1;
            }
            j += 1;
        }
        i += 1;
    }
    false
}

/// The pack `tool_pack!` builds: one call per pack, so that what each item adds to the
/// user's crate is only its own conversion.
#[doc(hidden)]
pub fn pack_of(owner: ToolOwner, items: Vec<Vec<Arc<dyn AgentTool>>>) -> ToolPack {
    let mut pack = ToolPack::new();
    for tool in items.into_iter().flatten() {
        // Names are unique (checked at compile time) and valid (checked by #[pi_tool]).
        if let Err(error) = pack.push_tool(owner.clone(), tool) {
            tracing::error!(%error, "tool_pack!: tool left out");
        }
    }
    pack
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_provider_rule() {
        assert!(check_tool_name("get_weather").is_ok());
        assert!(check_tool_name("_x-1").is_ok());
        assert!(check_tool_name("").is_err());
        assert!(check_tool_name("1abc").is_err());
        assert!(
            check_tool_name("get weather")
                .unwrap_err()
                .to_string()
                .contains("` `")
        );
        assert_eq!(
            check_tool_name("météo").unwrap_err().to_string(),
            "tool name \"météo\" contains `é`: use ASCII letters, digits, `_` and `-`"
        );
        assert_eq!(
            check_tool_name("1abc").unwrap_err(),
            ToolNameError::BadStart {
                name: "1abc".into()
            }
        );
        assert!(check_tool_name(&"a".repeat(64)).is_ok());
        assert!(
            check_tool_name(&"a".repeat(65))
                .unwrap_err()
                .to_string()
                .contains("at most 64")
        );
    }

    #[test]
    fn the_compile_time_check_is_the_same_rule() {
        const _: () = assert_tool_name("get_weather");
        for bad in ["", "1abc", "get weather", "météo"] {
            assert!(
                std::panic::catch_unwind(|| assert_tool_name(bad)).is_err(),
                "{bad}"
            );
        }
        assert!(std::panic::catch_unwind(|| assert_tool_name(&"a".repeat(65))).is_err());
    }

    #[test]
    fn const_repeat_finder() {
        assert!(!repeats(&[], &["a"]));
        assert!(!repeats(&[&["a", "b"]], &["c"]));
        assert!(repeats(&[&["a", "b"]], &["b"]));
        assert!(repeats(&[&["x"], &["a", "b"]], &["c", "a"]));
        assert!(!repeats(&[&["ab"]], &["a"]));
        assert!(!repeats(&[&["a"]], &[]));
    }

    #[test]
    fn owners_name_crate_and_module() {
        assert_eq!(
            ToolOwner::module("weather-pack", "weather_pack").as_str(),
            "weather-pack"
        );
        assert_eq!(
            ToolOwner::module("weather-pack", "weather_pack::tools").as_str(),
            "weather_pack::tools (crate weather-pack)"
        );
    }
}
