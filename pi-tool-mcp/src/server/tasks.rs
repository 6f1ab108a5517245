//! Tasks (SEP-2663, the `io.modelcontextprotocol/tasks` extension): a long call runs in
//! the background while the client polls it.
//!
//! A tool declared task-capable ([`PackServer::with_task_support`](crate::PackServer::with_task_support))
//! and called by a client that declared the extension becomes a task once it first waits
//! on something: the call answers a `CreateTaskResult` (`resultType: "task"`) and the
//! client follows it with `tasks/get` (status, and the inlined result once done),
//! `tasks/update` (answers to the questions the task asks, `status: "input_required"`)
//! and `tasks/cancel` (fires the tool's [`AbortSignal`](pi_tool_core::AbortSignal); the
//! task settles `cancelled`). A tool that finishes at once answers as a plain call, and
//! questions it asks before it first waits are MRTR rounds (an input-required result),
//! so a tool may gather its input and then go on as a task. Progress updates become the
//! task's `statusMessage`. A tool error is `completed` with `isError`, a panic `failed`
//! (-32603). A tool declared [`TaskSupport::Required`](pi_tool_core::TaskSupport::Required) called by a client without the
//! extension is refused with -32021.
//!
//! What `tasks/get` reports lives behind [`TaskStore`], so that a store that outlives the
//! process keeps finished tasks across a restart; [`MemoryTaskStore`] is the default.
//! The running calls themselves stay in the process that runs them. With a store that
//! replicas share, `tasks/cancel` answered by a replica that does not run the task
//! records it `cancelled` in the store (what every replica reads from then on), and the
//! replica that runs it reads that back every [`TaskStore::cancel_check_interval`] and
//! fires the tool's abort signal; `tasks/update` there is refused, since only the
//! process running the task can hand its tool the answers.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pi_tool_core::{AbortController, async_trait};
use rmcp::model::{DetailedTask, InputRequests, InputResponses, JsonObject, Task, TaskPayload};
use serde_json::Value;
use tokio::sync::Notify;

/// Why a [`TaskStore`] could not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskStoreError(pub String);

impl fmt::Display for TaskStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "task store: {}", self.0)
    }
}

impl std::error::Error for TaskStoreError {}

/// Where the state of tasks is kept: the `DetailedTask` JSON `tasks/get` answers, by
/// task id, for at least `ttl`. Implement it over a database to keep finished tasks
/// across restarts; [`MemoryTaskStore`] keeps them in memory.
#[async_trait]
pub trait TaskStore: Send + Sync + 'static {
    /// Writes the state of a task (creating it or replacing the last one), unless the
    /// state saved last has ended (its `status` is `completed`, `failed` or
    /// `cancelled`): an ended task keeps that state, and this changes nothing. So a
    /// cancellation another replica recorded is not overwritten by the end the tool
    /// reaches afterwards; a store shared by processes must decide this atomically.
    async fn save(&self, task_id: &str, state: Value, ttl: Duration) -> Result<(), TaskStoreError>;
    /// The last state saved for a task, unless none was or it expired.
    async fn load(&self, task_id: &str) -> Result<Option<Value>, TaskStoreError>;

    /// Whether the process that saved the task's last state is gone, so that a task it
    /// was running can never finish (`tasks/get` then reports it `failed`). A store shared
    /// by replicas or kept across restarts knows its writers; the default, for a store
    /// that lives and dies with its process, is `false`.
    async fn orphaned(&self, task_id: &str) -> Result<bool, TaskStoreError> {
        let _ = task_id;
        Ok(false)
    }

    /// How often the process running a task reads its state back, to learn that another
    /// process recorded it `cancelled` (a `tasks/cancel` another replica answered) and
    /// abort the tool. `None`, the default, for a store only this process writes: it
    /// then never reads a running task back.
    fn cancel_check_interval(&self) -> Option<Duration> {
        None
    }
}

/// Whether a saved task state has ended (`completed`, `failed` or `cancelled`): the
/// states [`TaskStore::save`] never replaces.
pub(crate) fn has_ended(state: &Value) -> bool {
    matches!(
        state.get("status").and_then(Value::as_str),
        Some("completed" | "failed" | "cancelled")
    )
}

/// The error of a task whose process died before it finished (`tasks/get` on another
/// replica, or after a restart).
pub const ORPHANED_TASK_MESSAGE: &str = "the server process running this task stopped before it finished; the tool may have run in part";

/// The default [`TaskStore`]: in memory, each task until its time to live ends, at most
/// [`MemoryTaskStore::DEFAULT_CAPACITY`] live tasks (a new one beyond is refused).
#[derive(Debug)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, (Value, SystemTime)>>,
    capacity: usize,
}

impl MemoryTaskStore {
    /// How many live tasks the default store keeps.
    pub const DEFAULT_CAPACITY: usize = 10_000;

