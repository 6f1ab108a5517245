//! The MCP methods of a [`PackServer`] (rmcp's `ServerHandler`): what it declares, its
//! lists, reads, subscriptions, prompts, completions and tasks; `tools/call` goes to
//! `dispatch.rs`.

// Logging and resource subscriptions are deprecated by SEP-2577 (2026-07-28); the
// revisions before it have them, and this server serves those too.
#![allow(deprecated)]

use std::sync::PoisonError;

use pi_tool_core::{AbortSignal, Value};
use rmcp::model::{
    CacheScope, ConstString, GetPromptRequestMethod, ListPromptsRequestMethod,
    ListResourceTemplatesRequestMethod, ListResourcesRequestMethod, ReadResourceRequestMethod,
    SubscribeRequestMethod, UnsubscribeRequestMethod,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult,
    JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, PromptsCapability, ReadResourceRequestParams,
    ReadResourceResponse, ResourceUpdatedNotification, ResourceUpdatedNotificationParam,
    ResourcesCapability, ServerCapabilities, ServerConfig, ServerNotification,
    SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, TASKS_EXTENSION_ID, Tool,
    ToolsCapability, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData as McpError, ServerHandler};

use super::PackServer;
use super::extras::{complete, get_prompt, read_resource};
use super::served::{effective_support, forward_list_changes};

/// A method of a capability the server did not declare is unknown to it (-32601), as
/// rmcp's own handler answers: no empty list that looks like an answer.
impl PackServer {
    fn serves_resources<M: ConstString>(&self) -> Result<(), McpError> {
        if self.resources.is_empty() {
            return Err(McpError::method_not_found::<M>());
        }
        Ok(())
    }

    /// The caching hints of a list or a read, at 2026-07-28 (the revision that has them)
    /// only.
    fn cache_hints(&self, context: &RequestContext<RoleServer>) -> Option<(u64, CacheScope)> {
        context
            .protocol_version()
            .is_some_and(|version| version.to_string().as_str() >= "2026-07-28")
            .then_some(self.cache_hints)
    }

    fn serves_prompts<M: ConstString>(&self) -> Result<(), McpError> {
        if self.prompts.is_empty() {
            return Err(McpError::method_not_found::<M>());
        }
        Ok(())
    }
}

