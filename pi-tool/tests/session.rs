//! AgentSession: registry rules, active tools, prompt, extension chains, contexts,
//! redaction — each driven end to end on the faux model.

use std::sync::{Arc, Mutex};

use pi_tool::AgentTool;
use pi_tool::ToolInvocation;
use pi_tool::context::{ExtensionContext, ExtensionUi, Mode};
use pi_tool::model::{AssistantContent, Message};
use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::safety::Redactor;
use pi_tool::schema::ToolSchema;
use pi_tool::session::{
    AgentSession, ExtensionApi, FnExtension, NoTools, SessionError, SessionEvent, ToolCallDecision,
    ToolCallEvent, ToolResultEvent, ToolResultPatch, ToolSource,
};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{
    AgentToolResult, CallPolicy, JsonSchema, JsonToolResult, Tool, ToolError, ToolSpec, Value,
    async_trait, json,
};
use serde::Deserialize;

type Body = dyn Fn(&Value, &ExtensionContext) -> Result<JsonToolResult, ToolError> + Send + Sync;

/// A JSON-level tool whose body is a closure.
struct FnTool {
    spec: ToolSpec,
    body: Arc<Body>,
}

#[async_trait]
impl AgentTool for FnTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let _id = call.id;
        let params = call.params;
        let _signal = call.signal;
        let _on_update = call.on_update;
        let ctx = call.context.unwrap_or_else(ExtensionContext::detached);
        (self.body)(params, &ctx)
    }
}

fn tool_with(
    name: &str,
    snippet: Option<&str>,
    guidelines: &[&str],
    body: impl Fn(&Value, &ExtensionContext) -> Result<JsonToolResult, ToolError>
    + Send
    + Sync
    + 'static,
) -> Arc<dyn AgentTool> {
    let schema = Arc::new(ToolSchema::from_json(
        json!({"type": "object", "properties": {}}),
    ));
    let mut spec = ToolSpec::new(name, format!("{name} tool"), schema);
    spec.prompt_snippet = snippet.map(str::to_owned);
    spec.prompt_guidelines = guidelines.iter().map(|s| (*s).to_owned()).collect();
    Arc::new(FnTool {
        spec,
        body: Arc::new(body),
    })
}

fn tool(name: &str, text: &str) -> Arc<dyn AgentTool> {
    let text = text.to_owned();
    tool_with(name, None, &[], move |_, _| {
        Ok(AgentToolResult::text(text.clone(), None))
    })
}

fn call(id: &str, name: &str, args: Value) -> FauxTurn {
    FauxTurn::new(vec![AssistantContent::tool_call(id, name, args)])
}

fn results(session: &AgentSession) -> Vec<(String, String, bool)> {
    session
        .agent()
        .messages()
        .iter()
        .filter_map(|m| m.as_tool_result())
        .map(|r| {
            let text = r
                .content
                .iter()
                .filter_map(|c| c.as_text())
                .collect::<String>();
            (r.tool_call_id.to_string(), text, r.is_error)
        })
        .collect()
}

fn faux(turns: Vec<FauxTurn>) -> (FauxModel, Arc<FauxModel>) {
    let model = FauxModel::new(turns);
    (model.clone(), Arc::new(model))
}

fn ext(
    name: &str,
    f: impl Fn(&ExtensionApi) -> Result<(), SessionError> + Send + Sync + 'static,
) -> FnExtension<impl Fn(&ExtensionApi) -> Result<(), SessionError> + Send + Sync + 'static> {
    FnExtension::new(name, f)
}

#[test]
fn two_extensions_registering_one_name_fail_naming_both_owners() {
    let error = AgentSession::builder(Arc::new(FauxModel::default()))
        .extension(ext("ext-a", |api| api.register_tool(tool("dup_ext", "a"))))
        .extension(ext("ext-b", |api| api.register_tool(tool("dup_ext", "b"))))
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool name \"dup_ext\" is registered twice: by <inline:ext-a> and by <inline:ext-b>"
    );
}

#[test]
fn an_extension_and_a_custom_tool_with_one_name_fail_even_when_filtered_out() {
    let error = AgentSession::builder(Arc::new(FauxModel::default()))
        .extension(ext("ext-a", |api| api.register_tool(tool("dup", "a"))))
        .custom_tool(tool("dup", "custom"))
        .tools(["other"])
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool name \"dup\" is registered twice: by <inline:ext-a> and by custom tools"
    );
    let error = AgentSession::builder(Arc::new(FauxModel::default()))
        .custom_tool(tool("x", "1"))
        .custom_tool(tool("x", "2"))
        .build()
        .unwrap_err();
    assert!(matches!(error, SessionError::DuplicateTools(_)), "{error}");
}

