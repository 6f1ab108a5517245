//! Weighted concurrency classes: a limit per class ("browser ≤ 2, network ≤ 8") and in
//! total ("everything ≤ 16"), each call taking its tool's weight
//! ([`ConcurrencyClass`]) from its class and from the total while it executes (pi-tool's
//! addition; Pi 0.85.0 has no limit at all).
//!
//! One scheduler for every host: the agent (`RunPolicy::concurrency`, per run) and
//! `PackServer` (`with_concurrency`, across its clients) both hold a [`Scheduler`] and
//! give each call a [`Lease`]. A host of its own does the same:
//!
//! ```
//! use pi_tool_core::concurrency::{ConcurrencyLimits, Lease, Scheduler};
//! use pi_tool_core::{AbortSignal, ConcurrencyClass, ToolSpec, schema::ToolSchema};
//! use std::sync::Arc;
//!
//! # tokio_test_block_on(async {
//! let limits = ConcurrencyLimits::new().class("browser", 2).total(16);
//! let scheduler = Scheduler::new(&limits).expect("something is limited");
//! let schema = Arc::new(ToolSchema::from_json(serde_json::json!({"type": "object"})));
//! let spec = ToolSpec::new("open_page", "Opens a page.", schema)
//!     .concurrency(ConcurrencyClass::new("browser", 1));
//! let lease = Lease::new(&scheduler, &spec);
//! lease.take(&AbortSignal::never()).await.expect("not aborted");
//! // ... execute the call ...
//! lease.give_back();
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
//! # }
//! ```
//!
//! The rules, each tested (`pi-tool/tests/concurrency_classes.rs` in the agent,
//! `pi-tool-mcp/tests/concurrency.rs` over MCP):
//! * **Never over.** At no moment do the weights of the executing calls of a class add up
//!   to more than its limit, nor all of them to more than the total. A weight above a
//!   limit takes the whole of it (otherwise the call could never run).
//! * **FIFO within a class, no starvation.** Waiting calls are served in the order they
//!   asked. A call that does not fit stops the calls of its class behind it (so a heavy
//!   call is not overtaken for ever by light ones), and if the total is what it waits for,
//!   every call behind it; calls of other classes that fit go ahead.
//! * **An abort frees at once.** A waiting call that is aborted leaves the queue; an
//!   executing call gives its room back the moment its execution ends, whatever ended it.
//! * **Nested calls cannot deadlock.** While a call waits for its nested calls it lends its
//!   room back, and takes it again, ahead of the queue, when the last one returns. So no
//!   call ever waits while it holds room: the waits cannot form a cycle, at any limit,
//!   whatever the classes of outer and nested calls.
//!
//! In the agent, Pi's order is untouched: a batch still starts its calls in source order
//! (so calls of one class ask in the order the model made them), ends come as calls
//! finish, results follow in source order, and a sequential tool still serialises its
//! batch.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use futures::channel::oneshot;

use crate::abort::AbortSignal;
use crate::mode::ConcurrencyClass;
use crate::tool::ToolSpec;

/// The limits of concurrency classes: per class and in total. Nothing is limited by
/// default (Pi's behaviour). The agent takes them per run (`RunPolicy::concurrency`),
/// `PackServer` across its clients (`with_concurrency`).
///
/// ```
/// use pi_tool_core::concurrency::ConcurrencyLimits;
///
/// let limits = ConcurrencyLimits::new().class("browser", 2).class("network", 8).total(16);
/// assert_eq!(limits.limit_of("browser"), Some(2));
/// assert_eq!(limits.total_limit(), Some(16));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConcurrencyLimits {
    classes: HashMap<String, u32>,
    total: Option<u32>,
}

impl ConcurrencyLimits {
    /// No limits.
    pub fn new() -> Self {
        ConcurrencyLimits::default()
    }

    /// At most `limit` weight of calls of class `name` execute at once (0 reads as 1).
    #[must_use]
    pub fn class(mut self, name: impl Into<String>, limit: u32) -> Self {
        self.classes.insert(name.into(), limit.max(1));
        self
    }

    /// At most `limit` weight of calls execute at once, whatever their class (0 reads as
    /// 1).
    #[must_use]
    pub fn total(mut self, limit: u32) -> Self {
        self.total = Some(limit.max(1));
        self
    }

    /// The limit of class `name`, if it has one.
    pub fn limit_of(&self, name: &str) -> Option<u32> {
        self.classes.get(name).copied()
    }

    /// The total limit, if there is one.
    pub fn total_limit(&self) -> Option<u32> {
        self.total
    }

    /// Whether nothing is limited.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty() && self.total.is_none()
    }
}

/// What one call takes: its class (if the class is limited) and its weight, each capped
/// at the limit it is taken from.
#[derive(Debug, Clone)]
struct Need {
    class: Option<(Arc<str>, u32)>,
    total: u32,
}

