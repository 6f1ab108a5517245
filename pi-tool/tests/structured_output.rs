//! Structured output through the agent loop: a tool returning `Json<T>` gives the model
//! the value's JSON text and keeps the typed value as the result's details; its spec
//! carries the output schema, built once.

use std::sync::Arc;

use pi_tool::agent::{Agent, AgentOptions};
use pi_tool::model::{AssistantContent, Message};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{IntoAgentTool, Json, JsonSchema, Tool, ToolError, json, pi_tool};
use serde::Serialize;

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct Forecast {
    pub city: String,
    pub celsius: i32,
}

/// The demo forecast for Paris.
#[pi_tool(read_only)]
async fn get_forecast() -> Result<Json<Forecast>, ToolError> {
    Ok(Json(Forecast {
        city: "Paris".into(),
        celsius: 18,
    }))
}

/// The demo cities.
#[pi_tool(read_only)]
async fn cities() -> Result<Json<Vec<String>>, ToolError> {
    Ok(Json(vec!["Paris".into(), "Tokyo".into()]))
}

#[test]
fn the_spec_carries_the_output_schema_built_once() {
    let schema = GetForecast::output_schema().expect("a Json<T> tool has an output schema");
    assert!(!schema.is_wrapped());
    assert_eq!(schema.json()["type"], json!("object"));
    let tool = GetForecast.into_agent_tool();
    let in_spec = tool.spec().output_schema.clone().expect("in the spec");
    assert!(Arc::ptr_eq(&schema, &in_spec));
    let listed = Cities.into_agent_tool();
    let wrapped = listed.spec().output_schema.clone().expect("in the spec");
    assert!(wrapped.is_wrapped());
    assert_eq!(
        wrapped.json()["properties"]["result"]["type"],
        json!("array")
    );
    // Text tools have none.
    assert!(<GetText as Tool>::output_schema().is_none());
}

/// Plain text.
#[pi_tool]
async fn get_text() -> Result<String, ToolError> {
    Ok("text".into())
}

#[tokio::test]
async fn the_loop_keeps_the_typed_value_in_the_details_and_the_model_reads_json() {
    let turn = FauxTurn::new(vec![
        AssistantContent::tool_call("a", "get_forecast", json!({})),
        AssistantContent::tool_call("b", "cities", json!({})),
    ]);
    let agent = Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(vec![turn]))).tools(vec![
            GetForecast.into_agent_tool(),
            Cities.into_agent_tool(),
        ]),
    );
    agent.prompt("go").await.unwrap();
    let results: Vec<_> = agent
        .messages()
        .iter()
        .filter_map(Message::as_tool_result)
        .map(|r| {
            let text: String = r.content.iter().filter_map(|c| c.as_text()).collect();
            let details = r.details.as_ref().map(|d| d.as_value().clone());
            (text, details, r.is_error)
        })
        .collect();
    assert_eq!(
        results,
        vec![
            (
                r#"{"city":"Paris","celsius":18}"#.to_owned(),
                Some(json!({"city": "Paris", "celsius": 18})),
                false
            ),
            // Not wrapped here: the loop has no object rule; only MCP wraps.
            (
                r#"["Paris","Tokyo"]"#.to_owned(),
                Some(json!(["Paris", "Tokyo"])),
                false
            ),
        ]
    );
}
