//! What a tool's types must be, as pi-tool's own traits, so that a type that is not one
//! gets one error naming the pi-tool fix: [`Tool::Params`](crate::Tool::Params) is a
//! [`ToolParams`], [`Tool::Details`](crate::Tool::Details) a [`ToolDetails`], and the `T` of
//! a `Json<T>` result a [`ToolOutput`] (checked where `#[pi_tool]` generates the output
//! schema, only once `T` is a `ToolDetails`: [`OutputProbe`] says why). Each is spanned on the user's type as written.
//!
//! Why these traits have no serde or schemars supertraits, and reach serde through hidden
//! methods instead: rustc checks an associated type's bounds with their supertraits
//! elaborated, and reports each failing supertrait on its own, as `Deserialize` and
//! `JsonSchema` errors with the list of every type that implements them. A trait whose
//! only supertraits are `Send + 'static` fails as itself, and with
//! `#[diagnostic::do_not_recommend]` on its one blanket impl rustc reports it with its
//! `on_unimplemented` text: one mistake, one error. Generic code over a `Tool` reads the
//! params and writes the details through these traits' methods, which the blanket impls
//! forward to serde and schemars.
//!
//! The fourth rule, that a tool's future is `Send`, is the plain bound of
//! `tool_future_must_be_send` (which says why).

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::details::JsonDetails;
use crate::error::ToolError;
use crate::schema::{OutputSchema, ToolSchema};

/// A type a tool can take as its params: read from the model's JSON arguments
/// (`Deserialize`, into owned values) and described to the model (`JsonSchema`).
/// `#[pi_tool::params]` derives both; every such type is a `ToolParams`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's params type: it is not `Deserialize` + `JsonSchema`",
    label = "the model's arguments are read into this type and described by its schema",
    note = "put `#[pi_tool::params]` on `{Self}`: it derives `Deserialize` and `JsonSchema` through pi-tool; each field must be an owned type both support (`String`, numbers, `bool`, `Vec<T>`, `Option<T>`, maps with string keys, other `#[pi_tool::params]` types), not a reference or a type such as `std::time::Instant`"
)]
pub trait ToolParams: Send + 'static {
    /// The params' schema, generated and normalised once per type.
    #[doc(hidden)]
    fn __tool_schema() -> Arc<ToolSchema>
    where
        Self: Sized;

    /// Validated arguments read into the params
    /// ([`deserialize_params`](crate::schema::deserialize_params)).
    #[doc(hidden)]
    fn __from_arguments(tool_name: &str, arguments: &Value) -> Result<Self, ToolError>
    where
        Self: Sized;
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + JsonSchema + Send + 'static> ToolParams for T {
    #[inline]
    fn __tool_schema() -> Arc<ToolSchema> {
        ToolSchema::for_type::<T>()
    }

    #[inline]
    fn __from_arguments(tool_name: &str, arguments: &Value) -> Result<Self, ToolError> {
        crate::schema::deserialize_params::<T>(tool_name, arguments)
    }
}

/// A type a field of a `#[pi_tool::params]` type can have: read from JSON into an owned
/// value (`Deserialize`) and described in the schema (`JsonSchema`).
///
/// `#[pi_tool::params]` checks each field against it, on the field's type. A field with
/// its own `#[serde(with = ...)]`, `skip` or `flatten` is not checked (its type is not
/// what serde reads), nor are the fields of a generic type.
#[diagnostic::on_unimplemented(
    message = "a params field cannot be `{Self}`: it is not `Deserialize` + `JsonSchema`",
    label = "the model sends this field as JSON, described by the params schema",
    note = "put `#[pi_tool::params]` on your own type (`{Self}`, or the type it holds): it derives `Deserialize` and `JsonSchema` through pi-tool; otherwise use a type the model can send as JSON: `String`, numbers, `bool`, `Vec<T>`, `Option<T>`, maps with string keys (for a point in time, a timestamp such as `u64` seconds or an RFC 3339 `String`)"
)]
pub trait ParamsField: DeserializeOwned + JsonSchema {}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + JsonSchema> ParamsField for T {}

/// A type a tool can return as `Json<T>`: described by an output schema (`JsonSchema`).
/// As the tool's details type it is a [`ToolDetails`] (`Serialize`) too, which
/// `#[pi_tool]` checks on its own.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a structured result: it is not `JsonSchema`",
    label = "`Json<{Self}>` sends this value with its schema as the tool's output schema",
    note = "put `#[pi_tool::output]` on `{Self}`: it derives `Serialize` and `JsonSchema` through pi-tool"
)]
pub trait ToolOutput: 'static {
    /// The output schema, generated and normalised once per type.
    #[doc(hidden)]
    fn __output_schema() -> Arc<OutputSchema>
    where
        Self: Sized;
}

#[diagnostic::do_not_recommend]
impl<T: JsonSchema + 'static> ToolOutput for T {
    #[inline]
    fn __output_schema() -> Arc<OutputSchema> {
        OutputSchema::for_type::<T>()
    }
}

/// A type a tool's results and progress updates can carry as details: sent to hosts and
/// UIs as JSON (`Serialize`), never to the model. Every `Serialize + Send + 'static`
/// type is one.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's details or structured result: it is not `Serialize`",
    label = "results and progress updates carry this type to hosts as JSON",
    note = "put `#[pi_tool::output]` on `{Self}`: it derives `Serialize` and `JsonSchema` through pi-tool (a `Json<{Self}>` result needs both, the details of an `AgentToolResult<{Self}>` only `serde::Serialize`); a tool without details returns text (`Result<String, ToolError>`)"
)]
pub trait ToolDetails: Send + 'static {
    /// The details as JSON text, serialised once
    /// ([`JsonDetails::from_typed`](crate::JsonDetails::from_typed)).
    #[doc(hidden)]
    fn __to_json(&self) -> Result<JsonDetails, serde_json::Error>;
}

