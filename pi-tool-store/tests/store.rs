//! The store contract on both backends: decisions bind to a digest and are single-use,
//! expire, and are refused with a reason; claims exclude each other; the audit chain
//! holds under concurrent appends and names an edited record; a checkpoint replaces a
//! running run's state, renews its lease and forgets its markers; a newer schema and a
//! corrupt row are refused with a clear error.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::Backend;
use pi_tool::durable::{
    AuditEvent, AuditKind, Decision, DurableStore, PendingApproval, Refusal, StoreError, Verdict,
    now_ms, verify_chain,
};
use serde_json::json;

fn pending(run: &str, call: &str, digest: &str, expires_at_ms: i64) -> PendingApproval {
    PendingApproval::new(
        run,
        call,
        "transfer",
        digest,
        "Run transfer?",
        "it moves money",
        now_ms(),
        expires_at_ms,
    )
}

fn event(kind: AuditKind, run: &str) -> AuditEvent {
    AuditEvent::new(kind, run, now_ms())
}

async fn suspended(store: &dyn DurableStore, run: &str, approvals: &[PendingApproval]) {
    store
        .suspend(
            run,
            &json!({"v": 1}),
            approvals,
            &[event(AuditKind::Suspended, run)],
        )
        .await
        .unwrap();
}

fn refusal(result: Result<(), StoreError>) -> Refusal {
    match result {
        Err(StoreError::Refused(refusal)) => refusal,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

async fn decisions_bind_to_the_digest_once_and_expire(url: String) {
    let backend = Backend::open(&url).await;
    let store = backend.store();
    let far = now_ms() + 60_000;
    suspended(
        &*store,
        "r1",
        &[
            pending("r1", "c1", "d1", far),
            pending("r1", "c2", "d2", now_ms() - 1),
        ],
    )
    .await;
    assert_eq!(store.pending().await.unwrap().len(), 2);
    let decided = event(AuditKind::Decided, "r1");

    let wrong = Decision::new("r1", "c1", "d2", Verdict::Approve);
    assert_eq!(
        refusal(store.decide(&wrong, &decided).await),
        Refusal::WrongDigest
    );
    let unknown = Decision::new("r1", "c9", "d1", Verdict::Approve);
    assert_eq!(
        refusal(store.decide(&unknown, &decided).await),
        Refusal::Unknown
    );
    let expired = Decision::new("r1", "c2", "d2", Verdict::Approve);
    assert_eq!(
        refusal(store.decide(&expired, &decided).await),
        Refusal::Expired
    );

    let right = Decision::new("r1", "c1", "d1", Verdict::Approve).by("ana");
    store.decide(&right, &decided).await.unwrap();
    assert_eq!(
        refusal(store.decide(&right, &decided).await),
        Refusal::AlreadyDecided
    );
    let pending = store.pending().await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].call_id, "c2");

    // The approval is used once, by the call it names, with its digest.
    let started = event(AuditKind::Started, "r1");
    assert_eq!(
        refusal(store.begin_call("r1", "c1", Some("d2"), &started).await),
        Refusal::WrongDigest
    );
    store
        .begin_call("r1", "c1", Some("d1"), &started)
        .await
        .unwrap();
    assert_eq!(
        refusal(store.begin_call("r1", "c1", Some("d1"), &started).await),
        Refusal::AlreadyUsed
    );
    assert_eq!(
        refusal(store.begin_call("r1", "c2", Some("d2"), &started).await),
        Refusal::Unknown
    );
    // A second start of a call without approval is refused by its marker.
    store.begin_call("r1", "c3", None, &started).await.unwrap();
    assert!(matches!(
        store.begin_call("r1", "c3", None, &started).await,
        Err(StoreError::CallStarted { .. })
    ));
    assert!(verify_chain(&store.audit_log().await.unwrap()).ok());
}

async fn a_denial_cannot_be_used(url: String) {
    let store = Backend::open(&url).await.store();
    suspended(&*store, "r", &[pending("r", "c", "d", now_ms() + 60_000)]).await;
    let deny = Decision::new("r", "c", "d", Verdict::Deny).reason("not today");
    store
        .decide(&deny, &event(AuditKind::Decided, "r"))
        .await
        .unwrap();
    let claimed = store.claim("r", Duration::from_secs(30)).await.unwrap();
    let decision = claimed.approvals[0].decision.clone().unwrap();
    assert_eq!(decision.verdict, Verdict::Deny);
    assert_eq!(decision.reason.as_deref(), Some("not today"));
    assert_eq!(
        refusal(
            store
                .begin_call("r", "c", Some("d"), &event(AuditKind::Started, "r"))
                .await
        ),
        Refusal::Denied
    );
}

