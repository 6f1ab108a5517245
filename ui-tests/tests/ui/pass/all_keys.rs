//! Every key at once.
use std::time::Duration;

use pi_tool::{TaskSupport, ToolError, ToolExecutionMode, Tool, pi_tool};

#[pi_tool(
    name = "lookup-user",
    label = "Look up a user",
    description = "Finds a user by id.",
    execution_mode = "parallel",
    task_support = "optional",
    prompt_snippet = "lookup-user: find a user by id",
    prompt_guidelines = ["Use lookup-user before editing a user.", "Never guess ids."],
    timeout = "1500ms",
    reaches = ["wait", "read-file"],
    concurrency = ("network", 2),
)]
pub async fn find_user() -> Result<String, ToolError> {
    Ok("ada".to_owned())
}

/// Waits.
#[pi_tool(timeout = "2m", concurrency = "cpu")]
pub async fn wait() -> Result<String, ToolError> {
    Ok(String::new())
}

fn main() {
    assert_eq!(FindUser::NAME, "lookup-user");
    assert_eq!(FindUser::LABEL, "Look up a user");
    assert_eq!(FindUser::DESCRIPTION, "Finds a user by id.");
    assert_eq!(FindUser::EXECUTION_MODE, Some(ToolExecutionMode::Parallel));
    assert_eq!(FindUser::TASK_SUPPORT, Some(TaskSupport::Optional));
    assert_eq!(Wait::TASK_SUPPORT, None);
    assert_eq!(FindUser::PROMPT_SNIPPET, Some("lookup-user: find a user by id"));
    assert_eq!(FindUser::PROMPT_GUIDELINES.len(), 2);
    assert_eq!(FindUser::TIMEOUT, Some(Duration::from_millis(1500)));
    assert_eq!(Wait::TIMEOUT, Some(Duration::from_secs(120)));
    assert_eq!(Wait::LABEL, "Wait");
    assert_eq!(FindUser::REACHES, ["wait", "read-file"]);
    assert!(Wait::REACHES.is_empty());
    assert_eq!(FindUser::CONCURRENCY, Some(pi_tool::ConcurrencyClass::new("network", 2)));
    assert_eq!(Wait::CONCURRENCY.map(|c| c.weight()), Some(1));
}
