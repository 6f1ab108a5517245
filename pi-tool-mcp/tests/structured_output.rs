//! Structured output over MCP, at the wire: `tools/list` gives every `Json<T>` tool an
//! `outputSchema` with an object root (MCP's rule, whatever `T`'s own root is), and each
//! `tools/call` result carries `structuredContent` that the schema accepts, next to a
//! text block with the bare value's JSON.

use std::time::Duration;

use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::schema::ToolSchema;
use pi_tool::{Json, JsonSchema, ToolError, Value, json, pi_tool};
use pi_tool_mcp::PackServer;
use pi_tool_mcp::rmcp::ServiceExt;
use serde::Serialize;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[derive(Serialize, JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct Forecast {
    pub city: String,
    pub celsius: i32,
}

#[derive(Serialize, JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
#[serde(rename_all = "lowercase")]
pub enum Sky {
    Clear,
    Cloudy,
}

#[derive(Serialize, JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
#[serde(untagged)]
pub enum Reading {
    Celsius { celsius: i32 },
    Missing { reason: String },
}

/// An object root.
#[pi_tool]
async fn object_root() -> Result<Json<Forecast>, ToolError> {
    Ok(Json(Forecast {
        city: "Paris".into(),
        celsius: 18,
    }))
}

/// An array root.
#[pi_tool]
async fn array_root() -> Result<Json<Vec<i32>>, ToolError> {
    Ok(Json(vec![1, 2]))
}

/// A string root.
#[pi_tool]
async fn string_root() -> Result<Json<String>, ToolError> {
    Ok(Json("sunny".into()))
}

/// A plain enum root.
#[pi_tool]
async fn enum_root() -> Result<Json<Sky>, ToolError> {
    Ok(Json(Sky::Cloudy))
}

/// An optional root.
#[pi_tool]
async fn option_root() -> Result<Json<Option<Forecast>>, ToolError> {
    Ok(Json(None))
}

/// A union root.
#[pi_tool]
async fn union_root() -> Result<Json<Reading>, ToolError> {
    Ok(Json(Reading::Missing {
        reason: "offline".into(),
    }))
}

/// Plain text: no output schema, no structured content.
#[pi_tool]
async fn text_only() -> Result<String, ToolError> {
    Ok("plain".into())
}

#[tokio::test]
async fn every_root_shape_meets_the_mcp_rule_for_output_schemas() {
    let mut pack = ToolPack::new();
    let owner = ToolOwner::new("structured-test");
    pack.push(owner.clone(), ObjectRoot).unwrap();
    pack.push(owner.clone(), ArrayRoot).unwrap();
    pack.push(owner.clone(), StringRoot).unwrap();
    pack.push(owner.clone(), EnumRoot).unwrap();
    pack.push(owner.clone(), OptionRoot).unwrap();
    pack.push(owner.clone(), UnionRoot).unwrap();
    pack.push(owner.clone(), TextOnly).unwrap();

    let (client, server) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = PackServer::new(pack)
            .serve(tokio::io::split(server))
            .await
            .unwrap();
        let _ = running.waiting().await;
    });
    let (read, mut writer) = tokio::io::split(client);
    let mut lines = BufReader::new(read).lines();
    let mut id = 0u64;
    let mut request = async |method: &str, params: Value| -> Value {
        id += 1;
        let mut line = serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
        .unwrap();
        line.push(b'\n');
        writer.write_all(&line).await.unwrap();
        loop {
            let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
                .await
                .expect("the server answers within 10 s")
                .unwrap()
                .expect("the pipe stays open");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
        }
    };
    request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "structured-test", "version": "0"}}),
    )
    .await;
    let listed = request("tools/list", json!({})).await;
    let tools = listed["result"]["tools"].as_array().unwrap().clone();
    let expected = [
        (
            "object_root",
            false,
            json!({"city": "Paris", "celsius": 18}),
        ),
        ("array_root", true, json!([1, 2])),
        ("string_root", true, json!("sunny")),
        ("enum_root", true, json!("cloudy")),
        ("option_root", true, Value::Null),
        ("union_root", true, json!({"reason": "offline"})),
    ];
    for (name, wrapped, value) in expected {
        let tool = tools.iter().find(|t| t["name"] == name).unwrap();
        let schema = &tool["outputSchema"];
        assert_eq!(schema["type"], json!("object"), "{name}: {schema}");
        let result = request("tools/call", json!({"name": name, "arguments": {}})).await;
        let result = &result["result"];
        assert_eq!(result["isError"], json!(false), "{name}: {result}");
        // The text is the bare value, for models that read only text.
        assert_eq!(
            result["content"],
            json!([{"type": "text", "text": value.to_string()}]),
            "{name}"
        );
        let structured = &result["structuredContent"];
        let expected = if wrapped {
            json!({"result": value})
        } else {
            value.clone()
        };
        assert_eq!(structured, &expected, "{name}");
        // Sent twice (structured, text), not a third time as `_meta` details; a wrapped
        // value is marked so that readers take the bare value back out.
        assert!(
            result["_meta"].get("pi-tool/details").is_none(),
            "{name}: {result}"
        );
        assert_eq!(
            result["_meta"].get("pi-tool/wrappedResult"),
            wrapped.then_some(&json!(true)),
            "{name}: {result}"
        );
        // The structured content is an object the published schema accepts as it is.
        assert!(structured.is_object(), "{name}: {structured}");
        let validator = ToolSchema::from_json(schema.clone());
        let checked = validator
            .validate(name, structured)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&checked, structured, "{name}");
    }
    let text = tools.iter().find(|t| t["name"] == "text_only").unwrap();
    assert!(text.get("outputSchema").is_none(), "{text}");
    let result = request("tools/call", json!({"name": "text_only", "arguments": {}})).await;
    assert!(
        result["result"].get("structuredContent").is_none(),
        "{result}"
    );
}
