//! The seed guide's agent-core program: `get_weather` through an `Agent`. Without flags
//! it runs on the faux model (no network, no API key); `--model` / `--base-url` run it on
//! a real model through `pi_tool::providers`. Ctrl-C aborts the run cleanly.
//!
//! Run from the repository root:
//!
//! ```text
//! cargo run -p weather-example                 # faux model, Tokyo
//! cargo run -p weather-example -- Paris        # faux model, another city
//! cargo run -p weather-example -- --model anthropic/claude-sonnet-4-5 Paris   # ANTHROPIC_API_KEY
//! cargo run -p weather-example -- --base-url http://127.0.0.1:18080/v1 --model smol "What is the weather in Tokyo?"
//! cargo run -p weather-example -- --mcp 'fs=npx -y @modelcontextprotocol/server-filesystem .' \
//!     mcp__fs__list_directory '{"path": "."}'     # an MCP server's tool, on the faux model
//! cargo run -p weather-example -- --mcp target/debug/weather-mcp --mcp-sandbox . \
//!     mcp__weather-mcp__get_weather '{"city": "Tokyo"}'  # the server in the kernel sandbox
//! ```
//!
//! `--help` lists the flags (see `cli.rs`).

mod cli;
mod small_model;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use pi_tool::agent::{Agent, AgentEvent, AgentOptions};
use pi_tool::model::{ApiKey, AssistantContent, AssistantMessageEvent, Model, StreamOptions};
use pi_tool::providers::{Providers, builtin_models};
use pi_tool::safety::Sandbox;
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{AgentTool, IntoAgentTool, Value, json};
use pi_tool_mcp::client::{McpServer, McpToolset};
use weather_example::GetWeather;

/// The seed's own system prompt, for the faux model and large real models.
const SEED_SYSTEM_PROMPT: &str = "Use get_weather for supported weather questions.";

