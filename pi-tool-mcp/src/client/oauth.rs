//! OAuth 2.1 for streamable HTTP servers (the `oauth` feature): [`OAuth`] and the
//! [`Authorizer`] that shows the user the authorization page.
//!
//! The protocol is rmcp's (`auth`): when the server answers 401 with a
//! `WWW-Authenticate` challenge, the client discovers the protected resource's and the
//! authorization server's metadata (seeded from the challenge), picks how it identifies
//! itself in the spec's order (a pre-registered client, else a client ID metadata
//! document when the server supports them, else dynamic registration), builds the
//! authorization URL with PKCE and the scopes of the challenge, and, once the
//! [`Authorizer`] returns the redirect, checks `state` and `iss` (RFC 9207) and exchanges
//! the code at the token endpoint with the auth method the server accepts. Requests then
//! carry the access token; a rejected token is refreshed once. A server that still
//! refuses after [`OAuth::max_authorizations`] authorizations fails to connect.
//!
//! Secrets (the client secret, codes, tokens) are never in `Debug` output or in our
//! errors.

use std::fmt;
use std::sync::Arc;

use pi_tool_core::async_trait;
use rmcp::transport::AuthorizationManager;
use rmcp::transport::auth::{AuthorizationRequest, OAuthState, WWWAuthenticateParams};

/// Shows the user an authorization page and returns where the authorization server
/// sent them back.
#[async_trait]
pub trait Authorizer: Send + Sync + 'static {
    /// Sends the user to `authorization_url` (a browser) and returns the full redirect
    /// URL the authorization server sent them back to, with its `code`, `state` and
    /// `iss` parameters. An `Err` (the user gave up, the page failed) ends the
    /// connection attempt with that text.
    async fn authorize(&self, authorization_url: &str) -> Result<String, String>;
}

/// An [`Authorizer`] for an authorization server that grants without asking anyone
/// (a test server, a pre-approved machine client): it fetches the authorization URL and
/// returns the `Location` of the redirect the server answers with.
#[derive(Debug, Clone, Default)]
pub struct HeadlessAuthorizer;

#[async_trait]
impl Authorizer for HeadlessAuthorizer {
    async fn authorize(&self, authorization_url: &str) -> Result<String, String> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| format!("cannot build an HTTP client: {error}"))?;
        // reqwest's error text names the URL, whose query is not secret (the PKCE
        // challenge and `state` are public by design).
        let response = client
            .get(authorization_url)
            .send()
            .await
            .map_err(|error| format!("the authorization page failed: {error}"))?;
        let status = response.status();
        response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|location| location.to_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| format!("the authorization page answered {status} without a redirect"))
    }
}

/// OAuth 2.1 settings of a streamable HTTP server ([`McpServer::oauth`](super::McpServer::oauth)).
#[derive(Clone)]
pub struct OAuth {
    redirect_uri: String,
    authorizer: Arc<dyn Authorizer>,
    client_name: String,
    client_id: Option<String>,
    client_secret: Option<String>,
    client_metadata_url: Option<String>,
    scopes: Vec<String>,
    max_authorizations: u32,
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("max_authorizations", &self.max_authorizations)
            .finish_non_exhaustive()
    }
}

impl OAuth {
    /// OAuth with the redirect URI registered for this client (where the
    /// authorization server sends the user back) and who takes the user there.
    pub fn new(redirect_uri: impl Into<String>, authorizer: Arc<dyn Authorizer>) -> Self {
        OAuth {
            redirect_uri: redirect_uri.into(),
            authorizer,
            client_name: "pi-tool".to_owned(),
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
            scopes: Vec::new(),
            max_authorizations: 3,
        }
    }

    /// The name dynamic client registration gives the client (`pi-tool`).
    #[must_use]
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// A client registered with the authorization server beforehand: no registration
    /// at connect. `secret` for a confidential client (never shown in `Debug` or
    /// errors).
    #[must_use]
    pub fn preregistered(mut self, client_id: impl Into<String>, secret: Option<String>) -> Self {
        self.client_id = Some(client_id.into());
        self.client_secret = secret;
        self
    }

    /// The HTTPS URL of this client's metadata document (a client ID metadata document),
    /// used as its client id by authorization servers that support them.
    #[must_use]
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The scopes to ask for; by default those of the server's challenge, else of its
    /// metadata.
    #[must_use]
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// How many authorizations one connection attempt may go through before it gives up
    /// (3): a server that keeps refusing its own tokens cannot loop the user.
    #[must_use]
    pub fn max_authorizations(mut self, max: u32) -> Self {
        self.max_authorizations = max;
        self
    }

    pub(crate) fn limit(&self) -> u32 {
        self.max_authorizations
    }

