//! A `tracing` layer that records every span (name, fields, parent, when it opened and
//! closed) and every event (fields, parent span), for the span tests of pi-tool and
//! pi-tool-mcp.
//!
//! Registry ids are reused once a span closes, so each span gets its own index, kept in
//! the span's extensions; parents are indices too.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::{LookupSpan, Registry};

/// One recorded span.
#[derive(Clone, Debug)]
pub struct SpanRecord {
    /// Index in the order spans were created.
    pub index: usize,
    pub name: &'static str,
    /// The module that made it (`pi_tool_core::call::span` for tool calls, `pi_tool::agent` for runs).
    pub target: &'static str,
    pub parent: Option<usize>,
    pub fields: BTreeMap<String, String>,
    /// Tick of the recorder's clock when created and closed.
    pub opened: usize,
    pub closed: Option<usize>,
}

impl SpanRecord {
    /// The field's recorded value; `None` if it was never recorded.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// One recorded event.
#[derive(Clone, Debug)]
pub struct EventRecord {
    pub target: &'static str,
    pub parent: Option<usize>,
    pub level: tracing::Level,
    pub fields: BTreeMap<String, String>,
}

#[derive(Default)]
struct State {
    spans: Vec<SpanRecord>,
    events: Vec<EventRecord>,
    clock: usize,
}

impl State {
    fn tick(&mut self) -> usize {
        self.clock += 1;
        self.clock
    }
}

struct Index(usize);

/// The recording layer; clones share what they recorded.
#[derive(Clone, Default)]
pub struct Recorder(Arc<Mutex<State>>);

impl Recorder {
    /// Installs a `Registry` with this layer as the thread's default subscriber.
    pub fn install(&self) -> tracing::subscriber::DefaultGuard {
        tracing::subscriber::set_default(Registry::default().with(self.clone()))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn spans(&self) -> Vec<SpanRecord> {
        self.state().spans.clone()
    }

    pub fn named(&self, name: &str) -> Vec<SpanRecord> {
        self.spans()
            .into_iter()
            .filter(|s| s.name == name)
            .collect()
    }

    pub fn span(&self, index: usize) -> SpanRecord {
        self.state().spans[index].clone()
    }

    pub fn events(&self) -> Vec<EventRecord> {
        self.state().events.clone()
    }

    /// The names of a span's ancestors, nearest first.
    pub fn ancestry(&self, span: &SpanRecord) -> Vec<&'static str> {
        let spans = self.spans();
        let mut names = Vec::new();
        let mut parent = span.parent;
        while let Some(index) = parent {
            names.push(spans[index].name);
            parent = spans[index].parent;
        }
        names
    }
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S> Layer<S> for Recorder
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let parent = span
            .parent()
            .and_then(|p| p.extensions().get::<Index>().map(|i| i.0));
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let mut state = self.state();
        let opened = state.tick();
        let index = state.spans.len();
        state.spans.push(SpanRecord {
            index,
            name: attrs.metadata().name(),
            target: attrs.metadata().target(),
            parent,
            fields,
            opened,
            closed: None,
        });
        drop(state);
        span.extensions_mut().insert(Index(index));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(index) = ctx
            .span(id)
            .and_then(|s| s.extensions().get::<Index>().map(|i| i.0))
        else {
            return;
        };
        let mut state = self.state();
        values.record(&mut Fields(&mut state.spans[index].fields));
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let parent = ctx
            .event_span(event)
            .and_then(|s| s.extensions().get::<Index>().map(|i| i.0));
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.state().events.push(EventRecord {
            target: event.metadata().target(),
            parent,
            level: *event.metadata().level(),
            fields,
        });
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(index) = ctx
            .span(&id)
            .and_then(|s| s.extensions().get::<Index>().map(|i| i.0))
        else {
            return;
        };
        let mut state = self.state();
        let tick = state.tick();
        state.spans[index].closed = Some(tick);
    }
}
