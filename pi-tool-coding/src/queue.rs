//! Pi's file mutation queue (`file-mutation-queue.ts`): `write` and `edit` calls on one
//! file run one after the other; calls on different files run in parallel. The key is the
//! file's real path, so two spellings of one file (a symbolic link, `a/../b`) share a
//! queue.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// The per-file locks of every pack built in this process (Pi's queue is module-global
/// too: two packs writing one file still take turns).
static QUEUES: Mutex<Option<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>> = Mutex::new(None);

fn key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Runs `f` once every earlier mutation of the same file has finished.
pub(crate) async fn with_file_mutation_queue<T, F>(path: &Path, f: F) -> T
where
    F: Future<Output = T>,
{
    let key = key(path);
    let lock = {
        let mut guard = QUEUES.lock().unwrap_or_else(PoisonError::into_inner);
        guard
            .get_or_insert_with(HashMap::new)
            .entry(key.clone())
            .or_default()
            .clone()
    };
    let held = lock.lock().await;
    let out = f.await;
    drop(held);
    let mut guard = QUEUES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(map) = guard.as_mut()
        && map
            .get(&key)
            .is_some_and(|l| Arc::ptr_eq(l, &lock) && Arc::strong_count(l) == 2)
    {
        map.remove(&key);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_file_takes_turns() {
        let running = Arc::new(AtomicUsize::new(0));
        let max = Arc::new(AtomicUsize::new(0));
        let path = std::env::temp_dir().join("pi-tool-coding-queue-test");
        let tasks: Vec<_> = (0..4)
            .map(|_| {
                let (running, max, path) = (running.clone(), max.clone(), path.clone());
                tokio::spawn(async move {
                    with_file_mutation_queue(&path, async {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        max.fetch_max(now, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        running.fetch_sub(1, Ordering::SeqCst);
                    })
                    .await;
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(max.load(Ordering::SeqCst), 1);
        let guard = QUEUES.lock().unwrap();
        assert!(guard.as_ref().is_none_or(|m| m.is_empty()));
    }
}