struct Waiter {
    need: Need,
    grant: oneshot::Sender<()>,
}

#[derive(Default)]
struct State {
    in_class: HashMap<Arc<str>, u32>,
    in_total: u32,
    queue: VecDeque<Waiter>,
}

/// The scheduler of a set of [`ConcurrencyLimits`]: who executes now, who waits, and in
/// which order (the rules are the [module's](self)). Each call takes its room through a
/// [`Lease`].
pub struct Scheduler {
    limits: ConcurrencyLimits,
    /// The class names, shared by every call's [`Need`].
    names: HashMap<String, Arc<str>>,
    state: Mutex<State>,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    // Counters and a queue; a panic elsewhere cannot leave them half-written.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.state);
        f.debug_struct("Scheduler")
            .field("limits", &self.limits)
            .field("in_total", &state.in_total)
            .field("waiting", &state.queue.len())
            .finish()
    }
}

impl Scheduler {
    /// The scheduler of `limits`, or `None` when nothing is limited (a host then takes no
    /// lease, and pays nothing per call).
    pub fn new(limits: &ConcurrencyLimits) -> Option<Arc<Self>> {
        if limits.is_empty() {
            return None;
        }
        let names = limits
            .classes
            .keys()
            .map(|name| (name.clone(), Arc::from(name.as_str())))
            .collect();
        Some(Arc::new(Scheduler {
            limits: limits.clone(),
            names,
            state: Mutex::new(State::default()),
        }))
    }

    /// The limits it applies.
    pub fn limits(&self) -> &ConcurrencyLimits {
        &self.limits
    }

    fn need(&self, class: Option<&ConcurrencyClass>) -> Need {
        let weight = class.map_or(1, ConcurrencyClass::weight);
        let class = class.and_then(|c| {
            let name = self.names.get(c.name())?;
            let limit = self.limits.limit_of(c.name())?;
            Some((name.clone(), weight.min(limit)))
        });
        Need {
            class,
            total: self.limits.total.map_or(0, |limit| weight.min(limit)),
        }
    }

    fn fits(&self, state: &State, need: &Need) -> (bool, bool) {
        let class_fits = need.class.as_ref().is_none_or(|(name, weight)| {
            let used = state.in_class.get(name).copied().unwrap_or(0);
            let limit = self.limits.limit_of(name).unwrap_or(u32::MAX);
            used + weight <= limit
        });
        let total_fits = self
            .limits
            .total
            .is_none_or(|limit| state.in_total + need.total <= limit);
        (class_fits, total_fits)
    }

    fn take(state: &mut State, need: &Need) {
        if let Some((name, weight)) = &need.class {
            *state.in_class.entry(name.clone()).or_insert(0) += weight;
        }
        state.in_total += need.total;
    }

    fn give_back(&self, need: &Need) {
        let mut state = lock(&self.state);
        if let Some((name, weight)) = &need.class
            && let Some(used) = state.in_class.get_mut(name)
        {
            *used = used.saturating_sub(*weight);
        }
        state.in_total = state.in_total.saturating_sub(need.total);
        self.grant_waiting(&mut state);
    }

    /// Grants, in queue order, every waiter that fits and has no earlier waiter of its
    /// class still waiting (nor, if the total is full for an earlier one, any waiter).
    fn grant_waiting(&self, state: &mut State) {
        let mut blocked: Vec<Arc<str>> = Vec::new();
        let mut index = 0;
        while index < state.queue.len() {
            let waiter = &state.queue[index];
            if waiter.grant.is_canceled() {
                // Aborted or dropped while waiting: it leaves the queue.
                state.queue.remove(index);
                continue;
            }
            if waiter
                .need
                .class
                .as_ref()
                .is_some_and(|(name, _)| blocked.contains(name))
            {
                index += 1;
                continue;
            }
            let (class_fits, total_fits) = self.fits(state, &waiter.need);
            if class_fits && total_fits {
                let Some(waiter) = state.queue.remove(index) else {
                    break;
                };
                Self::take(state, &waiter.need);
                if waiter.grant.send(()).is_err() {
                    // Gone between the check and the grant: give it straight back.
                    if let Some((name, weight)) = &waiter.need.class
                        && let Some(used) = state.in_class.get_mut(name)
                    {
                        *used = used.saturating_sub(*weight);
                    }
                    state.in_total = state.in_total.saturating_sub(waiter.need.total);
                }
                continue;
            }
            if !total_fits {
                // Every call takes from the total: nobody behind may overtake this one.
                break;
            }
            if let Some((name, _)) = &waiter.need.class {
                blocked.push(name.clone());
                // Without a total, only calls of limited classes ever wait: once each
                // such class is held back, nobody further back can start.
                if self.limits.total.is_none() && blocked.len() == self.limits.classes.len() {
                    break;
                }
            }
            index += 1;
        }
    }