#[tokio::test]
async fn an_owner_registering_its_name_again_replaces_its_own_tool_in_place() {
    let (model, stream) = faux(vec![call("c1", "same", json!({}))]);
    let session = AgentSession::builder(stream)
        .extension(ext("ext-a", |api| {
            api.register_tool(tool("same", "v1"))?;
            api.register_tool(tool("other", "o"))?;
            api.register_tool(tool("same", "v2"))
        }))
        .build()
        .unwrap();
    assert_eq!(session.active_tool_names(), ["same", "other"]);
    session.prompt("go").await.unwrap();
    assert_eq!(results(&session), [("c1".into(), "v2".into(), false)]);
    assert_eq!(model.requests()[0].tools, ["same", "other"]);
}

#[tokio::test]
async fn a_failed_model_call_is_ok_from_prompt_and_err_from_ensure_ok() {
    let session = AgentSession::builder(Arc::new(FauxModel::new(vec![
        FauxTurn::text("")
            .with_stop_reason(pi_tool::model::StopReason::Error)
            .with_error_message("Connection error."),
        FauxTurn::text("Fine now."),
    ])))
    .build()
    .unwrap();
    // Pi's semantics: the run ended, so `prompt` is `Ok`.
    session.prompt("Hello").await.unwrap();
    let failed = session.ensure_ok().unwrap_err();
    assert_eq!(failed.message(), "Connection error.");
    // The next run starts clean.
    session.prompt("Again").await.unwrap();
    assert_eq!(session.ensure_ok(), Ok(()));
}

#[tokio::test]
async fn the_allowlist_and_excludes_filter_the_registry_itself() {
    let session = AgentSession::builder(Arc::new(FauxModel::default()))
        .extension(ext("ext", |api| {
            api.register_tool(tool("a", "a"))?;
            api.register_tool(tool("b", "b"))
        }))
        .custom_tool(tool("c", "c"))
        .custom_tool(tool("d", "d"))
        .tools(["c", "a", "d", "missing"])
        .exclude_tools(["d"])
        .build()
        .unwrap();
    let names: Vec<String> = session
        .all_tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, ["a", "c"]);
    assert_eq!(session.active_tool_names(), ["c", "a"]);
    let change = session
        .set_active_tools(["a", "b", "d", "a", "zz"])
        .unwrap();
    assert_eq!(change.active, ["a"]);
    assert_eq!(change.unknown, ["b", "d", "zz"]);
    assert_eq!(change.duplicates, ["a"]);
    assert_eq!(session.active_tool_names(), ["a"]);
}

#[tokio::test]
async fn an_empty_allowlist_means_no_tools_and_the_prompt_says_none() {
    let session = AgentSession::builder(Arc::new(FauxModel::default()))
        .custom_tool(tool("a", "a"))
        .tools(Vec::<String>::new())
        .build()
        .unwrap();
    assert!(session.all_tools().is_empty());
    assert!(
        session
            .system_prompt()
            .contains("Available tools:\n(none)\n")
    );
}

#[tokio::test]
async fn changing_active_tools_inside_a_run_applies_from_the_next_model_call() {
    let (model, stream) = faux(vec![
        FauxTurn::new(vec![
            AssistantContent::tool_call("c1", "switch", json!({})),
            AssistantContent::tool_call("c2", "weather", json!({})),
        ]),
        call("c3", "weather", json!({})),
    ]);
    let api_slot: Arc<Mutex<Option<ExtensionApi>>> = Arc::default();
    let slot = api_slot.clone();
    let session = AgentSession::builder(stream)
        .extension(ext("ext", move |api| {
            *slot.lock().unwrap() = Some(api.clone());
            api.register_tool(tool_with("weather", Some("Weather"), &[], |_, _| {
                Ok(AgentToolResult::text("sunny", None))
            }))?;
            let handle = api.clone();
            api.register_tool(tool_with("switch", Some("Switch"), &[], move |_, _| {
                let change = handle.set_active_tools(["switch"])?;
                assert_eq!(change.active, ["switch"]);
                Ok(AgentToolResult::text("switched", None))
            }))
        }))
        .build()
        .unwrap();
    session.prompt("go").await.unwrap();
    let requests = model.requests();
    assert_eq!(requests[0].tools, ["weather", "switch"]);
    assert_eq!(requests[1].tools, ["switch"]);
    assert!(
        requests[1]
            .system_prompt
            .contains("Available tools:\n- switch: Switch\n")
    );
    // The batch keeps its snapshot (c2 ran); the next turn no longer finds weather.
    assert_eq!(
        results(&session),
        [
            ("c1".into(), "switched".into(), false),
            ("c2".into(), "sunny".into(), false),
            ("c3".into(), "Tool weather not found".into(), true),
        ]
    );
    assert!(api_slot.lock().unwrap().is_some());
}

