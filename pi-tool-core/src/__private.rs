//! What `#[pi_tool]`-generated code names. Not a public API: it changes with the macro.
//!
//! Generated code reaches everything through `::pi_tool_core::__private` (through
//! `<path>::__private` with `crate = "<path>"`, for a renamed or re-exported pi-tool), so a
//! crate that defines tools needs no direct dependency on serde_json or schemars. The helper traits
//! and functions here carry the rules the macro cannot check on syntax; their names and
//! `#[diagnostic::on_unimplemented]` messages are what the user reads when a rule fails,
//! so each one says what is wrong and how to fix it.

pub use ::core::concat;
pub use ::core::fmt;
pub use ::core::future::Future;
pub use ::core::marker::Send;
pub use ::core::option::Option::{self, None, Some};
pub use ::core::result::Result;
pub use ::std::string::String;
pub use ::std::sync::Arc;
pub use ::std::time::Duration;
pub use ::std::vec::Vec;

pub use schemars;
pub use serde;
pub use serde_json;

pub use crate::abort::AbortSignal;
pub use crate::bounds::{
    CheckOutputSchema, IsParamsField, OutputProbe, ParamsFieldOf, SkipOutputSchema, ToolFuture,
    tool_future_must_be_send,
};
pub use crate::context::ExtensionContext;
pub use crate::error::ToolError;
pub use crate::mode::{ConcurrencyClass, TaskSupport, ToolExecutionMode};
pub use crate::pack::{PackItem, UnitItem, assert_tool_name};
pub use crate::params::NoParams;
pub use crate::result::{AgentToolResult, IntoToolResult, Json, NoDetails};
pub use crate::schema::OutputSchema;
pub use crate::tool::{AgentTool, IntoAgentTool, Tool, ToolAnnotations, ToolInvocation};
pub use crate::update::OnUpdate;

/// `pi_tool::pi_tool` by a glob: a `#[pi_tools]` block resolves the `#[pi_tool]` of its
/// methods through it where the module imports no `pi_tool` of its own.
pub mod pi_tool_attribute {
    pub use pi_tool_macros::pi_tool;
}

/// `pi_tool_core::pi_tool` by a glob, as [`pi_tool_attribute`] for a pack on the core.
pub mod core_pi_tool_attribute {
    pub use pi_tool_macros::core_pi_tool as pi_tool;
}

/// What `tool_pack!` forwards to, with `$crate` as the path to this crate.
pub use pi_tool_macros::tool_pack_items;

/// What a tool function may return: `Result<T, E>` with `T: IntoToolResult` (an
/// `AgentToolResult<D>` or text) and `E: Into<ToolError>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool function's return type",
    label = "a tool returns `Result<T, E>`",
    note = "return `Result<AgentToolResult<D>, E>`, `Result<String, E>` or `Result<&'static str, E>`, where `E` converts into `ToolError` (`ToolError` itself or any `std::error::Error + Send + Sync + 'static`)"
)]
pub trait ToolReturn {
    /// The details type of the success value.
    type Details: Send + 'static;
    /// Converts into what `Tool::execute` returns.
    fn into_tool_output(self) -> Result<AgentToolResult<Self::Details>, ToolError>;
}

impl<T, E> ToolReturn for Result<T, E>
where
    T: IntoToolResult,
    E: IntoToolError,
{
    type Details = T::Details;

    fn into_tool_output(self) -> Result<AgentToolResult<T::Details>, ToolError> {
        match self {
            Ok(value) => Ok(value.into_tool_result()),
            Err(error) => Err(error.into_tool_error()),
        }
    }
}

/// The error type of a tool function: anything that converts into [`ToolError`].
#[diagnostic::on_unimplemented(
    message = "the tool's error type `{Self}` does not convert into `ToolError`",
    label = "`{Self}` is not `Into<ToolError>`",
    note = "return `ToolError` (`ToolError::new(\"...\")`), or any type implementing `std::error::Error + Send + Sync + 'static`, or implement `From<{Self}> for ToolError`"
)]
pub trait IntoToolError {
    /// Converts.
    fn into_tool_error(self) -> ToolError;
}

impl<E: Into<ToolError>> IntoToolError for E {
    fn into_tool_error(self) -> ToolError {
        self.into()
    }
}

/// The default of a params field `#[pi_tool::params]` has reported as unreadable (an
/// `Instant`): the attribute's `compile_error!` stops the build of every crate that
/// expands it, so no compiled program calls this.
pub fn never_read<T>() -> T {
    unreachable!("a params field that `#[pi_tool::params]` reported as an error was read")
}

/// Converts what the tool function returned into what `Tool::execute` returns.
pub fn tool_output<T: IntoToolResult, E: IntoToolError>(
    output: Result<T, E>,
) -> Result<AgentToolResult<T::Details>, ToolError> {
    match output {
        Ok(value) => Ok(value.into_tool_result()),
        Err(error) => Err(error.into_tool_error()),
    }
}

/// `OnUpdate<D>` of the function and the details `R` of its result must be one type.
#[diagnostic::on_unimplemented(
    message = "the `OnUpdate<{Self}>` argument does not match the tool's details type `{R}`",
    label = "this must be `OnUpdate<{R}>`",
    note = "progress updates and the final result carry the same details type: use `OnUpdate<{R}>`, or return `AgentToolResult<{Self}>`"
)]
pub trait SameDetails<R> {
    /// Identity.
    fn convert(on_update: OnUpdate<R>) -> OnUpdate<Self>
    where
        Self: Sized;
}

impl<R> SameDetails<R> for R {
    fn convert(on_update: OnUpdate<R>) -> OnUpdate<R> {
        on_update
    }
}

/// Passes the tool's `OnUpdate<R>` to a function argument declared `OnUpdate<D>`.
pub fn on_update_argument<D: SameDetails<R>, R>(on_update: OnUpdate<R>) -> OnUpdate<D> {
    D::convert(on_update)
}

/// Trims a description assembled with `concat!` (docs with `include_str!`), at compile time.
pub const fn trim_doc(text: &'static str) -> &'static str {
    text.trim_ascii()
}

/// The session's context, or a context of no session where the host has none.
pub fn context_or_detached(context: Option<ExtensionContext>) -> ExtensionContext {
    context.unwrap_or_else(ExtensionContext::detached)
}

/// How many schemas this process has compiled (tests that prove schemas are built once).
pub fn schema_builds() -> usize {
    crate::schema::SCHEMA_BUILDS.load(std::sync::atomic::Ordering::Relaxed)
}