#[tokio::main]
async fn main() {
    let args = match cli::parse(std::env::args().skip(1)) {
        Ok(args) if args.help => {
            println!("{}", cli::USAGE);
            return;
        }
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    let toolsets = connect_mcp(&args).await;
    let mut tools = vec![GetWeather.into_agent_tool()];
    for toolset in &toolsets {
        tools.extend(toolset.tools());
    }
    let (agent, faux) = match &args.model {
        None if toolsets.is_empty() => faux_agent(&args.input, tools),
        None => faux_mcp_agent(&args.input, tools),
        Some(model) => (real_agent(&args, model, tools), None),
    };
    run(agent, faux, cli::prompt(&args.input)).await;
    for toolset in toolsets {
        toolset.close().await;
    }
}

/// Starts each `--mcp` server (in the sandbox with `--mcp-sandbox`) and lists its tools
/// (on stderr).
async fn connect_mcp(args: &cli::Args) -> Vec<McpToolset> {
    let mut toolsets = Vec::new();
    for server in &args.mcp {
        let mut stdio =
            McpServer::stdio(server.name.as_str(), server.program.as_str(), &server.args);
        if let Some(root) = &args.mcp_sandbox {
            let mut sandbox = Sandbox::for_root(root).network(args.mcp_network);
            // A program given by path may live outside the system's directories.
            if let Some(dir) = Path::new(&server.program).parent()
                && !dir.as_os_str().is_empty()
            {
                sandbox = sandbox.allow_read(dir);
            }
            stdio = stdio.sandbox(sandbox);
        }
        match McpToolset::connect(stdio).await {
            Ok(toolset) => {
                let names: Vec<String> = toolset
                    .tools()
                    .iter()
                    .map(|t| t.name().to_owned())
                    .collect();
                eprintln!("[mcp] {}: {}", toolset.server_name(), names.join(", "));
                toolsets.push(toolset);
            }
            Err(error) => fail(&error.to_string()),
        }
    }
    toolsets
}

/// The faux model with MCP servers: it calls the tool the command line names, with its
/// JSON arguments, and then answers with what the tool returned.
fn faux_mcp_agent(
    input: &[String],
    tools: Vec<Arc<dyn AgentTool>>,
) -> (Agent, Option<Arc<FauxModel>>) {
    let (tool, arguments) = match input {
        [tool] => (tool.clone(), json!({})),
        [tool, arguments] => match serde_json::from_str::<Value>(arguments) {
            Ok(arguments) => (tool.clone(), arguments),
            Err(error) => fail(&format!("the arguments of {tool} are not JSON: {error}")),
        },
        _ => fail("with --mcp, the faux model calls one tool: give TOOL and its JSON arguments"),
    };
    if !tools.iter().any(|t| t.name() == tool) {
        let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        fail(&format!(
            "no tool {tool}; the agent has {}",
            names.join(", ")
        ));
    }
    let model = Arc::new(FauxModel::new(vec![FauxTurn::new(vec![
        AssistantContent::text(format!("Let me call {tool}.")),
        AssistantContent::tool_call("call_1", tool, arguments),
    ])]));
    let agent = Agent::new(
        AgentOptions::new(model.clone())
            .model(FauxModel::model())
            .system_prompt(SEED_SYSTEM_PROMPT)
            .tools(tools),
    );
    (agent, Some(model))
}

/// The faux model plays the part of an LLM: it asks for `get_weather`, and once the tool
/// has answered it phrases the answer (pushed by the listener in [`run`]).
fn faux_agent(input: &[String], tools: Vec<Arc<dyn AgentTool>>) -> (Agent, Option<Arc<FauxModel>>) {
    let city = match input {
        [] => "Tokyo".to_owned(),
        [city] if !city.trim().contains(char::is_whitespace) => city.clone(),
        _ => fail(
            "the faux model plays one scripted exchange about a city: give a single city \
             (e.g. Paris), or a real model with --model or --base-url",
        ),
    };
    let model = Arc::new(FauxModel::new(vec![FauxTurn::new(vec![
        AssistantContent::text(format!("Let me check the weather in {city}.")),
        AssistantContent::tool_call("call_1", "get_weather", json!({ "city": city })),
    ])]));
    let agent = Agent::new(
        AgentOptions::new(model.clone())
            .model(FauxModel::model())
            .system_prompt(SEED_SYSTEM_PROMPT)
            .tools(tools),
    );
    (agent, Some(model))
}

/// A registry model (`--model PROVIDER/ID`, its key from the provider's environment
/// variable) or a model on an OpenAI-compatible server (`--base-url URL --model ID`).
fn real_agent(args: &cli::Args, model_arg: &str, tools: Vec<Arc<dyn AgentTool>>) -> Agent {
    let (mut model, api_key) = match &args.base_url {
        Some(base_url) => {
            // pi-ai requires a key; a local server that checks none accepts any text.
            let key = std::env::var("OPENAI_API_KEY")
                .ok()
                .filter(|key| !key.is_empty())
                .unwrap_or_else(|| "none".to_owned());
            (
                Model::openai_compatible(base_url.as_str(), model_arg),
                Some(ApiKey::new(key)),
            )
        }
        None => {
            let Some((provider, id)) = model_arg.split_once('/') else {
                fail(&format!(
                    "--model {model_arg}: expected PROVIDER/ID, e.g. anthropic/claude-sonnet-4-5 \
                     (or --base-url URL --model ID for a server of your own)"
                ))
            };
            let Some(model) = builtin_models().get_model(provider, id) else {
                let providers: Vec<&str> = builtin_models().providers().collect();
                fail(&format!(
                    "--model {model_arg}: no such model in pi-ai's registry (providers: {})",
                    providers.join(", ")
                ))
            };
            (model, None)
        }
    };
    if let Some(api) = &args.api {
        if !Providers::apis().contains(&api.as_str()) {
            fail(&format!(
                "--api {api}: expected one of {}",
                Providers::apis().join(", ")
            ));
        }
        model.api = api.clone();
    }

    let providers: Arc<dyn pi_tool::model::StreamFn> = Arc::new(Providers::new());
    let mut stream_options = StreamOptions {
        api_key,
        ..StreamOptions::default()
    };
    let options = if args.coach.unwrap_or(args.base_url.is_some()) {
        stream_options.temperature = Some(0.0);
        let mut options = AgentOptions::new(small_model::tool_choice_by_turn(providers))
            .system_prompt(small_model::SYSTEM_PROMPT);
        options.initial_state.messages = small_model::example_exchange(&model);
        options
    } else {
        AgentOptions::new(providers).system_prompt(SEED_SYSTEM_PROMPT)
    };
    Agent::new(
        options
            .model(model)
            .tools(tools)
            .stream_options(stream_options),
    )
}

fn fail(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(2);
}

/// Prompts and prints: the model's text on stdout, the tool's progress and end on stderr.
async fn run(agent: Agent, faux: Option<Arc<FauxModel>>, prompt: String) {
    agent.subscribe(move |event, _signal| {
        match event {
            AgentEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. },
                ..
            } => {
                print!("{delta}");
                let _ = std::io::stdout().flush();
            }
            AgentEvent::ToolExecutionUpdate { partial_result, .. } => {
                if let Some(text) = partial_result.content.first().and_then(|c| c.as_text()) {
                    eprintln!("\n[progress] {text}");
                }
            }
            AgentEvent::ToolExecutionEnd {
                tool_name,
                is_error,
                result,
                ..
            } => {
                eprintln!(
                    "\n[tool {}] {tool_name}",
                    if *is_error { "error" } else { "done" }
                );
                if let Some(faux) = &faux {
                    let answer = if *is_error {
                        format!("Sorry, I could not look that up: {}", result.text_content())
                    } else if &**tool_name == "get_weather" {
                        format!(
                            "According to the demo weather service: {}.",
                            result.text_content()
                        )
                    } else {
                        format!("{tool_name} says:\n{}", result.text_content())
                    };
                    faux.push_turns([FauxTurn::text(answer)]);
                }
            }
            AgentEvent::AgentEnd { .. } => println!(),
            _ => {}
        }
        Ok(())
    });

    let abort = agent.abort_handle();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\n[aborting]");
            abort.abort();
        }
    });

    let outcome = agent.prompt(prompt).await;
    ctrl_c.abort();
    if let Err(error) = outcome {
        eprintln!("prompt failed: {error}");
        std::process::exit(1);
    }
    // `prompt` is `Ok` once the run ended, even after a failed model call (Pi's semantics).
    if let Err(failed) = agent.ensure_ok() {
        eprintln!("{failed}");
        std::process::exit(1);
    }
}
