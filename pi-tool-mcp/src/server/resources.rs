//! [`ResourcePack`]: the resources and resource templates a [`PackServer`] serves beside
//! its tools (`resources/list`, `resources/templates/list`, `resources/read`).
//!
//! [`PackServer`]: crate::PackServer

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::{Resource, ResourceContents, ResourceTemplate};
use tokio::sync::broadcast;

/// What reading a resource gives: its contents, or why not.
pub type ReadResult = Result<Vec<ResourceContents>, ResourceError>;

type ReadFuture = Pin<Box<dyn Future<Output = ReadResult> + Send>>;
type ReadFixed = Arc<dyn Fn() -> ReadFuture + Send + Sync>;
type ReadTemplate = Arc<dyn Fn(String, BTreeMap<String, String>) -> ReadFuture + Send + Sync>;

/// Why a resource could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceError {
    /// No resource has this URI: answered -32602 with the URI in `data.uri`, as MCP
    /// (SEP-2164) asks.
    NotFound(String),
    /// The resource exists but reading it failed: -32603 with this text.
    Failed(String),
}

impl fmt::Display for ResourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResourceError::NotFound(uri) => write!(f, "Resource not found: {uri}"),
            ResourceError::Failed(error) => write!(f, "Reading the resource failed: {error}"),
        }
    }
}

impl std::error::Error for ResourceError {}

/// Resources and resource templates, each with the async function that reads it.
///
/// ```
/// use pi_tool_mcp::ResourcePack;
/// use pi_tool_mcp::rmcp::model::{Resource, ResourceContents, ResourceTemplate};
///
/// let resources = ResourcePack::new()
///     .resource(
///         Resource::new("notes://today", "today").with_mime_type("text/plain"),
///         || async { Ok(vec![ResourceContents::text("Buy milk.", "notes://today")]) },
///     )
///     .template(
///         ResourceTemplate::new("notes://day/{date}", "day"),
///         |uri, vars| async move {
///             let date = &vars["date"];
///             Ok(vec![ResourceContents::text(format!("Notes of {date}."), uri)])
///         },
///     );
/// assert_eq!(resources.resources().len(), 1);
/// ```
#[derive(Clone)]
pub struct ResourcePack {
    fixed: Vec<(Resource, ReadFixed)>,
    templates: Vec<(ResourceTemplate, UriTemplate, ReadTemplate)>,
    /// URIs whose contents changed ([`ResourcePack::notify_updated`]), for the sessions
    /// subscribed to them; shared by the pack's clones.
    updates: broadcast::Sender<String>,
}

/// How many updates a slow session may fall behind by before it misses some.
const UPDATE_BACKLOG: usize = 256;

impl Default for ResourcePack {
    fn default() -> Self {
        ResourcePack {
            fixed: Vec::new(),
            templates: Vec::new(),
            updates: broadcast::channel(UPDATE_BACKLOG).0,
        }
    }
}

