//! [`PromptPack`]: the prompts a [`PackServer`] serves beside its tools (`prompts/list`,
//! `prompts/get`), and [`Completions`] for `completion/complete`.
//!
//! [`PackServer`]: crate::PackServer

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::{Prompt, PromptMessage};

/// What getting a prompt gives: its messages, or why not.
pub type PromptResult = Result<Vec<PromptMessage>, PromptError>;

type GetFuture = Pin<Box<dyn Future<Output = PromptResult> + Send>>;
type Get = Arc<dyn Fn(BTreeMap<String, String>) -> GetFuture + Send + Sync>;

/// Why a prompt could not be given. Both are answered -32602, the protocol error MCP
/// names for an unknown prompt and for missing arguments; `Failed` is -32603.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PromptError {
    /// No prompt has this name.
    NotFound(String),
    /// A required argument is missing (its name).
    MissingArgument(String),
    /// The prompt's function failed, with this text.
    Failed(String),
}

impl fmt::Display for PromptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PromptError::NotFound(name) => write!(f, "Prompt not found: {name}"),
            PromptError::MissingArgument(name) => {
                write!(f, "Invalid params: the prompt needs the argument {name:?}")
            }
            PromptError::Failed(error) => write!(f, "Getting the prompt failed: {error}"),
        }
    }
}

impl std::error::Error for PromptError {}

/// Prompts, each with the async function that fills it in from its arguments.
///
/// ```
/// use pi_tool_mcp::PromptPack;
/// use pi_tool_mcp::rmcp::model::{Prompt, PromptArgument, PromptMessage, Role};
///
/// let prompts = PromptPack::new().prompt(
///     Prompt::new(
///         "summarise",
///         Some("Summarise a text"),
///         Some(vec![PromptArgument::new("text").with_required(true)]),
///     ),
///     |args| async move {
///         Ok(vec![PromptMessage::new_text(Role::User, format!("Summarise: {}", args["text"]))])
///     },
/// );
/// assert_eq!(prompts.prompts()[0].name, "summarise");
/// ```
#[derive(Clone, Default)]
pub struct PromptPack {
    prompts: Vec<(Prompt, Get)>,
}

impl fmt::Debug for PromptPack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.prompts.iter().map(|(p, _)| &p.name))
            .finish()
    }
}

impl PromptPack {
    /// No prompts.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a prompt, listed by `prompts/list` and filled in by `get` for `prompts/get`,
    /// with the request's arguments. Required arguments (`PromptArgument::required`)
    /// are checked before `get` runs.
    #[must_use]
    pub fn prompt<F, Fut>(mut self, prompt: Prompt, get: F) -> Self
    where
        F: Fn(BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = PromptResult> + Send + 'static,
    {
        self.prompts.push((
            prompt,
            Arc::new(move |args| Box::pin(get(args)) as GetFuture),
        ));
        self
    }

    /// The prompts, in the order they were added.
    pub fn prompts(&self) -> Vec<Prompt> {
        self.prompts.iter().map(|(p, _)| p.clone()).collect()
    }

    /// Whether there is nothing to serve.
    pub fn is_empty(&self) -> bool {
        self.prompts.is_empty()
    }

    /// Fills in the prompt `name` with `args`.
    pub async fn get(&self, name: &str, args: BTreeMap<String, String>) -> PromptResult {
        let Some((prompt, get)) = self.prompts.iter().find(|(p, _)| p.name == name) else {
            return Err(PromptError::NotFound(name.to_owned()));
        };
        for argument in prompt.arguments.iter().flatten() {
            if argument.required == Some(true) && !args.contains_key(&argument.name) {
                return Err(PromptError::MissingArgument(argument.name.clone()));
            }
        }
        get(args).await
    }
}

/// What a completion is asked for: an argument of a prompt, or a variable of a resource
/// template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompletionTarget<'a> {
    /// The prompt with this name.
    Prompt(&'a str),
    /// The resource template (or resource) with this URI.
    Resource(&'a str),
}

type Complete = Arc<dyn Fn(CompletionTarget<'_>, &str, &str) -> Vec<String> + Send + Sync>;

/// Suggestions for `completion/complete`: a function of the target, the argument's name
/// and what the user typed so far, giving the values to offer (at most 100 are sent, as
/// MCP allows, with `hasMore` when there were more).
#[derive(Clone)]
pub struct Completions(pub(crate) Complete);

impl fmt::Debug for Completions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Completions(..)")
    }
}

impl Completions {
    /// Completions from `complete(target, argument name, typed value)`.
    pub fn new(
        complete: impl Fn(CompletionTarget<'_>, &str, &str) -> Vec<String> + Send + Sync + 'static,
    ) -> Self {
        Completions(Arc::new(complete))
    }

    /// No suggestions for anything: the capability, declared, with empty answers.
    pub fn none() -> Self {
        Completions::new(|_, _, _| Vec::new())
    }
}