    /// Waits for room for `need`: at the back of the queue, or at its front (a call taking
    /// back the room it lent to its nested calls). `None` if `signal` aborts first.
    async fn acquire(
        self: &Arc<Self>,
        need: Need,
        front: bool,
        signal: &AbortSignal,
    ) -> Option<Room> {
        let granted = {
            let mut state = lock(&self.state);
            let (receiver, waiter) = {
                let (grant, receiver) = oneshot::channel();
                (
                    receiver,
                    Waiter {
                        need: need.clone(),
                        grant,
                    },
                )
            };
            if front {
                state.queue.push_front(waiter);
            } else {
                state.queue.push_back(waiter);
            }
            self.grant_waiting(&mut state);
            receiver
        };
        let mut granted = granted;
        match signal.race(&mut granted).await {
            Ok(Ok(())) => Some(Room {
                classes: self.clone(),
                need,
            }),
            Ok(Err(oneshot::Canceled)) => None,
            Err(_aborted) => {
                // Out of the queue now, so the calls behind it do not wait for it; room
                // granted in the meantime goes straight back.
                granted.close();
                if let Ok(Some(())) = granted.try_recv() {
                    drop(Room {
                        classes: self.clone(),
                        need,
                    });
                } else {
                    let mut state = lock(&self.state);
                    self.grant_waiting(&mut state);
                }
                None
            }
        }
    }
}

/// Room taken from a class and the total; given back when dropped.
struct Room {
    classes: Arc<Scheduler>,
    need: Need,
}

impl Drop for Room {
    fn drop(&mut self) {
        self.classes.give_back(&self.need);
    }
}

struct LeaseState {
    room: Option<Room>,
    /// Nested calls in flight: the room is lent while there are any.
    lent: usize,
}

/// The room of one call in its class and the total: taken before the call executes,
/// given back when it ends (or when the lease is dropped), and lent back while the call
/// waits for its nested calls ([`lend`](Self::lend), [`restore`](Self::restore)).
pub struct Lease {
    classes: Arc<Scheduler>,
    need: Need,
    state: std::sync::Mutex<LeaseState>,
}

impl fmt::Debug for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state();
        f.debug_struct("Lease")
            .field("class", &self.need.class)
            .field("weight", &self.need.total)
            .field("holds_room", &state.room.is_some())
            .field("lent", &state.lent)
            .finish()
    }
}

/// Why a call could not take its room: its abort signal fired while it waited (it has
/// left the queue; nothing is held).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aborted;

impl fmt::Display for Aborted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the call was aborted while it waited for room in its concurrency class")
    }
}

impl std::error::Error for Aborted {}

impl Lease {
    /// The lease of a call of `spec`'s tool: its class and weight
    /// ([`ToolSpec::concurrency`]), no room yet.
    pub fn new(classes: &Arc<Scheduler>, spec: &ToolSpec) -> Arc<Self> {
        Arc::new(Lease {
            need: classes.need(spec.concurrency.as_ref()),
            classes: classes.clone(),
            state: std::sync::Mutex::new(LeaseState {
                room: None,
                lent: 0,
            }),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, LeaseState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits for the call's room, at the back of the queue; [`Aborted`] if `signal`
    /// fires first.
    pub async fn take(&self, signal: &AbortSignal) -> Result<(), Aborted> {
        let room = self
            .classes
            .acquire(self.need.clone(), false, signal)
            .await
            .ok_or(Aborted)?;
        self.state().room = Some(room);
        Ok(())
    }

    /// Gives the room back: the call's execution ended. Dropping the lease does the same.
    pub fn give_back(&self) {
        let room = self.state().room.take();
        drop(room);
    }

    /// A nested call of this call starts: the first lends the room back, so that a call
    /// waiting for its nested calls never holds room. Each `lend` is followed by one
    /// [`restore`](Self::restore) when that nested call returns.
    pub fn lend(&self) {
        let room = {
            let mut state = self.state();
            state.lent += 1;
            if state.lent == 1 {
                state.room.take()
            } else {
                None
            }
        };
        drop(room);
    }

    /// A nested call returned: the last takes the room back, ahead of the queue (an
    /// aborted `signal` leaves the call without room; it is ending anyway).
    pub async fn restore(&self, signal: &AbortSignal) {
        {
            let mut state = self.state();
            state.lent = state.lent.saturating_sub(1);
            if state.lent > 0 || state.room.is_some() {
                return;
            }
        }
        let room = self.classes.acquire(self.need.clone(), true, signal).await;
        let mut state = self.state();
        if state.lent == 0 && state.room.is_none() {
            state.room = room;
        }
    }
}
