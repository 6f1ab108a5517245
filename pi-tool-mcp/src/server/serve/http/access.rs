//! Who may talk to the streamable HTTP transport: the `Host` and `Origin` checks that
//! stop a web page from reaching a local server through DNS rebinding.
//!
//! MCP says a server MUST validate `Origin` and answer 403 to one it does not accept.
//! rmcp 3.11 checks origins only when it is given a list, and then matches a port-less
//! entry against any port; so both checks live here, once, before anything else reads
//! the request, and rmcp's own copies are turned off (`server.rs`).
//!
//! - `Host` (or the request's authority) must name an allowed host: the loopback names
//!   (`localhost`, `127.0.0.1`, `::1`) on any port, plus
//!   [`PackServer::with_allowed_hosts`](crate::PackServer::with_allowed_hosts).
//! - A request with an `Origin` is served only when the origin is allowed: for a server
//!   bound to a loopback address, `http` and `https` origins on a loopback host (any
//!   port), plus [`PackServer::with_allowed_origins`](crate::PackServer::with_allowed_origins).
//!   A request without `Origin` (not from a browser) is served.

use hyper::http::uri::Authority;
use hyper::{HeaderMap, StatusCode, Uri, header};

/// The loopback host names, as a `Host` header spells them.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The accepted `Host` and `Origin` values of one server.
#[derive(Debug, Clone, Default)]
pub(crate) struct HttpAccess {
    hosts: Vec<HostEntry>,
    origins: Vec<OriginEntry>,
}

/// One allowed host: a name, and a port or any port.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HostEntry {
    host: String,
    port: Option<u16>,
}

/// One allowed origin: `null`, or a scheme, a host and a port (`None`: any port).
#[derive(Debug, Clone, PartialEq, Eq)]
enum OriginEntry {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

/// A request refused here: the status and the text of the answer.
pub(crate) struct Refused(pub(crate) StatusCode, pub(crate) &'static str);

/// Why an allow-list entry was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadEntry(pub(crate) String);

impl HttpAccess {
    /// The access rules of a server bound to `loopback_bind`-kind address, with the
    /// user's extra hosts and origins.
    pub(crate) fn new(
        loopback_bind: bool,
        extra_hosts: &[String],
        extra_origins: &[String],
    ) -> Result<Self, BadEntry> {
        let mut access = HttpAccess::default();
        for host in LOOPBACK_HOSTS {
            access.hosts.push(HostEntry {
                host: host.to_owned(),
                port: None,
            });
        }
        if loopback_bind {
            for scheme in ["http", "https"] {
                for host in LOOPBACK_HOSTS {
                    access.origins.push(OriginEntry::Tuple {
                        scheme: scheme.to_owned(),
                        host: host.to_owned(),
                        port: None,
                    });
                }
            }
        }
        for host in extra_hosts {
            access.hosts.push(parse_host_entry(host)?);
        }
        for origin in extra_origins {
            access.origins.push(parse_origin_entry(origin)?);
        }
        Ok(access)
    }

    /// `Ok` when `uri` and `headers` pass both checks; otherwise the 403 (or 400 for a
    /// request without any host) to answer.
    pub(crate) fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Refused> {
        let authority = match headers.get(header::HOST) {
            Some(host) => host
                .to_str()
                .ok()
                .and_then(|host| Authority::try_from(host).ok())
                .ok_or(Refused(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: the Host header is not a host",
                ))?,
            None => uri.authority().cloned().ok_or(Refused(
                StatusCode::BAD_REQUEST,
                "Bad Request: no Host header",
            ))?,
        };
        let host = normalize_host(authority.host());
        let port = authority.port_u16();
        let host_allowed = self
            .hosts
            .iter()
            .any(|entry| entry.host == host && entry.port.is_none_or(|p| Some(p) == port));
        if !host_allowed {
            return Err(Refused(
                StatusCode::FORBIDDEN,
                "Forbidden: the Host header names a host this server does not serve",
            ));
        }
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let origin = origin.to_str().ok().and_then(parse_origin).ok_or(Refused(
            StatusCode::FORBIDDEN,
            "Forbidden: the Origin header is not an origin",
        ))?;
        if self.origins.iter().any(|entry| entry.matches(&origin)) {
            Ok(())
        } else {
            Err(Refused(
                StatusCode::FORBIDDEN,
                "Forbidden: requests from this Origin are not allowed",
            ))
        }
    }
}

impl OriginEntry {
    fn matches(&self, origin: &Origin) -> bool {
        match (self, origin) {
            (OriginEntry::Null, Origin::Null) => true,
            (
                OriginEntry::Tuple { scheme, host, port },
                Origin::Tuple {
                    scheme: o_scheme,
                    host: o_host,
                    port: o_port,
                },
            ) => scheme == o_scheme && host == o_host && port.is_none_or(|p| p == *o_port),
            _ => false,
        }
    }
}

/// A request's origin, its port made explicit (RFC 6454 leaves out the default one).
enum Origin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: u16,
    },
}