#[tokio::test]
async fn a_call_that_only_adds_active_tools_records_them_on_its_result() {
    let (_model, stream) = faux(vec![
        call("c1", "load", json!({})),
        call("c2", "load_again", json!({})),
        call("c3", "narrow", json!({})),
    ]);
    let session = AgentSession::builder(stream)
        .extension(ext("ext", move |api| {
            let handle = api.clone();
            api.register_tool(tool_with("load", None, &[], move |_, _| {
                handle.set_active_tools(["load", "load_again", "narrow", "extra", "more"])?;
                // Named by the tool itself too: kept first, not repeated.
                Ok(AgentToolResult::text("loaded", None).with_added_tool_names(["more"]))
            }))?;
            let handle = api.clone();
            api.register_tool(tool_with("load_again", None, &[], move |_, _| {
                // The same list again: nothing added.
                handle.set_active_tools(["load", "load_again", "narrow", "extra", "more"])?;
                Ok(AgentToolResult::text("same", None))
            }))?;
            let handle = api.clone();
            api.register_tool(tool_with("narrow", None, &[], move |_, _| {
                // Adds `other` but removes `extra`: not a load point.
                handle.set_active_tools(["load", "load_again", "narrow", "more", "other"])?;
                Ok(AgentToolResult::text("narrowed", None))
            }))?;
            for name in ["extra", "more", "other"] {
                api.register_tool(tool(name, name))?;
            }
            Ok(())
        }))
        .build()
        .unwrap();
    session
        .set_active_tools(["load", "load_again", "narrow"])
        .unwrap();
    session.prompt("go").await.unwrap();
    let added: Vec<Option<Vec<String>>> = session
        .agent()
        .messages()
        .iter()
        .filter_map(Message::as_tool_result)
        .map(|m| m.added_tool_names.clone())
        .collect();
    assert_eq!(
        added,
        [
            Some(vec!["more".to_owned(), "extra".to_owned()]),
            None,
            None
        ]
    );
}

#[tokio::test]
async fn a_tool_registered_at_run_time_is_active_for_the_next_call_and_cannot_take_a_name() {
    let (model, stream) = faux(vec![
        call("c1", "loader", json!({})),
        call("c2", "late", json!({})),
    ]);
    let session = AgentSession::builder(stream)
        .custom_tool(tool("taken", "t"))
        .extension(ext("ext", |api| {
            let handle = api.clone();
            api.register_tool(tool_with("loader", None, &[], move |_, _| {
                let conflict = handle.register_tool(tool("taken", "mine")).unwrap_err();
                handle.register_tool(tool("late", "late ran"))?;
                Ok(AgentToolResult::text(conflict.to_string(), None))
            }))
        }))
        .build()
        .unwrap();
    session.prompt("go").await.unwrap();
    assert_eq!(model.requests()[1].tools, ["loader", "taken", "late"]);
    assert_eq!(
        results(&session),
        [
            (
                "c1".into(),
                "tool name \"taken\" is registered twice: by custom tools and by <inline:ext>"
                    .into(),
                false
            ),
            ("c2".into(), "late ran".into(), false),
        ]
    );
}

/// A host's built-in set shaped like Pi's: `read`, `bash`, `edit`, `write` active by
/// default, `grep` and `ls` registered.
fn builtins() -> ToolPack {
    let mut pack = ToolPack::new();
    for name in ["read", "bash", "edit", "write", "grep", "ls"] {
        let body = format!("builtin {name}");
        let t = tool_with(name, Some(&format!("{name} snippet")), &[], move |_, _| {
            Ok(AgentToolResult::text(body.clone(), None))
        });
        pack.push(ToolOwner::new("builtins"), t).unwrap();
    }
    pack
}

const DEFAULTS: [&str; 4] = ["read", "bash", "edit", "write"];

fn registry(session: &AgentSession) -> Vec<(String, &'static str, String)> {
    session
        .all_tools()
        .iter()
        .map(|t| (t.name().to_owned(), t.source.as_pi_str(), t.source_path()))
        .collect()
}