impl fmt::Debug for ResourcePack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourcePack")
            .field(
                "resources",
                &self.fixed.iter().map(|(r, _)| &r.uri).collect::<Vec<_>>(),
            )
            .field(
                "templates",
                &self
                    .templates
                    .iter()
                    .map(|(t, _, _)| &t.uri_template)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl ResourcePack {
    /// No resources.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a resource, listed by `resources/list` and read by `read` when its URI is
    /// asked for.
    #[must_use]
    pub fn resource<F, Fut>(mut self, resource: Resource, read: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ReadResult> + Send + 'static,
    {
        self.fixed
            .push((resource, Arc::new(move || Box::pin(read()) as ReadFuture)));
        self
    }

    /// Adds a resource template, listed by `resources/templates/list`. A URI that no
    /// resource has and that matches the template is read by `read`, with the URI and
    /// its variables. Templates are RFC 6570 level 1: `{name}` stands for one or more
    /// characters other than `/`, `?` and `#`; the first matching template reads.
    #[must_use]
    pub fn template<F, Fut>(mut self, template: ResourceTemplate, read: F) -> Self
    where
        F: Fn(String, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ReadResult> + Send + 'static,
    {
        let parsed = UriTemplate::parse(&template.uri_template);
        self.templates.push((
            template,
            parsed,
            Arc::new(move |uri, vars| Box::pin(read(uri, vars)) as ReadFuture),
        ));
        self
    }

    /// The resources, in the order they were added.
    pub fn resources(&self) -> Vec<Resource> {
        self.fixed.iter().map(|(r, _)| r.clone()).collect()
    }

    /// The resource templates, in the order they were added.
    pub fn templates(&self) -> Vec<ResourceTemplate> {
        self.templates.iter().map(|(t, _, _)| t.clone()).collect()
    }

    /// Whether there is nothing to serve.
    pub fn is_empty(&self) -> bool {
        self.fixed.is_empty() && self.templates.is_empty()
    }

    /// Says that the contents of `uri` changed: every client session subscribed to it
    /// (`resources/subscribe`, MCP before 2026-07-28) gets
    /// `notifications/resources/updated`. Call it on a clone of the pack the server was
    /// given (clones share their subscribers); without subscribers it does nothing.
    pub fn notify_updated(&self, uri: impl Into<String>) {
        // No receiver means no session subscribed: nobody to tell.
        let _ = self.updates.send(uri.into());
    }

    /// Whether `uri` names a resource of the pack or matches one of its templates.
    pub fn has(&self, uri: &str) -> bool {
        self.fixed.iter().any(|(r, _)| r.uri == uri)
            || self
                .templates
                .iter()
                .any(|(_, t, _)| t.matches(uri).is_some())
    }

    pub(crate) fn updates(&self) -> broadcast::Receiver<String> {
        self.updates.subscribe()
    }

    /// Reads `uri`: the resource with that URI, else the first template it matches.
    pub async fn read(&self, uri: &str) -> ReadResult {
        if let Some((_, read)) = self.fixed.iter().find(|(r, _)| r.uri == uri) {
            return read().await;
        }
        for (_, template, read) in &self.templates {
            if let Some(vars) = template.matches(uri) {
                return read(uri.to_owned(), vars).await;
            }
        }
        Err(ResourceError::NotFound(uri.to_owned()))
    }
}

/// A level-1 URI template: literal text and `{name}` variables.
#[derive(Debug, Clone)]
struct UriTemplate {
    parts: Vec<Part>,
}

#[derive(Debug, Clone)]
enum Part {
    Literal(String),
    Var(String),
}

impl UriTemplate {
    fn parse(template: &str) -> Self {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else {
                break;
            };
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            parts.push(Part::Var(rest[open + 1..open + close].to_owned()));
            rest = &rest[open + close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        UriTemplate { parts }
    }

    /// The variables of `uri`, when it matches.
    fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut vars = BTreeMap::new();
        let mut rest = uri;
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(text) => rest = rest.strip_prefix(text.as_str())?,
                Part::Var(name) => {
                    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
                    // A variable runs to the next literal, within one segment.
                    let end = match parts.peek() {
                        Some(Part::Literal(next)) => rest[..end]
                            .find(next.as_str())
                            .or_else(|| rest[end..].starts_with(next.as_str()).then_some(end))?,
                        _ => end,
                    };
                    if end == 0 {
                        return None;
                    }
                    vars.insert(name.clone(), rest[..end].to_owned());
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(vars)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_level_1() {
        let template = UriTemplate::parse("test://template/{id}/data");
        let vars = template.matches("test://template/42/data").unwrap();
        assert_eq!(vars["id"], "42");
        assert!(template.matches("test://template//data").is_none());
        assert!(template.matches("test://template/4/2/data").is_none());
        assert!(template.matches("test://template/42/data/more").is_none());
        let two = UriTemplate::parse("a://{x}.{y}");
        let vars = two.matches("a://one.two").unwrap();
        assert_eq!((vars["x"].as_str(), vars["y"].as_str()), ("one", "two"));
    }

    #[tokio::test]
    async fn reads_fixed_then_templates_then_not_found() {
        let pack =
            ResourcePack::new()
                .resource(Resource::new("t://a", "a"), || async {
                    Ok(vec![ResourceContents::text("A", "t://a")])
                })
                .template(
                    ResourceTemplate::new("t://{name}", "any"),
                    |uri, vars| async move {
                        Ok(vec![ResourceContents::text(vars["name"].clone(), uri)])
                    },
                );
        let text = |contents: ReadResult| match &contents.unwrap()[0] {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(text(pack.read("t://a").await), "A");
        assert_eq!(text(pack.read("t://b").await), "b");
        assert_eq!(
            pack.read("u://b").await,
            Err(ResourceError::NotFound("u://b".into()))
        );
    }
}
