//! `mcp-conformance-server --http ADDR`: the conformance suite's fixture server
//! ([`mcp_conformance_server::server`]) over streamable HTTP. It prints its URL
//! (`http://127.0.0.1:PORT/mcp`) on standard output once it listens, so that a script or
//! a test can read where to point the suite; port 0 picks a free port.

use std::io::Write;

const USAGE: &str = "usage: mcp-conformance-server --http <address:port>";

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [flag, address] = args.as_slice() else {
        eprintln!("{USAGE}");
        return std::process::ExitCode::FAILURE;
    };
    if flag != "--http" {
        eprintln!("{USAGE}");
        return std::process::ExitCode::FAILURE;
    }
    let listener = match tokio::net::TcpListener::bind(address).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("mcp-conformance-server: cannot listen on {address}: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let url = match listener.local_addr() {
        Ok(bound) => format!("http://{bound}/mcp"),
        Err(error) => {
            eprintln!("mcp-conformance-server: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout();
    // A reader waiting for the URL must get it now, not at exit.
    if writeln!(stdout, "{url}")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return std::process::ExitCode::FAILURE;
    }
    match mcp_conformance_server::server().serve_http(listener).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp-conformance-server: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