#[tokio::test]
async fn builtins_come_first_and_the_defaults_are_active_beside_every_other_tool() {
    let (model, stream) = faux(vec![call("c1", "read", json!({}))]);
    let session = AgentSession::builder(stream)
        .builtin_tools(builtins(), DEFAULTS)
        .extension(ext("ext", |api| api.register_tool(tool("ext_tool", "e"))))
        .custom_tool(tool("mine", "m"))
        .build()
        .unwrap();
    assert_eq!(
        session.active_tool_names(),
        ["read", "bash", "edit", "write", "ext_tool", "mine"]
    );
    let all = registry(&session);
    assert_eq!(all[0], ("read".into(), "builtin", "<builtin:read>".into()));
    assert_eq!(all[5], ("ls".into(), "builtin", "<builtin:ls>".into()));
    assert_eq!(all[6], ("ext_tool".into(), "inline", "<inline:ext>".into()));
    assert_eq!(all[7], ("mine".into(), "sdk", "<sdk:mine>".into()));
    assert_eq!(session.all_tools()[0].source, ToolSource::Builtin);
    // grep and ls are registered, not active: the bash exploration line comes first;
    // with grep active it is gone.
    assert!(
        session
            .system_prompt()
            .contains("Guidelines:\n- Use bash for file operations like ls, rg, find\n")
    );
    session.set_active_tools(["bash", "grep"]).unwrap();
    assert!(!session.system_prompt().contains("Use bash for file"));
    session.prompt("go").await.unwrap();
    // read is registered but no longer active: Pi's "Tool read not found".
    assert_eq!(model.requests()[0].tools, ["bash", "grep"]);
    assert_eq!(
        results(&session),
        [("c1".into(), "Tool read not found".into(), true)]
    );
}

#[tokio::test]
async fn a_shadowing_extension_or_custom_tool_takes_the_builtins_place() {
    let (_, stream) = faux(vec![call("c1", "bash", json!({}))]);
    let session = AgentSession::builder(stream)
        .builtin_tools(builtins(), DEFAULTS)
        .extension(ext("ext", |api| {
            api.register_tool(tool("bash", "ext bash"))
        }))
        .custom_tool(tool("ls", "custom ls"))
        .build()
        .unwrap();
    let all = registry(&session);
    assert_eq!(all[1], ("bash".into(), "inline", "<inline:ext>".into()));
    assert_eq!(all[5], ("ls".into(), "sdk", "<sdk:ls>".into()));
    assert_eq!(all.len(), 6);
    // The shadowing tools are extension / custom tools, so construction activates them
    // (ls after the defaults).
    assert_eq!(
        session.active_tool_names(),
        ["read", "bash", "edit", "write", "ls"]
    );
    session.prompt("go").await.unwrap();
    assert_eq!(results(&session), [("c1".into(), "ext bash".into(), false)]);
    // A shadowed name still cannot have two non-built-in owners.
    let error = AgentSession::builder(Arc::new(FauxModel::default()))
        .builtin_tools(builtins(), DEFAULTS)
        .extension(ext("ext", |api| api.register_tool(tool("read", "x"))))
        .custom_tool(tool("read", "y"))
        .build()
        .unwrap_err();
    assert!(matches!(error, SessionError::DuplicateTools(_)), "{error}");
}

#[test]
fn no_tools_builtin_keeps_them_registered_and_all_removes_every_tool() {
    let session = AgentSession::builder(Arc::new(FauxModel::default()))
        .builtin_tools(builtins(), DEFAULTS)
        .custom_tool(tool("mine", "m"))
        .no_tools(NoTools::Builtin)
        .build()
        .unwrap();
    assert_eq!(session.active_tool_names(), ["mine"]);
    assert_eq!(session.all_tools().len(), 7);
    let change = session.set_active_tools(["grep", "mine"]).unwrap();
    assert!(change.unknown.is_empty());

    let session = AgentSession::builder(Arc::new(FauxModel::default()))
        .builtin_tools(builtins(), DEFAULTS)
        .custom_tool(tool("mine", "m"))
        .no_tools(NoTools::All)
        .build()
        .unwrap();
    assert!(session.all_tools().is_empty());
    assert!(session.active_tool_names().is_empty());
    // An allowlist wins over noTools "all".
    let session = AgentSession::builder(Arc::new(FauxModel::default()))
        .builtin_tools(builtins(), DEFAULTS)
        .no_tools(NoTools::All)
        .tools(["grep", "read"])
        .build()
        .unwrap();
    assert_eq!(session.active_tool_names(), ["grep", "read"]);
    // Excluded defaults are neither registered nor active.
    let session = AgentSession::builder(Arc::new(FauxModel::default()))
        .builtin_tools(builtins(), DEFAULTS)
        .exclude_tools(["bash"])
        .build()
        .unwrap();
    assert_eq!(session.active_tool_names(), ["read", "edit", "write"]);
    assert!(session.all_tools().iter().all(|t| t.name() != "bash"));
}

