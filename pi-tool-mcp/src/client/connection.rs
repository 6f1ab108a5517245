//! The live connection of an [`McpToolset`](super::McpToolset) to one server: starting
//! or reaching it over stdio or streamable HTTP (with OAuth where asked), the
//! handshake, and the end of the connection when the last holder drops it.

use std::sync::Arc;
use std::time::Duration;

use pi_tool_core::AbortController;
use rmcp::model::ProtocolVersion;
use rmcp::service::{
    ClientLifecycleMode, RunningService, ServiceError, serve_client_with_lifecycle,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{Peer, RoleClient};
use tokio::sync::watch;

use super::closed::CloseReason;
use super::handler::{Handler, Shared};
use super::http_stream::Watched;
use super::stdio::{self, StdioChild};
use super::{Endpoint, McpClientError, McpServer, Revision};

/// The live connection to one server, shared by the toolset and its tools: the last
/// one dropped ends it (and kills a stdio server's process group).
pub(crate) struct Connection {
    pub(crate) server_name: String,
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) handler: Arc<Shared>,
    pub(crate) reason: CloseReason,
    pub(crate) child: Option<Arc<StdioChild>>,
    pub(crate) service: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    pub(crate) protocol_version: String,
    pub(crate) shutdown_grace: Duration,
    /// Aborted when the connection ends: stops the refresh task.
    pub(crate) ended: AbortController,
    /// How to authorize again when the server asks (OAuth); nothing to read without
    /// the `oauth` feature.
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    reauth: Reauth,
}

/// A connection's OAuth session, when it has one.
#[cfg(feature = "oauth")]
pub(crate) type Reauth = Option<Arc<super::oauth::OAuthSession>>;
/// Without the `oauth` feature there is nothing to authorize with.
#[cfg(not(feature = "oauth"))]
pub(crate) type Reauth = Option<std::convert::Infallible>;

impl Connection {
    /// Why the connection is unusable (or the best guess while the transport has not
    /// said yet).
    pub(crate) async fn close_reason(&self) -> String {
        if let Some(why) = self.reason.get() {
            return why;
        }
        // The transport may still be reading the child's exit.
        tokio::time::sleep(Duration::from_millis(50)).await;
        self.reason
            .get()
            .unwrap_or_else(|| "the connection to the server was closed".to_owned())
    }
}

impl Connection {
    /// Whether `error` is the server asking for (more) authorization and a new
    /// authorization succeeded, so that the request may be sent again; `Err` when
    /// authorizing failed.
    pub(crate) async fn reauthorized(&self, error: &ServiceError) -> Result<bool, String> {
        #[cfg(feature = "oauth")]
        if let (Some(session), Some(challenge)) = (&self.reauth, error.auth_challenge()) {
            session.reauthorize(challenge).await?;
            return Ok(true);
        }
        let _ = error;
        Ok(false)
    }

    /// The server accepted a request (OAuth's count of authorizations starts over).
    pub(crate) fn accepted(&self) {
        #[cfg(feature = "oauth")]
        if let Some(session) = &self.reauth {
            session.accepted();
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.ended.abort();
        if let Some(child) = &self.child {
            child.kill();
        }
    }
}

impl Connection {
    /// Starts or reaches `server` and agrees on a revision with it (the handshake).
    pub(crate) async fn open(server: &McpServer) -> Result<Arc<Connection>, McpClientError> {
        let name = server.name.clone();
        let handler = Handler::new(
            &name,
            server.input.clone(),
            server.sampling.clone(),
            matches!(server.revision, Revision::Initialize),
        );
        let reason = CloseReason::default();
        let lifecycle = match server.revision {
            Revision::Auto => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
            Revision::Stateless => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
            Revision::Initialize => ClientLifecycleMode::Initialize,
        };
        let (child, running) = match &server.endpoint {
            Endpoint::Http(http) => {
                let config = http_config(&name, http, server.max_message_bytes)?;
                #[cfg(feature = "oauth")]
                if let Some(oauth) = &http.oauth {
                    let (running, reauth) =
                        serve_with_oauth(server, &http.url, oauth, config, lifecycle).await?;
                    return Ok(Self::new(server, None, running, reason, reauth));
                }
                let (client, stream) = Watched::new(reqwest::Client::new());
                let transport =
                    rmcp::transport::StreamableHttpClientTransport::with_client(client, config);
                match serve_client_with_lifecycle(handler, transport, lifecycle).await {
                    Ok(running) => {
                        standalone_stream(stream).await;
                        (None, running)
                    }
                    Err(error) => {
                        let why = if error.is_authorization_required() {
                            "the server requires authorization (HTTP 401/403); give a token \
                             with bearer_token, or OAuth (the `oauth` feature)"
                                .to_owned()
                        } else {
                            error.to_string()
                        };
                        return Err(McpClientError::new(
                            &name,
                            format!("the handshake failed: {why}"),
                        ));
                    }
                }
            }
            Endpoint::Stdio(command) => {
                let (child, transport) = stdio::spawn(
                    command,
                    server.max_message_bytes,
                    reason.clone(),
                    handler.shared.clone(),
                )
                .map_err(|error| {
                    McpClientError::new(
                        &name,
                        format!("cannot start `{}`: {error}", command.display()),
                    )
                })?;
                let started = serve_client_with_lifecycle(handler, transport, lifecycle).await;
                match started {
                    Ok(running) => (Some(child), running),
                    Err(error) => {
                        let why = match reason.get() {
                            Some(why) => why,
                            None => error.to_string(),
                        };
                        child.kill();
                        return Err(McpClientError::new(
                            &name,
                            format!("the handshake failed: {why}"),
                        ));
                    }
                }
            }
        };
        Ok(Self::new(server, child, running, reason, Reauth::default()))
    }

