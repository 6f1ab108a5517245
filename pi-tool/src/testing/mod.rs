//! A testing kit for tools: call one tool in two lines, and check that every tool of a pack
//! accepts whatever its own schema allows.
//!
//! # The model
//!
//! A tool is tested where hosts run it. Nothing here calls `execute` directly:
//!
//! * [`call`] takes a typed tool and **typed params**, serialises the params to JSON and
//!   sends them down the real call path ([`call_contained`](crate::call_contained)):
//!   `prepare_arguments`, validation against the schema the model sees, serde, `execute`,
//!   with panics and timeouts contained. The [`ToolRun`] it returns holds the progress
//!   updates and the result or the error, with typed details when the details type is
//!   `Deserialize`. [`call_json`] sends raw JSON arguments instead (to test the validation
//!   text a model gets), [`call_tool`] calls an `Arc<dyn AgentTool>`.
//! * [`SchemaModel`] is a model (a [`StreamFn`](crate::model::StreamFn)) in the spirit of
//!   pydantic-ai's `TestModel`: it calls every tool it is given with arguments generated
//!   from the tool's own schema (every property, the bounds, enums, formats, optional
//!   properties present and absent, union branches, nested and recursive types), through
//!   the real agent loop, then answers in text.
//! * [`assert_pack_accepts_its_schema`] runs that model over a pack and fails when a tool
//!   refuses arguments its own schema allows: the schema says yes, serde says no (a
//!   `u32` the schema gives no bound, a custom `Deserialize`, a root union the schema had
//!   to merge), or the tool panics. [`check_schema`] returns the [`SchemaReport`] instead.
//!
//! ```
//! use pi_tool::{AbortSignal, AgentToolResult, OnUpdate, ToolError, pi_tool, testing, tool_pack};
//!
//! #[pi_tool::params]
//! #[derive(serde::Serialize)]
//! struct AddParams {
//!     /// The numbers to add, one to ten of them.
//!     #[schemars(length(min = 1, max = 10))]
//!     numbers: Vec<i32>,
//! }
//!
//! /// Add numbers.
//! #[pi_tool(name = "add")]
//! async fn add(
//!     params: AddParams,
//!     on_update: OnUpdate<i64>,
//! ) -> Result<AgentToolResult<i64>, ToolError> {
//!     on_update.send(AgentToolResult::text("adding", 0));
//!     let sum: i64 = params.numbers.iter().map(|n| i64::from(*n)).sum();
//!     Ok(AgentToolResult::text(sum.to_string(), sum))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // One tool in two lines: typed params in, updates and a typed result out.
//! let run = testing::call(Add, AddParams { numbers: vec![2, 3] }).await;
//! assert_eq!((run.update_texts(), run.result().details), (vec!["adding".to_owned()], 5));
//!
//! // What the model reads when it sends too many numbers.
//! let run = testing::call_json(Add, pi_tool::json!({"numbers": vec![1; 11]})).await;
//! assert!(run.error_text().contains("numbers: must not have more than 10 items"));
//!
//! // Every tool of the pack accepts whatever its schema allows.
//! testing::assert_pack_accepts_its_schema(tool_pack![Add]).await;
//! # }
//! ```

mod call;
mod check;
mod faux;
mod generate;
mod model;
mod pattern;
mod scalars;

pub use call::{Call, CallParams, ToolRun, call, call_json, call_tool};
pub use check::{CheckedCall, SchemaReport, Verdict, assert_pack_accepts_its_schema, check_schema};
pub use faux::{FauxModel, FauxRequest, FauxTurn, REQUEST_ABORTED};
pub use model::{GeneratedCall, IntoTools, SchemaModel, SkippedCase};