#[test]
fn a_session_without_builtins_has_only_its_own_tools() {
    let session = AgentSession::builder(Arc::new(FauxModel::default()))
        .custom_tool(tool("mine", "m"))
        .build()
        .unwrap();
    assert_eq!(session.active_tool_names(), ["mine"]);
    assert_eq!(session.all_tools().len(), 1);
}

#[test]
fn the_system_prompt_lists_active_snippets_and_guidelines_and_a_custom_prompt_replaces_it() {
    let session = AgentSession::builder(Arc::new(FauxModel::default()))
        .custom_tool(tool_with(
            "a",
            Some("Does\n a"),
            &["Prefer a", " Prefer a "],
            |_, _| Ok(JsonToolResult::error("unused")),
        ))
        .custom_tool(tool_with(
            "b",
            None,
            &["Be concise in your responses", "Use b"],
            |_, _| Ok(JsonToolResult::error("unused")),
        ))
        .cwd("/work")
        .build()
        .unwrap();
    let prompt = session.system_prompt();
    assert!(
        prompt.contains("\n\nAvailable tools:\n- a: Does a\n\n"),
        "{prompt}"
    );
    assert!(prompt.contains(
        "\n\nGuidelines:\n- Prefer a\n- Be concise in your responses\n- Use b\n- Show file paths clearly when working with files"
    ));
    assert!(prompt.ends_with("\nCurrent working directory: /work"));
    session.set_active_tools(["b"]).unwrap();
    assert!(
        session
            .system_prompt()
            .contains("Available tools:\n(none)\n")
    );

    let custom = AgentSession::builder(Arc::new(FauxModel::default()))
        .custom_tool(tool_with("a", Some("A"), &["g"], |_, _| {
            Ok(JsonToolResult::error("x"))
        }))
        .system_prompt("You are terse.")
        .cwd("/work")
        .build()
        .unwrap();
    assert_eq!(
        custom.system_prompt(),
        "You are terse.\nCurrent working directory: /work\n"
    );
}

