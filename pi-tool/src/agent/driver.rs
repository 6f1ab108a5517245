//! A small executor for the calls of one tool batch, run inside the agent's own task.
//!
//! Pi runs a parallel batch as `Promise.all(calls.map(run))`: every call is started in
//! source order and runs until its first suspension before the next one starts, and a
//! call's progress updates are emitted the moment it reports them. To reproduce that
//! order exactly (conformance/FORMAT.md §6.2) without spawning a task per call, the driver keeps the
//! call futures itself, gives each its own waker, and polls one call at a time from a
//! FIFO ready queue. After every poll the caller emits the updates that poll produced,
//! then the call's end if it finished, before the next call is polled.
//!
//! Cost per call is O(1): one boxed future, one waker, queue pushes.
//!
//! Requests (`R`: the nested calls the batch's tools make through their context) reach
//! the driver through an [`Inbox`], from wherever a call runs, and come out of
//! [`Driver::next`] like updates, so that the batch runs them as calls of its own.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll, Wake, Waker};

use futures::task::AtomicWaker;

use pi_tool_core::CallSpan;
use pi_tool_core::JsonDetails;
use pi_tool_core::JsonToolResult;
use pi_tool_core::OnUpdate;

pub(super) type SlotFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

struct Shared<R> {
    ready: Mutex<VecDeque<usize>>,
    updates: Mutex<VecDeque<(usize, JsonToolResult)>>,
    requests: Mutex<VecDeque<R>>,
    driver: AtomicWaker,
    /// Set while the driver is running (it checks the queues before it suspends), so
    /// a call that wakes itself does not reschedule the whole agent task.
    running: AtomicBool,
}

impl<R> Default for Shared<R> {
    fn default() -> Self {
        Shared {
            ready: Mutex::default(),
            updates: Mutex::default(),
            requests: Mutex::new(VecDeque::new()),
            driver: AtomicWaker::new(),
            running: AtomicBool::new(false),
        }
    }
}

/// Where requests for a driver are sent from (any task, any thread). It does not keep
/// the driver: a request sent after the driver is gone comes back, and one queued when
/// the driver is dropped is dropped with it (so whoever waits on it stops waiting).
pub(crate) struct Inbox<R>(Weak<Shared<R>>);

impl<R> Clone for Inbox<R> {
    fn clone(&self) -> Self {
        Inbox(self.0.clone())
    }
}

impl<R> Inbox<R> {
    /// Queues `request` and wakes the driver; `Err` with the request if the driver is
    /// gone.
    pub(crate) fn send(&self, request: R) -> Result<(), R> {
        let Some(shared) = self.0.upgrade() else {
            return Err(request);
        };
        lock(&shared.requests).push_back(request);
        shared.notify();
        Ok(())
    }
}

impl<R> Shared<R> {
    fn notify(&self) {
        if !self.running.load(Ordering::SeqCst) {
            self.driver.wake();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The queues hold plain data; a panic elsewhere cannot leave them inconsistent.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

struct SlotWaker<R> {
    index: usize,
    queued: AtomicBool,
    shared: Arc<Shared<R>>,
}

impl<R: Send + 'static> Wake for SlotWaker<R> {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.queued.swap(true, Ordering::AcqRel) {
            lock(&self.shared.ready).push_back(self.index);
            self.shared.notify();
        }
    }
}

struct Slot<'a, T, R> {
    future: Option<SlotFuture<'a, T>>,
    flag: Arc<SlotWaker<R>>,
    waker: Waker,
    /// Entered around every poll of the call (no `Instrumented` wrapper, so no copy of
    /// the future), and handed out with the call's end.
    span: CallSpan,
}

/// What happened next in the batch.
pub(crate) enum DriverEvent<T, R> {
    /// Call `slot` reported progress.
    Update(usize, JsonToolResult),
    /// A request arrived through the [`Inbox`].
    Request(R),
    /// Call `slot` finished; its span is handed over, to be recorded into and ended.
    Done(usize, T, CallSpan),
}

pub(crate) struct Driver<'a, T, R> {
    shared: Arc<Shared<R>>,
    slots: Vec<Slot<'a, T, R>>,
    live: usize,
    finished: Option<(usize, T)>,
}