    /// A store of at most `capacity` live tasks.
    pub fn with_capacity(capacity: usize) -> Self {
        MemoryTaskStore {
            tasks: Mutex::default(),
            capacity,
        }
    }
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self::with_capacity(Self::DEFAULT_CAPACITY)
    }
}

#[async_trait]
impl TaskStore for MemoryTaskStore {
    async fn save(&self, task_id: &str, state: Value, ttl: Duration) -> Result<(), TaskStoreError> {
        let now = SystemTime::now();
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((saved, expires)) = tasks.get(task_id)
            && *expires > now
            && has_ended(saved)
        {
            return Ok(());
        }
        if !tasks.contains_key(task_id) && tasks.len() >= self.capacity {
            tasks.retain(|_, (_, expires)| *expires > now);
            if tasks.len() >= self.capacity {
                return Err(TaskStoreError(format!(
                    "{} tasks are live, the most this store keeps",
                    self.capacity
                )));
            }
        }
        tasks.insert(task_id.to_owned(), (state, now + ttl));
        Ok(())
    }

    async fn load(&self, task_id: &str) -> Result<Option<Value>, TaskStoreError> {
        let tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(tasks
            .get(task_id)
            .filter(|(_, expires)| *expires > SystemTime::now())
            .map(|(state, _)| state.clone()))
    }
}

/// How long a task stays readable, from its creation.
const TASK_TTL: Duration = Duration::from_secs(60 * 60);

/// How often a client should poll.
const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// The tasks of a server: the store, and the calls running here.
pub(crate) struct Tasks {
    store: Arc<dyn TaskStore>,
    running: Mutex<HashMap<String, Arc<Running>>>,
}

/// One task running in this process.
pub(crate) struct Running {
    id: String,
    created_at: String,
    abort: AbortController,
    /// The latest progress text, the task's `statusMessage`.
    message: Mutex<Option<String>>,
    /// Questions waiting for `tasks/update`, and their answers.
    input: Mutex<Pending>,
    answered: Notify,
    /// Set once `tasks/cancel` arrived: the task ends `cancelled` whatever the tool does.
    cancelled: std::sync::atomic::AtomicBool,
}

#[derive(Default)]
struct Pending {
    asked: InputRequests,
    answers: BTreeMap<String, Value>,
}

/// A task store's failure, as the JSON-RPC error the client gets.
fn store_error(error: TaskStoreError) -> rmcp::ErrorData {
    rmcp::ErrorData::internal_error(error.to_string(), None)
}

impl Running {
    /// Fires the tool's abort signal.
    pub(crate) fn abort(&self) {
        self.abort.abort();
    }

    /// Marks the task cancelled (whatever the tool ends with) and fires its abort signal.
    fn cancel(&self) {
        self.cancelled
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.abort.abort();
    }
}

impl Tasks {
    /// How long a task stays readable, and runs at most.
    pub(crate) const TTL: Duration = TASK_TTL;

    pub(crate) fn new(store: Arc<dyn TaskStore>) -> Self {
        Tasks {
            store,
            running: Mutex::default(),
        }
    }

    /// Creates a task (saved `working` before this returns, so that `tasks/get` finds
    /// it at once) whose tool `abort` stops.
    pub(crate) async fn create(
        &self,
        abort: AbortController,
    ) -> Result<(Arc<Running>, Task), rmcp::ErrorData> {
        let now = timestamp(SystemTime::now());
        let running = Arc::new(Running {
            id: task_id(),
            created_at: now,
            abort,
            message: Mutex::default(),
            input: Mutex::default(),
            answered: Notify::new(),
            cancelled: Default::default(),
        });
        let task = self
            .save(&running, TaskPayload::Working)
            .await
            .map_err(store_error)?;
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(running.id.clone(), running.clone());
        Ok((running, task))
    }

    /// Saves the task's state; its `Task` part.
    async fn save(&self, running: &Running, payload: TaskPayload) -> Result<Task, TaskStoreError> {
        let mut task = Task::new(
            running.id.clone(),
            payload.status(),
            running.created_at.clone(),
            timestamp(SystemTime::now()),
        )
        .with_ttl_ms(TASK_TTL.as_millis() as u64)
        .with_poll_interval_ms(POLL_INTERVAL.as_millis() as u64);
        if let Some(message) = running
            .message
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        {
            task = task.with_status_message(message);
        }
        let detailed = DetailedTask::new(task.clone(), payload);
        let state = serde_json::to_value(&detailed)
            .map_err(|error| TaskStoreError(format!("a task that is not JSON: {error}")))?;
        self.store.save(&running.id, state, TASK_TTL).await?;
        Ok(task)
    }

