//! [`SchemaModel`]: a model that calls every tool with arguments generated from the
//! tool's own schema.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::model::{
    AssistantContent, AssistantMessageStream, Context, Model, StreamFn, StreamOptions,
};
use crate::pack::ToolPack;
use crate::testing::{FauxModel, FauxTurn};
use pi_tool_core::AgentTool;

use super::generate;

/// The tools a [`SchemaModel`] or a schema check covers: a [`ToolPack`] or a list of
/// `Arc<dyn AgentTool>`.
pub trait IntoTools {
    /// The tools, in order.
    fn into_tools(self) -> Vec<Arc<dyn AgentTool>>;
}

impl IntoTools for ToolPack {
    fn into_tools(self) -> Vec<Arc<dyn AgentTool>> {
        self.tools()
    }
}

impl IntoTools for &ToolPack {
    fn into_tools(self) -> Vec<Arc<dyn AgentTool>> {
        self.clone().tools()
    }
}

impl IntoTools for Vec<Arc<dyn AgentTool>> {
    fn into_tools(self) -> Vec<Arc<dyn AgentTool>> {
        self
    }
}

impl IntoTools for &[Arc<dyn AgentTool>] {
    fn into_tools(self) -> Vec<Arc<dyn AgentTool>> {
        self.to_vec()
    }
}

impl IntoTools for &Vec<Arc<dyn AgentTool>> {
    fn into_tools(self) -> Vec<Arc<dyn AgentTool>> {
        self.clone()
    }
}

/// One tool call the model makes, with arguments its schema allows.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct GeneratedCall {
    /// The tool call id (`schema_<n>`).
    pub id: String,
    /// The tool's name.
    pub tool: String,
    /// The case number: even cases fill every optional property, odd ones none; `case / 2`
    /// picks the option at every choice point.
    pub case: usize,
    /// The arguments (checked against the tool's schema before the call).
    pub arguments: Value,
}

impl GeneratedCall {
    /// Whether this case fills the optional properties.
    pub fn optional_present(&self) -> bool {
        self.case.is_multiple_of(2)
    }
}

/// A case the generator could not make valid, with the reason; it is never sent. A tool
/// whose every case is skipped is reported by the schema check.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SkippedCase {
    /// The tool's name.
    pub tool: String,
    /// The case number.
    pub case: usize,
    /// Why: what the generator could not build, or the validator's text for what it built.
    pub reason: String,
}

/// A model for tests that calls every tool it is given with valid arguments generated
/// from the tool's own schema, like pydantic-ai's `TestModel`; then it answers with text.
///
/// Turn `i` calls tool `i` once per generated case, in one assistant message (the loop
/// runs the batch as it would a model's); the turn after the last tool is a text answer,
/// so a run ends. Each case is built from the normalised schema the model would see
/// (`spec().parameters`): every property, `minimum`/`maximum` and exclusive bounds,
/// `multipleOf`, enums and consts, string lengths, formats (`date-time`, `email`, `uuid`,
/// `ip`, ...) and simple `pattern`s, nested objects, maps (`additionalProperties`,
/// `propertyNames`), arrays with `minItems`/`maxItems`/`uniqueItems` and tuples
/// (`prefixItems`), `anyOf`/`oneOf` branches, `allOf`, and `$ref`/`$defs` (recursive ones
/// end). Optional properties are present in half of the cases and absent in the other
/// half. Every case is checked against the tool's compiled schema before it is sent; the
/// ones the generator got wrong are [`skipped`](Self::skipped).
///
/// Streaming is the faux model's ([`FauxModel`]): the same events, the same abort
/// behaviour.
///
/// ```
/// use std::sync::Arc;
/// use pi_tool::agent::{Agent, AgentOptions};
/// use pi_tool::testing::SchemaModel;
/// use pi_tool::{ToolError, pi_tool, tool_pack};
///
/// #[pi_tool::params]
/// struct EchoParams {
///     /// One to three words.
///     #[schemars(length(min = 1, max = 3))]
///     words: Vec<String>,
///     loud: Option<bool>,
/// }
///
/// /// Echo the words.
/// #[pi_tool(name = "echo")]
/// async fn echo(params: EchoParams) -> Result<String, ToolError> {
///     let text = params.words.join(" ");
///     Ok(if params.loud == Some(true) { text.to_uppercase() } else { text })
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let tools = tool_pack![Echo].tools();
/// let model = SchemaModel::new(&tools);
/// let agent = Agent::new(AgentOptions::new(Arc::new(model.clone())).tools(tools));
/// agent.prompt("Echo something.").await.unwrap();
///
/// let calls = model.calls();
/// assert!(calls.iter().any(|c| c.arguments.get("loud").is_some()));
/// assert!(calls.iter().any(|c| c.arguments.get("loud").is_none()));
/// assert!(calls.iter().all(|c| (1..=3).contains(&c.arguments["words"].as_array().unwrap().len())));
/// let results = agent.messages().iter().filter(|m| m.as_tool_result().is_some()).count();
/// assert_eq!(results, calls.len());
/// # }
/// ```
#[derive(Clone)]
pub struct SchemaModel {
    faux: FauxModel,
    calls: Arc<Vec<GeneratedCall>>,
    skipped: Arc<Vec<SkippedCase>>,
}

impl fmt::Debug for SchemaModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaModel")
            .field("calls", &self.calls.len())
            .field("skipped", &self.skipped.len())
            .finish()
    }
}

impl SchemaModel {
    /// A model that calls each of `tools` with generated arguments, then answers.
    pub fn new(tools: impl IntoTools) -> Self {
        let tools = tools.into_tools();
        let mut calls = Vec::new();
        let mut skipped = Vec::new();
        let mut turns = Vec::new();
        for tool in &tools {
            let spec = tool.spec();
            let mut blocks = Vec::new();
            for (case, generated) in generate::cases(spec.parameters.json()) {
                let checked = generated.and_then(|arguments| {
                    spec.parameters
                        .validate(&spec.name, &arguments)
                        .map(|_| arguments)
                        .map_err(|error| error.message().to_owned())
                });
                match checked {
                    Ok(arguments) => {
                        let id = format!("schema_{}", calls.len() + 1);
                        blocks.push(AssistantContent::tool_call(
                            id.as_str(),
                            spec.name.as_str(),
                            arguments.clone(),
                        ));
                        calls.push(GeneratedCall {
                            id,
                            tool: spec.name.clone(),
                            case,
                            arguments,
                        });
                    }
                    Err(reason) => skipped.push(SkippedCase {
                        tool: spec.name.clone(),
                        case,
                        reason,
                    }),
                }
            }
            if !blocks.is_empty() {
                turns.push(FauxTurn::new(blocks));
            }
        }
        turns.push(FauxTurn::text(format!(
            "Called {} tools with {} generated argument sets.",
            turns.len(),
            calls.len()
        )));
        SchemaModel {
            faux: FauxModel::new(turns),
            calls: Arc::new(calls),
            skipped: Arc::new(skipped),
        }
    }

    /// The calls the model makes, in order.
    pub fn calls(&self) -> &[GeneratedCall] {
        &self.calls
    }

    /// The cases the generator could not make valid.
    pub fn skipped(&self) -> &[SkippedCase] {
        &self.skipped
    }

    /// The model descriptor to run it under (the faux model's).
    pub fn model() -> Model {
        FauxModel::model()
    }
}

impl StreamFn for SchemaModel {
    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageStream {
        self.faux.stream(model, context, options)
    }
}
