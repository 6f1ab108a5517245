//! What a tool's types must be, as pi-tool's own traits, so that a type that is not one
//! gets an error naming the pi-tool fix: `#[pi_tool]` checks the params type against
//! [`ToolParams`], a `Json<T>` result against [`ToolOutput`] and the details type against
//! [`ToolDetails`], each spanned on the user's type.
//!
//! Each trait has the serde and schemars bounds it stands for as supertraits, and one
//! blanket impl over them marked `#[diagnostic::do_not_recommend]`: when one of those
//! bounds fails, rustc reports the trait itself, with its `on_unimplemented` text, instead
//! of the failing bound with its list of every type that implements it. The checks are
//! the `Is*` structs below, which generated code names in a signature spanned on exactly
//! the user's type: rustc checks signatures before the `Tool` impl's bounds and the
//! derives' code, and skips a later error on the same tokens that the reported trait's
//! supertraits imply, so one mistake is one error.
//!
//! The fourth rule, that a tool's future is `Send`, is the plain bound of
//! `tool_future_must_be_send` (which says why).

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A type a tool can take as its params: read from the model's JSON arguments
/// (`Deserialize`, into owned values) and described to the model (`JsonSchema`).
/// `#[pi_tool::params]` derives both.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's params type: it is not `Deserialize` + `JsonSchema`",
    label = "the model's arguments are read into this type and described by its schema",
    note = "put `#[pi_tool::params]` on `{Self}`: it derives `Deserialize` and `JsonSchema` through pi-tool; each field must be an owned type both support (`String`, numbers, `bool`, `Vec<T>`, `Option<T>`, maps with string keys, other `#[pi_tool::params]` types), not a reference or a type such as `std::time::Instant`"
)]
pub trait ToolParams: DeserializeOwned + JsonSchema + Send + 'static {}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + JsonSchema + Send + 'static> ToolParams for T {}

/// A type a field of a `#[pi_tool::params]` type can have: read from JSON into an owned
/// value (`Deserialize`) and described in the schema (`JsonSchema`).
#[diagnostic::on_unimplemented(
    message = "a params field cannot be `{Self}`: it is not `Deserialize` + `JsonSchema`",
    label = "the model sends this field as JSON, described by the params schema",
    note = "use a type the model can send as JSON: `String`, numbers, `bool`, `Vec<T>`, `Option<T>`, maps with string keys, or another `#[pi_tool::params]` type (for a point in time, a timestamp such as `u64` seconds or an RFC 3339 `String`); a field with `#[serde(with = ...)]` or `#[serde(skip)]` is not checked"
)]
pub trait ParamsField: DeserializeOwned + JsonSchema {}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + JsonSchema> ParamsField for T {}

/// A type a tool can return as `Json<T>`: sent as JSON (`Serialize`) with an output
/// schema (`JsonSchema`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a structured result: it is not `Serialize` + `JsonSchema`",
    label = "`Json<{Self}>` sends this value as JSON, with its schema as the tool's output schema",
    note = "put `#[pi_tool::output]` on `{Self}`: it derives `Serialize` and `JsonSchema` through pi-tool"
)]
pub trait ToolOutput: Serialize + JsonSchema + Send + 'static {}

#[diagnostic::do_not_recommend]
impl<T: Serialize + JsonSchema + Send + 'static> ToolOutput for T {}

/// A type a tool's results and progress updates can carry as details: sent to hosts and
/// UIs as JSON (`Serialize`), never to the model.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's details type: it is not `Serialize`",
    label = "results and progress updates carry this type to hosts as JSON",
    note = "put `#[pi_tool::output]` on `{Self}` (it derives `Serialize` and `JsonSchema` through pi-tool) or derive `serde::Serialize` for it; a tool without details returns text (`Result<String, ToolError>`)"
)]
pub trait ToolDetails: Serialize + Send + 'static {}

#[diagnostic::do_not_recommend]
impl<T: Serialize + Send + 'static> ToolDetails for T {}

#[doc(hidden)]
/// Names a params type that is a [`ToolParams`]; generated code writes it in a signature.
pub struct IsParams<T: ToolParams>(PhantomData<T>);

#[doc(hidden)]
/// Names the type of a field of a `#[pi_tool::params]` type that is a [`ParamsField`];
/// the attribute writes it in a signature.
pub struct IsParamsField<T: ParamsField>(PhantomData<T>);

#[doc(hidden)]
/// Names a `Json<T>` value type that is a [`ToolOutput`]; generated code writes it in a
/// signature.
pub struct IsOutput<T: ToolOutput>(PhantomData<T>);

#[doc(hidden)]
/// Names a details type that is a [`ToolDetails`]; generated code writes it in a signature.
pub struct IsDetails<T: ToolDetails>(PhantomData<T>);

/// The tool's future, checked for `Send` here, once, on the user's function name, with its
/// output passed through `convert`, and returned unboxed: `Typed<T>`'s one box per call
/// holds it. `Typed<T>` maps the tool's future to JSON with it too.
///
/// Why a wrapper that is always `Send`: with the future itself (an `impl Future + Send`
/// return), rustc reports a missing `Send` three times (here, on the attribute and on the
/// error type), since every future that holds it fails too. Boxing it as a
/// `dyn Future + Send` kept the one error but cost a second allocation per call; the
/// wrapper keeps the one error without it (`bench/README.md`, dispatch).
///
/// Why not async blocks or `futures`' `map`: a block around the future holds it twice (as
/// its capture and as its awaited value), so boxing copies twice its size; `map` is an
/// enum with a `project_replace`, and a 200-tool crate's one-tool debug edit built slower
/// with it than with this poll function of a few lines per tool (`bench/README.md`).
///
/// A helper trait with `#[diagnostic::on_unimplemented]` was tried instead of the plain
/// `Send` bound: rustc's own "future cannot be sent between threads safely", which
/// points at the `.await` holding the value, wins over it; with
/// `#[diagnostic::do_not_recommend]` on its impl the trait's text wins, but the note
/// naming the value and the `.await` is lost. So the bound is plain `Send`, and the fix
/// is written on its line, which rustc quotes under its note ("required by a bound in
/// `pi_tool::bounds::tool_future_must_be_send`").
// `inline(always)` here and on `poll`: even unoptimised builds then copy both into their
// caller's codegen unit, the tool's own module, so an edit to one tool leaves the unit
// of this module's generic items alone (`bench/compile-time/README.md`).
#[doc(hidden)]
#[inline(always)]
pub fn tool_future_must_be_send<F, C, R>(future: F, convert: C) -> ToolFuture<F, C>
where
    // rustc shows this line under its own "future cannot be sent between threads safely":
    F: Future + Send, // no `Rc`, `RefCell` borrow or std `MutexGuard` across an `.await`
    C: Fn(F::Output) -> R + Send,
{
    ToolFuture { future, convert }
}

/// A future that [`tool_future_must_be_send`] has checked is `Send`, with its output
/// converted. Its fields are private, so that function is the only way to build one.
#[doc(hidden)]
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
