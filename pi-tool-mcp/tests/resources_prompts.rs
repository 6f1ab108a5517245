//! Resources, templates, prompts, completions and resource subscriptions beside the tools
//! (`ResourcePack`, `PromptPack`, `Completions`), over stdio framing (`serve_io`).

use std::time::Duration;

use pi_tool::pack::ToolPack;
use pi_tool::{Value, json};
use pi_tool_mcp::rmcp::model::{
    Prompt, PromptArgument, PromptMessage, Resource, ResourceContents, ResourceTemplate, Role,
};
use pi_tool_mcp::{CompletionTarget, Completions, PackServer, PromptPack, ResourcePack};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

struct Client {
    write: tokio::io::WriteHalf<DuplexStream>,
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
}

impl Client {
    async fn send(&mut self, message: Value) {
        let line = format!("{message}\n");
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    /// The next message, or `None` when none comes within `wait`.
    async fn next(&mut self, wait: Duration) -> Option<Value> {
        let line = tokio::time::timeout(wait, self.lines.next_line())
            .await
            .ok()?;
        line.unwrap()
            .map(|line| serde_json::from_str(&line).unwrap())
    }

    async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let message = self.next(Duration::from_secs(10)).await.expect("an answer");
            if message["id"] == id {
                return message;
            }
        }
    }
}

async fn connect(server: PackServer) -> Client {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(theirs);
    tokio::spawn(server.serve_io(read, write));
    let (read, write) = tokio::io::split(ours);
    let mut client = Client {
        write,
        lines: BufReader::new(read).lines(),
    };
    let init = client
        .request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "0"}}),
        )
        .await;
    assert!(init["result"].is_object(), "{init}");
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    client
}

fn resources() -> ResourcePack {
    ResourcePack::new()
        .resource(Resource::new("test://a", "a"), || async {
            Ok(vec![ResourceContents::text("A", "test://a")])
        })
        .template(
            ResourceTemplate::new("test://item/{id}", "item"),
            |uri, vars| async move {
                Ok(vec![ResourceContents::text(
                    format!("item {}", vars["id"]),
                    uri,
                )])
            },
        )
}

#[tokio::test]
async fn resources_prompts_and_completions_beside_the_tools() {
    let prompts = PromptPack::new().prompt(
        Prompt::new(
            "greet",
            Some("Greets someone"),
            Some(vec![PromptArgument::new("name").with_required(true)]),
        ),
        |args| async move {
            Ok(vec![PromptMessage::new_text(
                Role::User,
                format!("Hello, {}!", args["name"]),
            )])
        },
    );
    let completions = Completions::new(|target, argument, typed| match target {
        CompletionTarget::Prompt("greet") if argument == "name" => ["Ada", "Alan", "Grace"]
            .into_iter()
            .filter(|n| n.starts_with(typed))
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    });
    let server = PackServer::new(ToolPack::new())
        .with_resources(resources())
        .with_prompts(prompts)
        .with_completions(completions)
        .with_cache_hints(Duration::from_secs(60), Default::default());
    let mut client = connect(server).await;

    let list = client.request(1, "resources/list", json!({})).await;
    assert_eq!(list["result"]["resources"][0]["uri"], "test://a", "{list}");
    // The caching hints are 2026-07-28's: none in this 2025-11-25 session.
    assert!(list["result"].get("ttlMs").is_none(), "{list}");
    assert!(list["result"].get("cacheScope").is_none(), "{list}");
    let templates = client
        .request(2, "resources/templates/list", json!({}))
        .await;
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "test://item/{id}"
    );
    let read = client
        .request(3, "resources/read", json!({"uri": "test://item/7"}))
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "item 7", "{read}");
    let missing = client
        .request(4, "resources/read", json!({"uri": "test://nope"}))
        .await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert_eq!(missing["error"]["data"]["uri"], "test://nope", "{missing}");

    let prompts = client.request(5, "prompts/list", json!({})).await;
    assert_eq!(
        prompts["result"]["prompts"][0]["name"], "greet",
        "{prompts}"
    );
    let got = client
        .request(
            6,
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"], "Hello, Ada!",
        "{got}"
    );
    let no_arg = client
        .request(7, "prompts/get", json!({"name": "greet"}))
        .await;
    assert_eq!(no_arg["error"]["code"], -32602, "{no_arg}");
    let unknown = client
        .request(8, "prompts/get", json!({"name": "nope"}))
        .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    let completed = client
        .request(
            9,
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
                   "argument": {"name": "name", "value": "A"}}),
        )
        .await;
    assert_eq!(
        completed["result"]["completion"]["values"],
        json!(["Ada", "Alan"]),
        "{completed}"
    );
    assert_eq!(completed["result"]["completion"]["hasMore"], false);
}

#[tokio::test]
async fn a_subscribed_session_hears_of_updates_until_it_unsubscribes() {
    let resources = resources();
    let mut client =
        connect(PackServer::new(ToolPack::new()).with_resources(resources.clone())).await;
    let unknown = client
        .request(1, "resources/subscribe", json!({"uri": "test://nope"}))
        .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let subscribed = client
        .request(2, "resources/subscribe", json!({"uri": "test://item/7"}))
        .await;
    assert_eq!(subscribed["result"], json!({}), "{subscribed}");

    resources.notify_updated("test://a"); // not subscribed: no notification
    resources.notify_updated("test://item/7");
    let update = client
        .next(Duration::from_secs(10))
        .await
        .expect("an update");
    assert_eq!(
        update["method"], "notifications/resources/updated",
        "{update}"
    );
    assert_eq!(update["params"]["uri"], "test://item/7", "{update}");

    let unsubscribed = client
        .request(3, "resources/unsubscribe", json!({"uri": "test://item/7"}))
        .await;
    assert_eq!(unsubscribed["result"], json!({}));
    resources.notify_updated("test://item/7");
    assert_eq!(client.next(Duration::from_millis(300)).await, None);
}