fn parse_origin(value: &str) -> Option<Origin> {
    let value = value.trim();
    if value.eq_ignore_ascii_case("null") {
        return Some(Origin::Null);
    }
    let uri = Uri::try_from(value).ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    let port = authority.port_u16().or(match scheme.as_str() {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    })?;
    Some(Origin::Tuple {
        host: normalize_host(authority.host()),
        scheme,
        port,
    })
}

/// `example.com`, `example.com:8080`, `[::1]:3000`.
fn parse_host_entry(entry: &str) -> Result<HostEntry, BadEntry> {
    let authority = Authority::try_from(entry.trim())
        .map_err(|_| BadEntry(format!("allowed host {entry:?} is not a host[:port]")))?;
    Ok(HostEntry {
        host: normalize_host(authority.host()),
        port: authority.port_u16(),
    })
}

/// `https://app.example.com` (the scheme's default port), `https://app.example.com:8443`,
/// `http://localhost:*` (any port), or `null`.
fn parse_origin_entry(entry: &str) -> Result<OriginEntry, BadEntry> {
    let trimmed = entry.trim();
    if trimmed.eq_ignore_ascii_case("null") {
        return Ok(OriginEntry::Null);
    }
    let bad = || {
        BadEntry(format!(
            "allowed origin {entry:?} is not scheme://host[:port|:*] or null"
        ))
    };
    let (base, any_port) = match trimmed.strip_suffix(":*") {
        Some(base) => (base, true),
        None => (trimmed, false),
    };
    let uri = Uri::try_from(base).map_err(|_| bad())?;
    let scheme = uri.scheme_str().ok_or_else(bad)?.to_ascii_lowercase();
    let authority = uri.authority().ok_or_else(bad)?;
    if uri.path() != "/" && !uri.path().is_empty() || uri.query().is_some() {
        return Err(bad());
    }
    let port = match (any_port, authority.port_u16()) {
        (true, Some(_)) => return Err(bad()),
        (true, None) => None,
        (false, Some(port)) => Some(port),
        (false, None) => Some(match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return Err(bad()),
        }),
    };
    Ok(OriginEntry::Tuple {
        host: normalize_host(authority.host()),
        scheme,
        port,
    })
}

/// Lower case, without the brackets of an IPv6 literal.
fn normalize_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(
                header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        map
    }

    fn status(access: &HttpAccess, pairs: &[(&str, &str)]) -> u16 {
        match access.check(&Uri::from_static("/mcp"), &headers(pairs)) {
            Ok(()) => 200,
            Err(Refused(status, _)) => status.as_u16(),
        }
    }

    #[test]
    fn loopback_bind_accepts_loopback_origins_only() {
        let access = HttpAccess::new(true, &[], &[]).unwrap();
        assert_eq!(status(&access, &[("host", "127.0.0.1:9")]), 200);
        assert_eq!(status(&access, &[("host", "[::1]:9")]), 200);
        for origin in [
            "http://localhost:3000",
            "https://127.0.0.1",
            "http://[::1]:8080",
        ] {
            assert_eq!(
                status(&access, &[("host", "localhost:9"), ("origin", origin)]),
                200,
                "{origin}"
            );
        }
        for origin in [
            "http://evil.example.com",
            "http://localhost.evil.example.com",
            "null",
            "not an origin",
            "file://localhost",
        ] {
            assert_eq!(
                status(&access, &[("host", "localhost:9"), ("origin", origin)]),
                403,
                "{origin}"
            );
        }
        assert_eq!(status(&access, &[("host", "evil.example.com")]), 403);
        assert_eq!(status(&access, &[("host", "bad host")]), 400);
    }

    #[test]
    fn allow_lists_add_to_the_defaults() {
        let hosts = ["mcp.example.com:8443".to_owned()];
        let origins = [
            "https://app.example.com".to_owned(),
            "http://dev.example.com:*".to_owned(),
        ];
        let access = HttpAccess::new(false, &hosts, &origins).unwrap();
        assert_eq!(status(&access, &[("host", "mcp.example.com:8443")]), 200);
        assert_eq!(status(&access, &[("host", "mcp.example.com:8444")]), 403);
        let with = |origin| {
            status(
                &access,
                &[("host", "MCP.example.com:8443"), ("origin", origin)],
            )
        };
        assert_eq!(with("https://app.example.com"), 200);
        assert_eq!(with("https://app.example.com:443"), 200);
        assert_eq!(with("https://app.example.com:444"), 403);
        assert_eq!(with("http://app.example.com"), 403);
        assert_eq!(with("http://dev.example.com:1234"), 200);
        // Not a loopback bind: loopback origins are not allowed by default.
        assert_eq!(with("http://localhost:3000"), 403);
    }

    #[test]
    fn bad_entries_are_refused() {
        for origin in [
            "example.com",
            "https://a.example:1:*",
            "https://a.example/path",
        ] {
            assert!(
                HttpAccess::new(true, &[], &[origin.to_owned()]).is_err(),
                "{origin}"
            );
        }
        assert!(HttpAccess::new(true, &["a b".to_owned()], &[]).is_err());
    }
}