    /// One authorization for the server at `url`, answering its `challenge`: a manager
    /// holding the tokens. `granted` are the scopes of the authorization it replaces: a
    /// challenge for more scope asks for them and the challenged ones together, so that
    /// stepping up does not lose what was granted.
    pub(crate) async fn authorize(
        &self,
        url: &str,
        challenge: &str,
        granted: &[String],
    ) -> Result<AuthorizationManager, String> {
        let mut state = OAuthState::new(url, None)
            .await
            .map_err(|error| format!("OAuth set-up failed: {error}"))?;
        let mut request = AuthorizationRequest::new(&self.redirect_uri)
            .with_challenge(challenge)
            .with_client_name(&self.client_name);
        if let Some(id) = &self.client_id {
            request = request.with_preregistered_client(id);
            if let Some(secret) = &self.client_secret {
                request = request.with_client_secret(secret);
            }
        }
        if let Some(cimd) = &self.client_metadata_url {
            request = request.with_client_metadata_url(cimd);
        }
        let challenged = reqwest::Url::parse(url)
            .ok()
            .and_then(|base| WWWAuthenticateParams::parse(challenge, &base).scope);
        let mut scopes: Vec<String> = self.scopes.clone();
        if let Some(challenged) = challenged {
            for scope in granted
                .iter()
                .map(String::as_str)
                .chain(challenged.split_whitespace())
            {
                if !scopes.iter().any(|s| s == scope) {
                    scopes.push(scope.to_owned());
                }
            }
        }
        if !scopes.is_empty() {
            request = request.with_scopes(scopes);
        }
        state
            .start_authorization(request)
            .await
            .map_err(|error| format!("OAuth discovery or registration failed: {error}"))?;
        let page = state
            .get_authorization_url()
            .await
            .map_err(|error| format!("OAuth failed: {error}"))?;
        let back = self.authorizer.authorize(&page).await?;
        state
            .handle_callback_url(&back)
            .await
            .map_err(|error| format!("OAuth token exchange failed: {error}"))?;
        state
            .into_authorization_manager()
            .ok_or_else(|| "OAuth ended without tokens".to_owned())
    }
}

/// The OAuth state of one connection: the token holder rmcp's authorized client reads
/// (replaced by each new authorization) and how many authorizations ran since the last
/// request the server accepted.
pub(crate) struct OAuthSession {
    oauth: OAuth,
    url: String,
    manager: Arc<tokio::sync::Mutex<AuthorizationManager>>,
    /// Held while authorizing: calls refused at the same time authorize once, in turn.
    tries: tokio::sync::Mutex<u32>,
}

impl OAuthSession {
    pub(crate) fn new(
        oauth: OAuth,
        url: &str,
        manager: Arc<tokio::sync::Mutex<AuthorizationManager>>,
    ) -> Self {
        OAuthSession {
            oauth,
            url: url.to_owned(),
            manager,
            tries: tokio::sync::Mutex::new(0),
        }
    }

    /// Authorizes again, answering the server's `challenge` (a 401, or a 403 asking for
    /// more scope), and gives the new tokens to the connection's client. Refused after
    /// [`OAuth::max_authorizations`] authorizations without an accepted request.
    pub(crate) async fn reauthorize(&self, challenge: &str) -> Result<(), String> {
        let mut tries = self.tries.lock().await;
        if *tries >= self.oauth.limit() {
            return Err(format!(
                "the server still refuses access after {} OAuth authorization(s)",
                *tries
            ));
        }
        *tries += 1;
        let granted = self.manager.lock().await.get_current_scopes().await;
        let manager = self.oauth.authorize(&self.url, challenge, &granted).await?;
        *self.manager.lock().await = manager;
        Ok(())
    }

    /// The server accepted a request: the count of authorizations starts over.
    pub(crate) fn accepted(&self) {
        if let Ok(mut tries) = self.tries.try_lock() {
            *tries = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_secret_is_not_in_debug_output() {
        let oauth = OAuth::new("http://localhost:1/cb", Arc::new(HeadlessAuthorizer))
            .preregistered("client-7", Some("s3cr3t-value".to_owned()));
        let shown = format!("{oauth:?}");
        assert!(shown.contains("client-7"), "{shown}");
        assert!(!shown.contains("s3cr3t-value"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }

    #[tokio::test]
    async fn a_page_without_a_redirect_is_a_clear_error() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/authorize", listener.local_addr().unwrap());
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buffer = [0u8; 2048];
            let _ = socket.read(&mut buffer).await;
            let _ = socket
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nno")
                .await;
        });
        let error = HeadlessAuthorizer.authorize(&url).await.unwrap_err();
        assert_eq!(
            error,
            "the authorization page answered 200 OK without a redirect"
        );
    }
}