#[tokio::test]
async fn tool_call_handlers_block_mutate_and_fail_in_load_order() {
    let (_, stream) = faux(vec![FauxTurn::new(vec![
        AssistantContent::tool_call("c_block", "echo", json!({})),
        AssistantContent::tool_call("c_default", "echo", json!({})),
        AssistantContent::tool_call("c_fail", "echo", json!({})),
        AssistantContent::tool_call("c_mutate", "echo", json!({})),
        AssistantContent::tool_call("c_unknown", "nope", json!({})),
    ])]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen_a = seen.clone();
    let seen_b = seen.clone();
    let session = AgentSession::builder(stream)
        .custom_tool(tool_with("echo", None, &[], |params, _| {
            Ok(AgentToolResult::text(params.to_string(), None))
        }))
        .extension(ext("ext-a", move |api| {
            let seen = seen_a.clone();
            api.on_tool_call(move |e: &mut ToolCallEvent, _: &ExtensionContext| {
                seen.lock().unwrap().push(format!("a:{}", e.tool_call_id));
                match e.tool_call_id.as_str() {
                    "c_block" => Ok(ToolCallDecision::block("blocked by a")),
                    "c_fail" => Err(ToolError::new("handler a failed")),
                    "c_mutate" => {
                        e.input = json!({"added": 1});
                        Ok(ToolCallDecision::Allow)
                    }
                    _ => Ok(ToolCallDecision::Allow),
                }
            })
        }))
        .extension(ext("ext-b", move |api| {
            let seen = seen_b.clone();
            api.on_tool_call(move |e: &mut ToolCallEvent, _: &ExtensionContext| {
                seen.lock().unwrap().push(format!("b:{}", e.tool_call_id));
                Ok(if e.tool_call_id == "c_default" {
                    ToolCallDecision::Block {
                        reason: None,
                        terminate: false,
                    }
                } else {
                    ToolCallDecision::Allow
                })
            })
        }))
        .build()
        .unwrap();
    session.prompt("go").await.unwrap();
    assert_eq!(
        results(&session),
        [
            ("c_block".into(), "blocked by a".into(), true),
            (
                "c_default".into(),
                "Tool execution was blocked".into(),
                true
            ),
            ("c_fail".into(), "handler a failed".into(), true),
            ("c_mutate".into(), "{\"added\":1}".into(), false),
            ("c_unknown".into(), "Tool nope not found".into(), true),
        ]
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "a:c_block",
            "a:c_default",
            "b:c_default",
            "a:c_fail",
            "a:c_mutate",
            "b:c_mutate"
        ]
    );
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
struct CityParams {
    city: String,
}

struct CityTool;

impl Tool for CityTool {
    type Params = CityParams;
    type Details = ();
    const NAME: &'static str = "city_tool";
    const LABEL: &'static str = "City";
    const DESCRIPTION: &'static str = "Echo a city";

    async fn execute(
        &self,
        call: ToolInvocation<'_, CityParams, ()>,
    ) -> Result<AgentToolResult<()>, ToolError> {
        Ok(AgentToolResult::text(
            format!("city {}", call.params.city),
            (),
        ))
    }
}

#[tokio::test]
async fn a_handler_change_that_breaks_a_typed_tools_params_is_an_error_result() {
    let (_, stream) = faux(vec![FauxTurn::new(vec![
        AssistantContent::tool_call("ok", "city_tool", json!({"city": "Paris"})),
        AssistantContent::tool_call("broken", "city_tool", json!({"city": "Paris"})),
    ])]);
    let typed = Arc::new(Mutex::new(Vec::new()));
    let sink = typed.clone();
    let session = AgentSession::builder(stream)
        .custom_tool(CityTool)
        .extension(ext("ext", move |api| {
            let sink = sink.clone();
            api.on_tool_call(move |e: &mut ToolCallEvent, _: &ExtensionContext| {
                let params = e.input_for::<CityTool>().expect("a city_tool call")?;
                sink.lock().unwrap().push(params.city);
                assert!(e.input_as::<CityParams>("other").is_none());
                if e.tool_call_id == "broken" {
                    e.input["city"] = json!(12345);
                }
                Ok(ToolCallDecision::Allow)
            })
        }))
        .build()
        .unwrap();
    session.prompt("go").await.unwrap();
    let results = results(&session);
    assert_eq!(results[0], ("ok".into(), "city Paris".into(), false));
    assert_eq!(results[1].0, "broken");
    assert!(results[1].2);
    assert!(
        results[1].1.starts_with("Validation failed for tool \"city_tool\":\n  - city: invalid type: integer `12345`, expected a string"),
        "{}",
        results[1].1
    );
    assert_eq!(*typed.lock().unwrap(), ["Paris", "Paris"]);
}

#[tokio::test]
async fn tool_result_handlers_chain_and_a_failing_one_is_reported_and_skipped() {
    let (_, stream) = faux(vec![call("c1", "echo", json!({}))]);
    let session = AgentSession::builder(stream)
        .custom_tool(tool("echo", "original"))
        .extension(ext("ext-a", |api| {
            api.on_tool_result(|_: &ToolResultEvent, _: &ExtensionContext| {
                Ok(ToolResultPatch {
                    content: Some(vec![pi_tool::Content::text("replaced")]),
                    ..Default::default()
                })
            })?;
            api.on_tool_result(|_: &ToolResultEvent, _: &ExtensionContext| {
                Err(ToolError::new("oops"))
            })
        }))
        .extension(ext("ext-b", |api| {
            api.on_tool_result(|e: &ToolResultEvent, _: &ExtensionContext| {
                assert_eq!(e.content, vec![pi_tool::Content::text("replaced")]);
                Ok(ToolResultPatch {
                    is_error: Some(true),
                    details: Some(json!({"by": "b"})),
                    ..Default::default()
                })
            })
        }))
        .build()
        .unwrap();
    let errors = Arc::new(Mutex::new(Vec::new()));
    let sink = errors.clone();
    session.subscribe(move |event| {
        if let SessionEvent::ExtensionError(e) = event {
            sink.lock()
                .unwrap()
                .push((e.extension_path.clone(), e.event.clone(), e.error.clone()));
        }
    });
    session.prompt("go").await.unwrap();
    assert_eq!(results(&session), [("c1".into(), "replaced".into(), true)]);
    let messages = session.agent().messages();
    let result = messages.iter().find_map(|m| m.as_tool_result()).unwrap();
    assert_eq!(result.details.as_deref(), Some(&json!({"by": "b"})));
    assert_eq!(
        *errors.lock().unwrap(),
        [("<inline:ext-a>".into(), "tool_result".into(), "oops".into())]
    );
}

struct Approve;

#[async_trait]
impl ExtensionUi for Approve {
    async fn confirm(&self, _: &str, _: &str) -> bool {
        true
    }
}

#[tokio::test]
async fn contexts_are_fresh_live_views_and_go_stale_after_dispose() {
    let (_, stream) = faux(vec![call("c1", "probe", json!({}))]);
    let kept: Arc<Mutex<Option<ExtensionContext>>> = Arc::default();
    let sink = kept.clone();
    let session = AgentSession::builder(stream)
        .model(FauxModel::model())
        .mode(Mode::Rpc)
        .ui(Arc::new(Approve))
        .cwd("/work")
        .custom_tool(tool_with("probe", Some("Probe"), &[], move |_, ctx| {
            assert_eq!(ctx.mode(), Mode::Rpc);
            assert!(ctx.has_ui());
            assert_eq!(ctx.cwd(), std::path::Path::new("/work"));
            assert!(!ctx.is_idle().unwrap());
            assert_eq!(ctx.model().unwrap().unwrap().id, "fake-1");
            assert!(
                ctx.system_prompt()
                    .unwrap()
                    .unwrap()
                    .contains("- probe: Probe")
            );
            let live = ctx.live_signal().unwrap().expect("a run is active");
            assert!(!live.is_aborted());
            *sink.lock().unwrap() = Some(ctx.clone());
            Ok(AgentToolResult::text("ok", None))
        }))
        .build()
        .unwrap();
    session.prompt("go").await.unwrap();
    let ctx = kept.lock().unwrap().take().unwrap();
    assert!(ctx.is_idle().unwrap());
    assert!(ctx.live_signal().unwrap().is_none());
    assert!(ctx.ui().confirm("t", "m").await);
    session.dispose();
    assert!(!ctx.is_live());
    let error = ctx.model().unwrap_err();
    assert!(
        error.to_string().starts_with("This extension ctx is stale"),
        "{error}"
    );
    assert!(ctx.is_idle().is_err() && ctx.system_prompt().is_err() && ctx.abort().is_err());
    assert!(
        !ctx.ui().confirm("t", "m").await,
        "a stale context reaches no UI"
    );
    assert_eq!(
        session.prompt("again").await.unwrap_err(),
        SessionError::Disposed
    );
}

#[test]
fn action_methods_fail_while_extensions_load() {
    let error = AgentSession::builder(Arc::new(FauxModel::default()))
        .extension(ext("early", |api| {
            api.active_tool_names()?;
            Ok(())
        }))
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Extension runtime not initialized. Action methods cannot be called during extension loading."
    );
}

