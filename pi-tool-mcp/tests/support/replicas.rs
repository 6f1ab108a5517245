//! Replica processes behind a round-robin TCP proxy, for the tests that scale a server
//! out (`scale_out.rs` here, `mcp_replicas.rs` in examples/durable-approvals, which
//! includes this module by path).
//!
//! A replica is the test binary run again with one test selected and an environment
//! variable set: that test serves until it is killed and prints `REPLICA_ADDR=<address>`
//! once it listens, so no extra binary is built.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};

/// The line a replica prints once it listens, before its address.
pub const REPLICA_ADDR: &str = "REPLICA_ADDR=";

/// Starts this test binary again running only `test` (with `env` set), and returns the
/// process with the address it printed after [`REPLICA_ADDR`]. The process is killed
/// when the `Child` is dropped.
pub async fn start_replica(test: &str, env: &[(&str, &str)]) -> (Child, String) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true);
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let address = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            // libtest prints `test <name> ... ` before it, on the same line.
            if let Some((_, address)) = line.split_once(REPLICA_ADDR) {
                return address.trim().to_owned();
            }
        }
        panic!("the replica exited before serving");
    })
    .await
    .expect("the replica starts within 30 s");
    (child, address)
}

/// Which backend one connection went to, and the first HTTP request on it (head and
/// body, as text).
#[derive(Debug, Clone)]
pub struct Routed {
    pub backend: usize,
    pub request: String,
}

/// A TCP proxy on 127.0.0.1 that hands each new connection to the next backend in turn;
/// a backend that refuses the connection (a replica that died) is skipped, as a load
/// balancer's health check would. It records where each connection went.
pub struct Proxy {
    /// `http://<proxy>/mcp`.
    pub url: String,
    backends: usize,
    next: Arc<Mutex<usize>>,
    routed: Arc<Mutex<Vec<Routed>>>,
}

impl Proxy {
    /// Which backend the next connection goes to, if it accepts it.
    pub fn next_backend(&self) -> usize {
        *self.next.lock().unwrap_or_else(PoisonError::into_inner) % self.backends
    }

    /// Every connection so far, in the order they were accepted.
    pub fn routed(&self) -> Vec<Routed> {
        self.routed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Starts a [`Proxy`] in front of `backends` (`host:port` each).
pub async fn round_robin(backends: Vec<String>) -> Proxy {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let next = Arc::new(Mutex::new(0usize));
    let routed = Arc::new(Mutex::new(Vec::new()));
    let proxy = Proxy {
        url: format!("http://{address}/mcp"),
        backends: backends.len(),
        next: next.clone(),
        routed: routed.clone(),
    };
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            // Chosen here, in accept order, so that the turn is the connection's order.
            let mut server = None;
            for _ in 0..backends.len() {
                let backend = {
                    let mut next = next.lock().unwrap_or_else(PoisonError::into_inner);
                    let backend = *next % backends.len();
                    *next += 1;
                    backend
                };
                if let Ok(stream) = TcpStream::connect(&backends[backend]).await {
                    server = Some((backend, stream));
                    break;
                }
            }
            let Some((backend, server)) = server else {
                continue;
            };
            let routed = routed.clone();
            tokio::spawn(forward(client, server, backend, routed));
        }
    });
    proxy
}

/// Forwards the first request whole (recording it), then both ways until either side
/// closes; the other side is then closed too.
async fn forward(
    mut client: TcpStream,
    mut server: TcpStream,
    backend: usize,
    routed: Arc<Mutex<Vec<Routed>>>,
) {
    let Some(request) = first_request(&mut client).await else {
        return;
    };
    routed
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(Routed {
            backend,
            request: String::from_utf8_lossy(&request).into_owned(),
        });
    if server.write_all(&request).await.is_err() {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
}

/// Reads one HTTP/1.1 request: its head, and as many body bytes as its `content-length`
/// says (a request without one has no body here: the tests' clients send lengths).
async fn first_request(client: &mut TcpStream) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        let read = client.read(&mut chunk).await.ok()?;
        if read == 0 || bytes.len() > 1 << 20 {
            return None;
        }
        bytes.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&bytes[..head_end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse::<usize>().ok())
        .unwrap_or(0);
    while bytes.len() < head_end + length {
        let read = client.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        bytes.extend_from_slice(&chunk[..read]);
    }
    Some(bytes)
}