    /// Records how the task's call ended: `result` (a `CallToolResult`'s JSON) or the
    /// JSON-RPC error; `cancelled` wins over both.
    pub(crate) async fn finish(&self, running: &Running, end: Result<JsonObject, JsonObject>) {
        let payload = if running.cancelled.load(std::sync::atomic::Ordering::SeqCst) {
            TaskPayload::Cancelled
        } else {
            match end {
                Ok(result) => TaskPayload::Completed { result },
                Err(error) => TaskPayload::Failed { error },
            }
        };
        // A store that fails here leaves the last state it kept; nobody else to tell.
        let _ = self.save(running, payload).await;
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&running.id);
    }

    /// `tasks/get`: the task's state, or -32602 for an unknown id. A task still working
    /// whose process died (the store says so) reads `failed`.
    pub(crate) async fn get(&self, task_id: &str) -> Result<DetailedTask, rmcp::ErrorData> {
        let state = self
            .store
            .load(task_id)
            .await
            .map_err(store_error)?
            .ok_or_else(|| unknown(task_id))?;
        let detailed: DetailedTask = serde_json::from_value(state).map_err(|error| {
            rmcp::ErrorData::internal_error(format!("a stored task does not read: {error}"), None)
        })?;
        let unfinished = matches!(
            detailed.payload,
            TaskPayload::Working | TaskPayload::InputRequired { .. }
        );
        if unfinished
            && self.running(task_id).is_none()
            && self.store.orphaned(task_id).await.map_err(store_error)?
        {
            let mut error = JsonObject::new();
            error.insert("code".into(), Value::from(-32603));
            error.insert("message".into(), Value::from(ORPHANED_TASK_MESSAGE));
            let mut task = detailed.task;
            task.status_message = Some(ORPHANED_TASK_MESSAGE.to_owned());
            return Ok(DetailedTask::new(task, TaskPayload::Failed { error }));
        }
        Ok(detailed)
    }

    fn running(&self, task_id: &str) -> Option<Arc<Running>> {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(task_id)
            .cloned()
    }

    /// `tasks/cancel`: fires the tool's abort signal; the task settles `cancelled`. A
    /// task another process runs (a store shared by replicas) is recorded `cancelled` in
    /// the store, and that process aborts its tool when it reads it back
    /// ([`Tasks::cancelled_elsewhere`]). A task that already ended (or whose process
    /// died) is acknowledged as it is; an unknown id is -32602.
    pub(crate) async fn cancel(&self, task_id: &str) -> Result<(), rmcp::ErrorData> {
        match self.running(task_id) {
            Some(running) => {
                running.cancel();
                self.save(&running, TaskPayload::Cancelled)
                    .await
                    .map_err(store_error)?;
                Ok(())
            }
            None => {
                let detailed = self.get(task_id).await?;
                if detailed.status().is_terminal() {
                    return Ok(());
                }
                let mut task = detailed.task;
                task.last_updated_at = timestamp(SystemTime::now());
                let cancelled = DetailedTask::new(task, TaskPayload::Cancelled);
                let state = serde_json::to_value(&cancelled).map_err(|error| {
                    store_error(TaskStoreError(format!("a task that is not JSON: {error}")))
                })?;
                // Ignored by the store if the task ended meanwhile: that end stands.
                self.store
                    .save(task_id, state, TASK_TTL)
                    .await
                    .map_err(store_error)
            }
        }
    }

    /// Resolves once the store says another process cancelled this running task (see
    /// [`TaskStore::cancel_check_interval`]), having fired the tool's abort signal;
    /// never with a store only this process writes.
    pub(crate) async fn cancelled_elsewhere(&self, running: &Running) {
        let Some(every) = self.store.cancel_check_interval() else {
            return std::future::pending().await;
        };
        loop {
            tokio::time::sleep(every).await;
            // A read that fails is tried again at the next check: the task runs on.
            if let Ok(Some(state)) = self.store.load(&running.id).await
                && state.get("status").and_then(Value::as_str) == Some("cancelled")
            {
                running.cancel();
                return;
            }
        }
    }

    /// `tasks/update`: answers to questions the task asked; answers to others are
    /// ignored. The task stays `input_required` until every question has its answer.
    /// A task that ended is acknowledged as it is; one that another process runs (a
    /// store shared by replicas) is refused, since only that process can hand the
    /// answers to its tool.
    pub(crate) async fn update(
        &self,
        task_id: &str,
        responses: InputResponses,
    ) -> Result<(), rmcp::ErrorData> {
        let Some(running) = self.running(task_id) else {
            let detailed = self.get(task_id).await?;
            if detailed.status().is_terminal() {
                return Ok(());
            }
            return Err(rmcp::ErrorData::internal_error(
                format!(
                    "task {task_id} runs in another server process, and only that process \
                     can take its answers: they were not delivered"
                ),
                Some(serde_json::json!({ "taskId": task_id })),
            ));
        };
        let still_asked = {
            let mut input = running.input.lock().unwrap_or_else(PoisonError::into_inner);
            for (key, answer) in responses {
                if input.asked.remove(&key).is_some() {
                    input.answers.insert(key, answer);
                }
            }
            input.asked.clone()
        };
        if !still_asked.is_empty() {
            self.save(
                &running,
                TaskPayload::InputRequired {
                    input_requests: still_asked,
                },
            )
            .await
            .map_err(store_error)?;
        }
        running.answered.notify_one();
        Ok(())
    }

    /// Parks the task until `tasks/update` has answered every one of `questions`; the
    /// answers by key.
    pub(crate) async fn ask(
        &self,
        running: &Running,
        questions: InputRequests,
    ) -> Result<BTreeMap<String, Value>, TaskStoreError> {
        let keys: Vec<String> = questions.keys().cloned().collect();
        let asked = {
            let mut input = running.input.lock().unwrap_or_else(PoisonError::into_inner);
            input.asked.extend(questions);
            input.asked.clone()
        };
        self.save(
            running,
            TaskPayload::InputRequired {
                input_requests: asked,
            },
        )
        .await?;
        loop {
            let ready = {
                let mut input = running.input.lock().unwrap_or_else(PoisonError::into_inner);
                if keys.iter().all(|key| input.answers.contains_key(key)) {
                    let answers: BTreeMap<String, Value> = keys
                        .iter()
                        .filter_map(|key| input.answers.remove_entry(key))
                        .collect();
                    Some((answers, input.asked.is_empty()))
                } else {
                    None
                }
            };
            match ready {
                Some((answers, done)) => {
                    if done {
                        self.save(running, TaskPayload::Working).await?;
                    }
                    return Ok(answers);
                }
                None => running.answered.notified().await,
            }
        }
    }

    /// Records the latest progress text of a task.
    pub(crate) fn progress(running: &Running, text: String) {
        *running
            .message
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(text);
    }
}