#[tokio::test]
async fn configured_secrets_never_reach_the_model_in_error_text() {
    let (model, stream) = faux(vec![FauxTurn::new(vec![
        AssistantContent::tool_call("c1", "leaky", json!({})),
        AssistantContent::tool_call("c2", "blocked", json!({})),
    ])]);
    let session = AgentSession::builder(stream)
        .policy(
            CallPolicy::new()
                .redact_secrets(Redactor::new(["hunter2-secret"]).unwrap())
                .into(),
        )
        .custom_tool(tool_with("leaky", None, &[], |_, _| {
            Err(ToolError::new("login failed with password hunter2-secret"))
        }))
        .custom_tool(tool("blocked", "never"))
        .extension(ext("gate", |api| {
            api.on_tool_call(|e: &mut ToolCallEvent, _: &ExtensionContext| {
                Ok(if e.tool_name == "blocked" {
                    ToolCallDecision::block("token hunter2-secret is not allowed")
                } else {
                    ToolCallDecision::Allow
                })
            })
        }))
        .build()
        .unwrap();
    session.prompt("go").await.unwrap();
    let results = results(&session);
    assert_eq!(results[0].1, "login failed with password [REDACTED]");
    assert_eq!(results[1].1, "token [REDACTED] is not allowed");
    let sent: String = model.requests()[1]
        .messages
        .iter()
        .map(|m| serde_json::to_string(m).unwrap())
        .collect();
    assert!(!sent.contains("hunter2-secret"));
}

#[tokio::test]
async fn the_store_keeps_the_transcript_and_subscribers_see_agent_events() {
    let (_, stream) = faux(vec![]);
    let session = AgentSession::builder(stream).build().unwrap();
    let types = Arc::new(Mutex::new(Vec::new()));
    let sink = types.clone();
    let id = session.subscribe(move |event| {
        if let SessionEvent::Agent(e) = event {
            sink.lock().unwrap().push(e.name());
        }
    });
    session.prompt("hi").await.unwrap();
    session.unsubscribe(id);
    let stored: Vec<&str> = session
        .transcript()
        .messages()
        .iter()
        .map(Message::role)
        .collect::<Vec<_>>()
        .into_iter()
        .collect();
    assert_eq!(stored, ["user", "assistant"]);
    assert_eq!(types.lock().unwrap().first(), Some(&"agent_start"));
    assert_eq!(types.lock().unwrap().last(), Some(&"agent_end"));
}