    fn new(
        server: &McpServer,
        child: Option<Arc<StdioChild>>,
        running: RunningService<RoleClient, Handler>,
        reason: CloseReason,
        reauth: Reauth,
    ) -> Arc<Connection> {
        let peer = running.peer().clone();
        let handler = running.service().shared.clone();
        let protocol_version = peer
            .peer_info()
            .map(|info| info.protocol_version.to_string())
            .unwrap_or_default();
        Arc::new(Connection {
            server_name: server.name.clone(),
            peer,
            handler,
            reason,
            child,
            service: tokio::sync::Mutex::new(Some(running)),
            protocol_version,
            shutdown_grace: server.shutdown_grace,
            ended: AbortController::new(),
            reauth,
        })
    }
}

/// Connects through rmcp's authorized HTTP client: unauthenticated first, then one
/// authorization per challenge the server answers with, up to the configured limit.
#[cfg(feature = "oauth")]
async fn serve_with_oauth(
    server: &McpServer,
    url: &str,
    oauth: &super::OAuth,
    config: StreamableHttpClientTransportConfig,
    lifecycle: ClientLifecycleMode,
) -> Result<(RunningService<RoleClient, Handler>, Reauth), McpClientError> {
    use rmcp::transport::{AuthClient, AuthorizationManager, StreamableHttpClientTransport};

    let name = &server.name;
    let fail = |why: String| McpClientError::new(name, why);
    let manager = AuthorizationManager::new(url)
        .await
        .map_err(|error| fail(format!("OAuth set-up failed: {error}")))?;
    let client = AuthClient::new(reqwest::Client::new(), manager);
    let session = Arc::new(super::oauth::OAuthSession::new(
        oauth.clone(),
        url,
        client.auth_manager.clone(),
    ));
    loop {
        let handler = Handler::new(
            name,
            server.input.clone(),
            server.sampling.clone(),
            matches!(server.revision, Revision::Initialize),
        );
        // Each attempt on connections of its own: none the server may have closed after
        // refusing the previous one.
        let mut attempt = client.clone();
        attempt.http_client = reqwest::Client::new();
        let (attempt, stream) = Watched::new(attempt);
        let transport = StreamableHttpClientTransport::with_client(attempt, config.clone());
        let error = match serve_client_with_lifecycle(handler, transport, lifecycle.clone()).await {
            Ok(running) => {
                standalone_stream(stream).await;
                return Ok((running, Some(session)));
            }
            Err(error) => error,
        };
        let Some(challenge) = error.auth_challenge() else {
            return Err(fail(format!("the handshake failed: {error}")));
        };
        session.reauthorize(challenge).await.map_err(fail)?;
    }
}

/// How long connecting waits for the standalone stream of a 2025-11-25 session to open
/// (`http_stream.rs`): a server that holds the GET delays connecting by this much, no
/// more.
const STANDALONE_STREAM_WAIT: Duration = Duration::from_secs(5);

/// Waits until the session's standalone stream settled (open, refused or failed), or
/// [`STANDALONE_STREAM_WAIT`].
async fn standalone_stream(mut settled: watch::Receiver<bool>) {
    let _ = tokio::time::timeout(STANDALONE_STREAM_WAIT, settled.wait_for(|s| *s)).await;
}

/// The configuration of rmcp's streamable HTTP client for `http`: its token, headers
/// and limits.
fn http_config(
    name: &str,
    http: &super::HttpEndpoint,
    max_message_bytes: usize,
) -> Result<StreamableHttpClientTransportConfig, McpClientError> {
    use hyper::header::{HeaderName, HeaderValue};

    let mut headers = std::collections::HashMap::new();
    for (key, value) in &http.headers {
        let header = HeaderName::from_bytes(key.as_bytes()).map_err(|_| {
            McpClientError::new(name, format!("`{key}` is not a valid HTTP header name"))
        })?;
        let value = HeaderValue::from_str(value).map_err(|_| {
            // The value may be a secret: only the header's name is shown.
            McpClientError::new(
                name,
                format!("the value of header `{key}` is not valid in HTTP"),
            )
        })?;
        headers.insert(header, value);
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(http.url.as_str())
        .custom_headers(headers)
        .max_sse_event_size(max_message_bytes)
        .max_json_response_size(max_message_bytes);
    if let Some(token) = &http.bearer {
        config = config.auth_header(token.as_str());
    }
    Ok(config)
}