#[diagnostic::do_not_recommend]
impl<T: Serialize + Send + 'static> ToolDetails for T {
    #[inline]
    fn __to_json(&self) -> Result<JsonDetails, serde_json::Error> {
        JsonDetails::from_typed(self)
    }
}

/// What `#[pi_tool]` calls for the output schema of a tool that returns `Json<T>`, as
/// `(&&OutputProbe::<T>::NEW).__output_schema()` spanned on the user's `T`. The one
/// method of that name that applies is picked by its receiver (autoref specialisation):
///
/// * `T` is a [`ToolDetails`] (`Serialize`): [`CheckOutputSchema`], whose method requires
///   `T:` [`ToolOutput`] (`JsonSchema`), so a `T` without `JsonSchema` is one error on
///   the user's `T`, with `ToolOutput`'s text;
/// * `T` is not: [`SkipOutputSchema`], which requires nothing. `Tool::Details = T`
///   already reports that `T` is not `Serialize`, and its text names
///   `#[pi_tool::output]`, the fix for both; a second error about `JsonSchema` would
///   only repeat the mistake.
///
/// A `T` without either derive is therefore one error, not two.
#[doc(hidden)]
pub struct OutputProbe<T>(PhantomData<fn() -> T>);

impl<T> OutputProbe<T> {
    /// The probe.
    pub const NEW: Self = OutputProbe(PhantomData);
}

/// The output schema of a `Json<T>` tool whose `T` is `Serialize` ([`OutputProbe`]).
#[doc(hidden)]
pub trait CheckOutputSchema<T> {
    /// `T`'s output schema; `T` must be `JsonSchema`.
    fn __output_schema(&self) -> Option<Arc<OutputSchema>>
    where
        T: ToolOutput;
}

impl<T: ToolDetails> CheckOutputSchema<T> for &OutputProbe<T> {
    #[inline]
    fn __output_schema(&self) -> Option<Arc<OutputSchema>>
    where
        T: ToolOutput,
    {
        Some(T::__output_schema())
    }
}

/// No output schema, and no second error, for a `Json<T>` tool whose `T` is not
/// `Serialize` ([`OutputProbe`]): the build has failed on that already.
#[doc(hidden)]
pub trait SkipOutputSchema {
    /// Nothing.
    fn __output_schema(&self) -> Option<Arc<OutputSchema>>;
}

impl<T> SkipOutputSchema for OutputProbe<T> {
    #[inline]
    fn __output_schema(&self) -> Option<Arc<OutputSchema>> {
        None
    }
}

#[doc(hidden)]
/// Names the type of a field of a `#[pi_tool::params]` type that is a [`ParamsField`];
/// the attribute writes it in a signature.
pub struct IsParamsField<T: ParamsField>(PhantomData<T>);

/// Reads and describes a field of a `#[pi_tool::params]` struct whose type pi-tool does
/// not know (`location: Location`): the attribute writes
/// `#[serde(deserialize_with = "ParamsFieldOf::<T>::field")]` and
/// `#[schemars(schema_with = "ParamsFieldOf::<T>::field")]` on it, spanned on the field's
/// type. [`field`](Self::field) does what the derives do without them (`T::deserialize`,
/// `subschema_for::<T>()`), so the params are read and described as before.
///
/// Why one function for both: a `T` without `Deserialize` or `JsonSchema` then fails one
/// bound, `T: ParamsField` of `field`, at the same tokens wherever the derives call it,
/// and rustc reports that identical error once, instead of three serde errors and one
/// schemars error.
#[doc(hidden)]
pub struct ParamsFieldOf<T>(PhantomData<fn() -> T>);

impl<T> ParamsFieldOf<T> {
    /// The field read from a serde deserializer, or its schema from a schemars generator.
    #[inline]
    pub fn field<A, M>(argument: A) -> A::Output<T>
    where
        A: FieldArgument<M>,
        T: ParamsField,
    {
        argument.field::<T>()
    }
}

/// What [`ParamsFieldOf::field`] is called with: a serde `Deserializer` ([`ViaSerde`]) or
/// schemars' generator ([`ViaSchemars`]).
#[doc(hidden)]
pub trait FieldArgument<M> {
    /// What the field gives with this argument.
    type Output<T>;

    /// The field read or described.
    fn field<T: ParamsField>(self) -> Self::Output<T>;
}

/// [`FieldArgument`] for a serde `Deserializer<'de>`.
#[doc(hidden)]
pub struct ViaSerde<'de>(PhantomData<&'de ()>);

/// [`FieldArgument`] for schemars' generator.
#[doc(hidden)]
pub struct ViaSchemars;

impl<'de, D: serde::Deserializer<'de>> FieldArgument<ViaSerde<'de>> for D {
    type Output<T> = Result<T, D::Error>;

    #[inline]
    fn field<T: ParamsField>(self) -> Result<T, D::Error> {
        T::deserialize(self)
    }
}

impl FieldArgument<ViaSchemars> for &mut schemars::SchemaGenerator {
    type Output<T> = schemars::Schema;

    #[inline]
    fn field<T: ParamsField>(self) -> schemars::Schema {
        self.subschema_for::<T>()
    }
}

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