#[tokio::test]
async fn handlers_see_only_valid_calls_and_a_terminating_block_obeys_the_batch_rule() {
    // A schema that is not an object fails validation for every call.
    let broken = Arc::new(FnTool {
        spec: ToolSpec::new(
            "broken",
            "broken tool",
            Arc::new(ToolSchema::from_json(json!(7))),
        ),
        body: Arc::new(|_, _| Ok(AgentToolResult::text("never", None))),
    }) as Arc<dyn AgentTool>;
    let strict = tool("strict", "ran");
    let (model, stream) = faux(vec![
        FauxTurn::new(vec![
            AssistantContent::tool_call("invalid", "broken", json!({})),
            AssistantContent::tool_call("valid", "strict", json!({"city": "Paris"})),
        ]),
        // Every call of this batch is blocked with terminate: the run stops after it.
        FauxTurn::new(vec![AssistantContent::tool_call(
            "stop",
            "strict",
            json!({"city": "Oslo"}),
        )]),
        FauxTurn::text("never requested"),
    ]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let session = AgentSession::builder(stream)
        .custom_tool(strict)
        .custom_tool(broken)
        .extension(ext("ext", move |api| {
            let sink = sink.clone();
            api.on_tool_call(move |e: &mut ToolCallEvent, _: &ExtensionContext| {
                sink.lock().unwrap().push(e.tool_call_id.clone());
                Ok(if e.tool_call_id == "stop" {
                    ToolCallDecision::block_and_terminate("stopping")
                } else {
                    ToolCallDecision::Allow
                })
            })
        }))
        .build()
        .unwrap();
    session.prompt("go").await.unwrap();
    assert_eq!(*seen.lock().unwrap(), ["valid", "stop"]);
    let results = results(&session);
    assert_eq!(results[0].0, "invalid");
    assert!(results[0].2, "{}", results[0].1);
    assert_eq!(results[1], ("valid".into(), "ran".into(), false));
    assert_eq!(results[2], ("stop".into(), "stopping".into(), true));
    assert_eq!(
        model.calls(),
        2,
        "a batch of terminating results ends the run"
    );
}

#[tokio::test]
async fn a_plain_agent_tool_works_as_a_custom_tool_and_a_session_abort_ends_the_run() {
    use pi_tool::IntoAgentTool;
    let (_, stream) = faux(vec![
        call("c1", "city_tool", json!({"city": "Tokyo"})),
        call("c2", "stopper", json!({})),
        FauxTurn::text("never"),
    ]);
    let slot: Arc<Mutex<Option<AgentSession>>> = Arc::default();
    let handle = slot.clone();
    let session = AgentSession::builder(stream)
        .agent_tool(CityTool.into_agent_tool())
        .custom_tool(tool_with("stopper", None, &[], move |_, ctx| {
            // Both paths abort the same run: the session and the tool's context.
            if let Some(s) = handle.lock().unwrap().as_ref() {
                s.abort();
            }
            ctx.abort()?;
            Ok(AgentToolResult::text("stopped", None))
        }))
        .build()
        .unwrap();
    *slot.lock().unwrap() = Some(session.clone());
    session.prompt("go").await.unwrap();
    slot.lock().unwrap().take();
    let results = results(&session);
    assert_eq!(results[0], ("c1".into(), "city Tokyo".into(), false));
    let last = session.agent().messages().last().cloned().unwrap();
    assert_eq!(
        last.as_assistant().map(|a| a.stop_reason),
        Some(pi_tool::model::StopReason::Aborted)
    );
}

#[tokio::test]
async fn a_session_takes_the_argument_limits_of_the_run_policy() {
    let deep = json!({"a": {"b": {"c": {"d": 1}}}});
    let (_, stream) = faux(vec![
        call("deep", "echo", deep.clone()),
        call("flat", "echo", json!({"a": 1})),
    ]);
    let session = AgentSession::builder(stream)
        .custom_tool(tool("echo", "ok"))
        .policy(
            CallPolicy::new()
                .argument_limits(pi_tool::schema::ArgumentLimits::new().max_depth(2))
                .into(),
        )
        .build()
        .unwrap();
    session.prompt("go").await.unwrap();
    let results = results(&session);
    assert!(results[0].2, "the deep call is refused: {results:?}");
    assert!(
        results[0].1.contains("the limit is 2 (max_depth)"),
        "{:?}",
        results[0].1
    );
    assert_eq!(results[1], ("flat".into(), "ok".into(), false));
}