fn unknown(task_id: &str) -> rmcp::ErrorData {
    rmcp::ErrorData::invalid_params(
        format!("Invalid params: no task {task_id:?}"),
        Some(serde_json::json!({ "taskId": task_id })),
    )
}

/// A task id nobody can guess: 128 random bits, hex.
fn task_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        use std::hash::{BuildHasher, RandomState};
        let word = RandomState::new().hash_one(SystemTime::now());
        bytes[..8].copy_from_slice(&word.to_le_bytes());
        let word = RandomState::new().hash_one(word);
        bytes[8..].copy_from_slice(&word.to_le_bytes());
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// ISO 8601 in UTC with milliseconds (`2026-07-28T12:00:00.000Z`).
pub(crate) fn timestamp(at: SystemTime) -> String {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's days-to-civil, for days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601() {
        assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let at = UNIX_EPOCH + Duration::from_millis(1_785_240_000_123);
        assert_eq!(timestamp(at), "2026-07-28T12:00:00.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(timestamp(leap), "2000-02-29T00:00:00.000Z");
    }

    #[tokio::test]
    async fn the_memory_store_keeps_tasks_for_their_time_and_no_more_than_it_may() {
        let store = MemoryTaskStore::with_capacity(1);
        store
            .save("a", Value::from(1), Duration::from_secs(60))
            .await
            .unwrap();
        assert_eq!(store.load("a").await.unwrap(), Some(Value::from(1)));
        assert!(store.save("b", Value::from(2), TASK_TTL).await.is_err());
        store
            .save("a", Value::from(3), Duration::ZERO)
            .await
            .unwrap();
        assert_eq!(store.load("a").await.unwrap(), None);
        store.save("b", Value::from(2), TASK_TTL).await.unwrap();
        assert_eq!(store.load("b").await.unwrap(), Some(Value::from(2)));
    }

    #[tokio::test]
    async fn an_ended_task_keeps_its_state() {
        let store = MemoryTaskStore::default();
        let working = serde_json::json!({"status": "working"});
        let cancelled = serde_json::json!({"status": "cancelled"});
        let completed = serde_json::json!({"status": "completed", "result": {}});
        store.save("a", working.clone(), TASK_TTL).await.unwrap();
        store.save("a", cancelled.clone(), TASK_TTL).await.unwrap();
        store.save("a", completed.clone(), TASK_TTL).await.unwrap();
        store.save("a", working, TASK_TTL).await.unwrap();
        assert_eq!(store.load("a").await.unwrap(), Some(cancelled));
        // Once expired, the id is free again.
        let failed = serde_json::json!({"status": "failed", "error": {}});
        store.save("b", completed, Duration::ZERO).await.unwrap();
        store.save("b", failed.clone(), TASK_TTL).await.unwrap();
        assert_eq!(store.load("b").await.unwrap(), Some(failed));
    }
}