async fn two_claimers_one_run(url: String) {
    let backend = Backend::open(&url).await;
    // Two connections, as two processes would have.
    let other = Backend::open(&url).await;
    let (a, b) = (backend.store(), other.store());
    for round in 0..10 {
        let run = format!("run-{round}");
        suspended(&*a, &run, &[]).await;
        let (x, y) = tokio::join!(
            a.claim(&run, Duration::from_secs(30)),
            b.claim(&run, Duration::from_secs(30))
        );
        let taken = [&x, &y]
            .iter()
            .filter(|r| matches!(r, Err(StoreError::RunTaken { .. })))
            .count();
        assert_eq!(
            (x.is_ok() as u8 + y.is_ok() as u8, taken),
            (1, 1),
            "{x:?} {y:?}"
        );
    }
    // A lease that ran out (its process died) can be taken again.
    suspended(&*a, "leased", &[]).await;
    a.claim("leased", Duration::from_millis(1)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    b.claim("leased", Duration::from_secs(30)).await.unwrap();
    assert!(matches!(
        a.claim("leased", Duration::from_secs(30)).await,
        Err(StoreError::RunTaken { .. })
    ));
    a.finish("leased", &[]).await.unwrap();
    assert!(matches!(
        a.claim("leased", Duration::from_secs(30)).await,
        Err(StoreError::RunFinished { .. })
    ));
    assert!(matches!(
        a.claim("nope", Duration::from_secs(30)).await,
        Err(StoreError::UnknownRun { .. })
    ));
}

async fn the_audit_chain_holds_under_concurrent_appends_and_names_an_edit(url: String) {
    let backend = Backend::open(&url).await;
    let other = Backend::open(&url).await;
    let mut tasks = Vec::new();
    for writer in 0..4 {
        let store: Arc<dyn DurableStore> = if writer % 2 == 0 {
            backend.store()
        } else {
            other.store()
        };
        tasks.push(tokio::spawn(async move {
            for i in 0..25 {
                let e = AuditEvent::new(AuditKind::Started, "r", now_ms())
                    .with("call", format!("w{writer}-{i}"));
                store.append_audit(&[e]).await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let log = backend.store().audit_log().await.unwrap();
    let report = verify_chain(&log);
    assert!(report.ok(), "{report:?}");
    assert_eq!(report.records, 100);

    backend
        .raw("UPDATE audit SET body = replace(body, 'w1-3\"', 'w1-4\"') WHERE body LIKE '%\"w1-3\"%'")
        .await;
    let edited = log
        .iter()
        .find(|r| r.body.contains("\"w1-3\""))
        .unwrap()
        .seq;
    let report = verify_chain(&backend.store().audit_log().await.unwrap());
    assert_eq!(report.first_bad.unwrap().seq, edited);

    backend.raw("DELETE FROM audit WHERE seq = 50").await;
    let report = verify_chain(&backend.store().audit_log().await.unwrap());
    assert_eq!(report.first_bad.unwrap().seq, edited.min(51));
}

async fn a_newer_schema_and_a_corrupt_row_are_refused(url: String) {
    let backend = Backend::open(&url).await;
    suspended(&*backend.store(), "r", &[]).await;
    backend
        .raw("UPDATE runs SET state = 'not json' WHERE run_id = 'r'")
        .await;
    match backend.store().claim("r", Duration::from_secs(1)).await {
        Err(StoreError::Corrupt(what)) => assert!(what.contains("run r"), "{what}"),
        other => panic!("{other:?}"),
    }
    backend
        .raw("UPDATE pi_tool_meta SET value = '99' WHERE key = 'schema_version'")
        .await;
    let again = match url.strip_prefix("sqlite:") {
        Some(path) => pi_tool_store::SqliteStore::open(path).await.map(|_| ()),
        None => pi_tool_store::PostgresStore::connect(&url)
            .await
            .map(|_| ()),
    };
    let error = again.unwrap_err();
    assert_eq!(
        error,
        StoreError::NewerSchema {
            found: 99,
            supported: pi_tool_store::SCHEMA_VERSION
        }
    );
    assert!(error.to_string().contains("newer version"), "{error}");
}

async fn a_checkpoint_replaces_a_running_runs_state_and_forgets_its_markers(url: String) {
    let backend = Backend::open(&url).await;
    let store = backend.store();
    let lease = Duration::from_secs(30);
    suspended(&*store, "cp", &[]).await;
    // Only a run a process took up can be checkpointed.
    assert!(matches!(
        store.checkpoint("cp", &json!({"v": 2}), lease).await,
        Err(StoreError::RunTaken { .. })
    ));
    assert!(matches!(
        store.checkpoint("nope", &json!({"v": 2}), lease).await,
        Err(StoreError::UnknownRun { .. })
    ));
    store.claim("cp", Duration::from_millis(1)).await.unwrap();
    let started = event(AuditKind::Started, "cp").with("call", "call_1");
    store
        .begin_call("cp", "call_1", None, &started)
        .await
        .unwrap();
    store
        .end_call("cp", "call_1", &json!({"result": 1}), &started)
        .await
        .unwrap();
    store
        .checkpoint("cp", &json!({"v": 2}), lease)
        .await
        .unwrap();
    // The lease was renewed: the run is held, not taken over.
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(matches!(
        store.claim("cp", lease).await,
        Err(StoreError::RunTaken { .. })
    ));
    // A process that took it over after its lease ran out reads the checkpoint, with
    // no markers of the batches before it.
    store
        .checkpoint("cp", &json!({"v": 3}), Duration::from_millis(1))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let claimed = store.claim("cp", lease).await.unwrap();
    assert_eq!(claimed.state, json!({"v": 3}));
    assert!(claimed.calls.is_empty(), "{:?}", claimed.calls);
    store.finish("cp", &[]).await.unwrap();
    assert!(matches!(
        store.checkpoint("cp", &json!({"v": 4}), lease).await,
        Err(StoreError::RunTaken { .. })
    ));
}

on_both_backends!(
    decisions_bind_to_the_digest_once_and_expire,
    a_denial_cannot_be_used,
    two_claimers_one_run,
    a_checkpoint_replaces_a_running_runs_state_and_forgets_its_markers,
    the_audit_chain_holds_under_concurrent_appends_and_names_an_edit,
    a_newer_schema_and_a_corrupt_row_are_refused,
);