impl ServerHandler for PackServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::default();
        let mut tools = ToolsCapability::default();
        if self.served.may_change() {
            tools.list_changed = Some(true);
        }
        capabilities.tools = Some(tools);
        if !self.resources.is_empty() {
            let mut resources = ResourcesCapability::default();
            resources.subscribe = Some(true);
            capabilities.resources = Some(resources);
        }
        capabilities.logging = Some(Default::default());
        if !self.prompts.is_empty() {
            capabilities.prompts = Some(PromptsCapability::default());
        }
        if self.completions.is_some() {
            capabilities.completions = Some(Default::default());
        }
        let entries = self.served.entries();
        let tasks = entries
            .iter()
            .any(|entry| effective_support(entry.tool.as_ref(), &self.task_support).is_some());
        if tasks {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
        }
        let config = ServerConfig::new(capabilities).with_server_info(self.server_info.clone());
        match &self.instructions {
            Some(instructions) => config.with_instructions(instructions.clone()),
            None => config,
        }
    }

    /// A session of a revision before 2026-07-28 hears of every change of the served
    /// tools (`notifications/tools/list_changed`) once the [`ServedTools`](crate::ServedTools) handle was
    /// taken, until it ends.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.served.may_change() {
            tokio::spawn(forward_list_changes(self.served.changes(), context.peer));
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut result = ListToolsResult::with_all_items(self.listed_tools());
        if let Some((ttl, scope)) = self.cache_hints(&context) {
            result = result.with_ttl_ms(ttl).with_cache_scope(scope);
        }
        Ok(result)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.serves_resources::<ListResourcesRequestMethod>()?;
        let mut result = ListResourcesResult::with_all_items(self.resources.resources());
        if let Some((ttl, scope)) = self.cache_hints(&context) {
            result = result.with_ttl_ms(ttl).with_cache_scope(scope);
        }
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.serves_resources::<ListResourceTemplatesRequestMethod>()?;
        let mut result = ListResourceTemplatesResult::with_all_items(self.resources.templates());
        if let Some((ttl, scope)) = self.cache_hints(&context) {
            result = result.with_ttl_ms(ttl).with_cache_scope(scope);
        }
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.serves_resources::<ReadResourceRequestMethod>()?;
        read_resource(&self.resources, &request.uri, self.cache_hints(&context)).await
    }

    /// At 2026-07-28 a client listens for the updates of the resources the pack has
    /// (`subscriptions/listen`), as `resources/subscribe` before.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        if requested.tools_list_changed == Some(true) && self.served.may_change() {
            accepted.tools_list_changed = Some(true);
        }
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| self.resources.has(uri))
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        use tokio::sync::broadcast::error::RecvError;
        let mut updates = self.resources.updates();
        let mut tool_changes = self.served.changes();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                change = tool_changes.recv(), if context.accepted().tools_list_changed == Some(true) => {
                    if let Ok(()) | Err(RecvError::Lagged(_)) = change {
                        // A closed stream ends with `cancelled`.
                        let _ = context.sink().notify_tool_list_changed().await;
                    }
                }
                update = updates.recv() => match update {
                    Ok(uri) => {
                        let update = ServerNotification::ResourceUpdatedNotification(
                            ResourceUpdatedNotification::new(ResourceUpdatedNotificationParam::new(uri)),
                        );
                        // A URI the listener did not ask for is not sent (the sink
                        // refuses it); a closed stream ends with `cancelled`.
                        let _ = context.sink().send(update).await;
                    }
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => {
                        context.cancelled().await;
                        return Ok(());
                    }
                },
            }
        }
    }

    #[allow(deprecated)] // 2026-07-28 removed it; this serves the revisions before.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.serves_resources::<SubscribeRequestMethod>()?;
        if !self.resources.has(&request.uri) {
            return Err(McpError::invalid_params(
                format!("Resource not found: {}", request.uri),
                Some(serde_json::json!({ "uri": request.uri })),
            ));
        }
        self.subscriptions
            .subscribe(request.uri, &self.resources, context.peer);
        Ok(())
    }

    #[allow(deprecated)] // 2026-07-28 removed it; this serves the revisions before.
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.serves_resources::<UnsubscribeRequestMethod>()?;
        self.subscriptions.unsubscribe(&request.uri);
        Ok(())
    }

    #[allow(deprecated)] // 2026-07-28 removed it; this serves the revisions before.
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        *self
            .log_level
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(request.level);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.serves_prompts::<ListPromptsRequestMethod>()?;
        let mut result = ListPromptsResult::with_all_items(self.prompts.prompts());
        if let Some((ttl, scope)) = self.cache_hints(&context) {
            result = result.with_ttl_ms(ttl).with_cache_scope(scope);
        }
        Ok(result)
    }

    async fn get_prompt(
        &self,
        mut request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        self.serves_prompts::<GetPromptRequestMethod>()?;
        // A prompt's function asks its client as a tool does (CallingClient).
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let name = request.name.clone();
        let input = self.call_input(
            &context,
            AbortSignal::from_token(context.ct.child_token()),
            ("prompt", &name, &arguments),
            request.input_responses.take(),
            request.request_state.take().as_deref(),
        )?;
        let get = input.scope(get_prompt(&self.prompts, request));
        tokio::select! {
            answer = get => answer,
            () = input.suspended() => self.suspended(&input),
        }
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        complete(self.completions.as_ref(), &request)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        Ok(GetTaskResult::new(self.tasks.get(&request.task_id).await?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks
            .update(&request.task_id, request.input_responses)
            .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.cancel(&request.task_id).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.served
            .entries()
            .iter()
            .find(|entry| entry.listed.name == name)
            .map(|entry| entry.listed.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.call(request, context).await
    }
}