impl<'a, T, R: Send + 'static> Driver<'a, T, R> {
    pub(crate) fn new() -> Self {
        Driver {
            shared: Arc::default(),
            slots: Vec::new(),
            live: 0,
            finished: None,
        }
    }

    /// The progress callback for the call in the next slot: updates are queued for the
    /// caller (and wake it, wherever the tool calls from).
    pub(crate) fn on_update_for_next(&self) -> OnUpdate<Option<JsonDetails>> {
        let index = self.slots.len();
        let shared = self.shared.clone();
        OnUpdate::new(move |update: JsonToolResult| {
            lock(&shared.updates).push_back((index, update));
            shared.notify();
        })
    }

    /// Where requests for this driver are sent from.
    pub(crate) fn inbox(&self) -> Inbox<R> {
        Inbox(Arc::downgrade(&self.shared))
    }

    /// The slot the next [`push`](Self::push) returns.
    pub(crate) fn next_slot(&self) -> usize {
        self.slots.len()
    }

    /// Adds a call (not started yet) and its span; returns its slot.
    pub(crate) fn push(&mut self, future: SlotFuture<'a, T>, span: CallSpan) -> usize {
        let index = self.slots.len();
        let flag = Arc::new(SlotWaker {
            index,
            queued: AtomicBool::new(false),
            shared: self.shared.clone(),
        });
        let waker = Waker::from(flag.clone());
        self.slots.push(Slot {
            future: Some(future),
            flag,
            waker,
            span,
        });
        self.live += 1;
        index
    }

    /// The span of the call in `slot` (an empty one once its end was handed out).
    pub(crate) fn span(&self, slot: usize) -> Option<&CallSpan> {
        self.slots.get(slot).map(|s| &s.span)
    }

    /// Number of slots.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Starts a call: it is polled after the calls started (or woken) before it.
    pub(crate) fn start(&self, slot: usize) {
        if let Some(s) = self.slots.get(slot) {
            s.flag.wake_by_ref();
        }
    }

    /// The next update or completion; `None` once every pushed call has finished.
    pub(crate) async fn next(&mut self) -> Option<DriverEvent<T, R>> {
        loop {
            if let Some((slot, update)) = lock(&self.shared.updates).pop_front() {
                return Some(DriverEvent::Update(slot, update));
            }
            if let Some(request) = lock(&self.shared.requests).pop_front() {
                return Some(DriverEvent::Request(request));
            }
            if let Some((slot, output)) = self.finished.take() {
                // The call's updates are out: its span goes with its end.
                let span = self.slots.get_mut(slot).map_or_else(CallSpan::none, |s| {
                    std::mem::replace(&mut s.span, CallSpan::none())
                });
                return Some(DriverEvent::Done(slot, output, span));
            }
            if self.live == 0 {
                return None;
            }
            let shared = self.shared.clone();
            let next = std::future::poll_fn(|cx| {
                if let Some(slot) = lock(&shared.ready).pop_front() {
                    return Poll::Ready(Some(slot));
                }
                // About to suspend: from here on, wakes must wake the agent task. The
                // queues are checked again after registering, so no wake is lost.
                shared.running.store(false, Ordering::SeqCst);
                shared.driver.register(cx.waker());
                if let Some(slot) = lock(&shared.ready).pop_front() {
                    shared.running.store(true, Ordering::SeqCst);
                    Poll::Ready(Some(slot))
                } else if !lock(&shared.updates).is_empty() || !lock(&shared.requests).is_empty() {
                    shared.running.store(true, Ordering::SeqCst);
                    Poll::Ready(None)
                } else {
                    Poll::Pending
                }
            })
            .await;
            shared.running.store(true, Ordering::SeqCst);
            let Some(index) = next else { continue };
            let Some(slot) = self.slots.get_mut(index) else {
                continue;
            };
            slot.flag.queued.store(false, Ordering::Release);
            let Some(future) = slot.future.as_mut() else {
                continue;
            };
            let mut cx = Context::from_waker(&slot.waker);
            let entered = slot.span.span().enter();
            let poll = future.as_mut().poll(&mut cx);
            drop(entered);
            if let Poll::Ready(output) = poll {
                slot.future = None;
                self.live -= 1;
                self.finished = Some((index, output));
            }
        }
    }
}

/// Suspends once (and asks to be polled again right away): in Pi every call awaits its
/// execute promise, so even a call that completes without waiting ends only after the
/// calls started after it have run to their first suspension.
pub(crate) struct YieldOnce(bool);

impl YieldOnce {
    pub(crate) fn new() -> Self {
        YieldOnce(false)
    }
}

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}
