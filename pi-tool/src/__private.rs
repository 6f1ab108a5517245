//! What `#[pi_tool]`-generated code names. Not a public API: it changes with the macro.
//!
//! Generated code reaches everything through `::pi_tool::__private` (through
//! `<path>::__private` with `crate = "<path>"`, for a renamed or re-exported pi-tool), so a
//! crate that defines tools needs no direct dependency on serde_json or schemars. The helper traits
//! and functions here carry the rules the macro cannot check on syntax; their names and
//! `#[diagnostic::on_unimplemented]` messages are what the user reads when a rule fails,
//! so each one says what is wrong and how to fix it.

use std::pin::Pin;

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
pub use crate::context::ExtensionContext;
pub use crate::error::ToolError;
pub use crate::mode::ToolExecutionMode;
pub use crate::pack::assert_tool_name;
pub use crate::params::NoParams;
pub use crate::result::{AgentToolResult, IntoToolResult, Json, NoDetails};
pub use crate::schema::OutputSchema;
pub use crate::tool::{AgentTool, IntoAgentTool, Tool, ToolAnnotations, ToolInvocation};
pub use crate::update::OnUpdate;

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

/// The tool's future, checked for `Send` here, once, on the user's function name, with its
/// output passed through `convert`, and returned unboxed: `Typed<T>`'s one box per call
/// holds it. `Typed<T>` maps the tool's future to JSON with it too.
///
/// Why a wrapper that is always `Send`: with the future itself (an `impl Future + Send`
/// return), rustc reports a missing `Send` three times (here, on the attribute and on the
/// error type), since every future that holds it fails too. Boxing it as a
/// `dyn Future + Send` kept the one error but cost a second allocation per call; the
/// wrapper keeps the one error without it (the table in
/// `examples/weather/benches/dispatch.rs`).
///
/// Why not async blocks or `futures`' `map`: a block around the future holds it twice (as
/// its capture and as its awaited value), so boxing copies twice its size; `map` is an
/// enum with a `project_replace`, and a 200-tool crate's one-tool debug edit built about
/// 6 % slower with it than with this poll function of a few lines per tool.
///
/// A helper trait with `#[diagnostic::on_unimplemented]` was tried instead of the plain
/// `Send` bound: rustc's own "future cannot be sent between threads safely", which
/// points at the `.await` holding the value, wins over it, so the plain bound reads best.
// `inline(always)` here and on `poll`: even unoptimised builds then copy both into their
// caller's codegen unit, the tool's own module, so an edit to one tool leaves the unit
// of this module's generic items alone (`bench/compile-time/README.md`).
#[inline(always)]
pub fn tool_future_must_be_send<F, C, R>(future: F, convert: C) -> ToolFuture<F, C>
where
    F: Future + Send,
    C: Fn(F::Output) -> R + Send,
{
    ToolFuture { future, convert }
}

/// A future that [`tool_future_must_be_send`] has checked is `Send`, with its output
/// converted. Its fields are private, so that function is the only way to build one.
#[must_use = "futures do nothing unless polled"]
pub struct ToolFuture<F, C> {
    future: F,
    convert: C,
}

// SAFETY: the only constructor, `tool_future_must_be_send`, requires `F: Send` and
// `C: Send`, so every value of this type is `Send`. The impl is unconditional only so
// that a failed check is not reported again by every future that holds this one.
unsafe impl<F, C> Send for ToolFuture<F, C> {}

impl<F, C, R> Future for ToolFuture<F, C>
where
    F: Future,
    C: Fn(F::Output) -> R,
{
    type Output = R;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<R> {
        // SAFETY: `future` is pinned structurally: it is never moved out of, and
        // `ToolFuture` has no `Drop` impl and is `Unpin` only when `F` is. `convert` is
        // only borrowed.
        let this = unsafe { self.get_unchecked_mut() };
        match unsafe { Pin::new_unchecked(&mut this.future) }.poll(cx) {
            std::task::Poll::Ready(output) => std::task::Poll::Ready((this.convert)(output)),
            std::task::Poll::Pending => std::task::Poll::Pending,
        }
    }
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
