//! One session's record: what waits for its service, where each outgoing message goes,
//! and the standalone stream's replay cache. A plain lock guards it; nothing awaits
//! while holding it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, GetExtensions, GetMeta, JsonRpcMessage,
    ProgressToken, RequestId, ServerJsonRpcMessage, ServerNotification,
};
use rmcp::service::OriginatingRequestId;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::mpsc::{Receiver, Sender, channel};
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use super::SessionGone;

/// Events a response stream holds before its reader takes them. The channels allocate
/// their first block of slots whatever this is; it only bounds a slow reader.
const STREAM_CAPACITY: usize = 64;
/// The standalone stream's events kept for a new or resumed GET stream (rmcp's 16).
const REPLAY: usize = 16;
/// GET streams kept alive beside the standalone one (rmcp's limit).
const MAX_SHADOWS: usize = 32;
/// The `retry` of a request stream's priming event (rmcp's default).
const RETRY: Duration = Duration::from_secs(3);

/// One client session.
pub(crate) struct Session {
    state: Mutex<State>,
    /// Wakes the service's `receive`: a message waits, or the session ended.
    wake: Notify,
    idle: Duration,
}

#[derive(Default)]
struct State {
    /// Client messages the service has not read yet.
    inbox: VecDeque<ClientJsonRpcMessage>,
    closed: bool,
    /// The last message in or out; `None` until the first.
    last_active: Option<Instant>,
    /// Where the answer to `initialize` goes.
    initializing: Option<oneshot::Sender<ServerJsonRpcMessage>>,
    next_stream: u64,
    /// The open request streams, by their number.
    streams: HashMap<u64, RequestStream>,
    /// Which request stream a request id or progress token answers on.
    routes: HashMap<Key, u64>,
    standalone: Standalone,
}

struct RequestStream {
    sender: Sender<ServerSseMessage>,
    /// The index of its next event (`0` was the priming event).
    next: usize,
    keys: Vec<Key>,
}

#[derive(Clone, PartialEq, Eq, Hash)]
enum Key {
    Request(RequestId),
    Progress(ProgressToken),
}

#[derive(Default)]
struct Standalone {
    sender: Option<Sender<ServerSseMessage>>,
    /// The last [`REPLAY`] events, for a new or resumed stream.
    cache: VecDeque<ServerSseMessage>,
    next: usize,
    shadows: Vec<Sender<ServerSseMessage>>,
}

/// What to do with one outgoing message, once the lock is released.
pub(crate) enum Delivery {
    /// An event for a stream whose buffer was full: wait for room.
    Wait(Sender<ServerSseMessage>, ServerSseMessage),
    /// Delivered, or nowhere to deliver it.
    Done,
}

impl Session {
    pub(crate) fn new(idle: Duration) -> Self {
        Session {
            state: Mutex::default(),
            wake: Notify::new(),
            idle,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hands `message` to the service, waking it.
    fn deliver(&self, mut state: MutexGuard<'_, State>, message: ClientJsonRpcMessage) {
        state.inbox.push_back(message);
        state.last_active = Some(Instant::now());
        drop(state);
        self.wake.notify_one();
    }

    /// Sends `initialize` to the service; the answer comes on the receiver.
    pub(crate) fn initialize(
        &self,
        message: ClientJsonRpcMessage,
    ) -> oneshot::Receiver<ServerJsonRpcMessage> {
        let (reply, answer) = oneshot::channel();
        let mut state = self.lock();
        if !state.closed {
            state.initializing = Some(reply);
            self.deliver(state, message);
        }
        answer
    }

    /// A request and the stream of its answers: the priming event first, then what the
    /// service sends for it, ending with its response.
    pub(crate) fn request_stream(
        &self,
        message: ClientJsonRpcMessage,
    ) -> Result<Receiver<ServerSseMessage>, SessionGone> {
        let mut state = self.lock();
        if state.closed {
            return Err(SessionGone);
        }
        let number = state.next_stream;
        state.next_stream = state.next_stream.wrapping_add(1);
        let (sender, receiver) = channel(STREAM_CAPACITY);
        // The stream is new and empty: the priming event fits.
        let _ = sender.try_send(ServerSseMessage::priming(format!("0/{number}"), RETRY));
        let mut keys = Vec::new();
        if let JsonRpcMessage::Request(request) = &message {
            keys.push(Key::Request(request.id.clone()));
            if let Some(token) = request.request.get_meta().get_progress_token() {
                keys.push(Key::Progress(token));
            }
        }
        for key in &keys {
            state.routes.insert(key.clone(), number);
        }
        let stream = RequestStream {
            sender,
            next: 1,
            keys,
        };
        state.streams.insert(number, stream);
        self.deliver(state, message);
        Ok(receiver)
    }

    /// A notification or a response of the client. A cancellation ends the cancelled
    /// request's stream, as no response will come.
    pub(crate) fn accept(&self, message: ClientJsonRpcMessage) -> Result<(), SessionGone> {
        let mut state = self.lock();
        if state.closed {
            return Err(SessionGone);
        }
        if let JsonRpcMessage::Notification(notification) = &message
            && let ClientNotification::CancelledNotification(cancelled) = &notification.notification
            && let Some(id) = &cancelled.params.request_id
            && let Some(number) = state.routes.get(&Key::Request(id.clone())).copied()
        {
            state.end_stream(number);
        }
        self.deliver(state, message);
        Ok(())
    }

    /// A GET stream that replays the standalone events from index `from` on and carries
    /// the next ones; a shadow kept alive with no events while another one does.
    pub(crate) fn standalone_stream(
        &self,
        from: Option<usize>,
    ) -> Result<Receiver<ServerSseMessage>, SessionGone> {
        let mut state = self.lock();
        if state.closed {
            return Err(SessionGone);
        }
        let standalone = &mut state.standalone;
        let live = standalone
            .sender
            .as_ref()
            .is_some_and(|sender| !sender.is_closed());
        if live {
            standalone.shadows.retain(|shadow| !shadow.is_closed());
            if standalone.shadows.len() >= MAX_SHADOWS {
                standalone.shadows.remove(0);
            }
            let (sender, receiver) = channel(1);
            standalone.shadows.push(sender);
            return Ok(receiver);
        }
        let (sender, receiver) = channel(STREAM_CAPACITY.max(REPLAY));
        if let Some(from) = from {
            let first = standalone.next.saturating_sub(standalone.cache.len());
            for event in standalone.cache.iter().skip(from.saturating_sub(first)) {
                // The cache is smaller than the channel: every event fits.
                let _ = sender.try_send(event.clone());
            }
        }
        standalone.sender = Some(sender);
        Ok(receiver)
    }

    /// A GET with `Last-Event-ID`: the standalone stream from that event on; a request
    /// stream's events are not kept (a closed call stream ended its call), so its
    /// resumption ends at once.
    pub(crate) fn resume(
        &self,
        last_event_id: &str,
    ) -> Result<Receiver<ServerSseMessage>, SessionGone> {
        if last_event_id.contains('/') {
            let (_, receiver) = channel(1);
            return Ok(receiver);
        }
        let from = last_event_id.trim().parse::<usize>().ok();
        self.standalone_stream(from.or(Some(0)))
    }

    /// Where the service's `message` goes: its request's stream, or the standalone one.
    pub(crate) fn route(&self, message: ServerJsonRpcMessage) -> Delivery {
        let mut state = self.lock();
        state.last_active = Some(Instant::now());
        let closes = matches!(
            message,
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_)
        );
        if closes && let Some(reply) = state.initializing.take() {
            // The answer to `initialize`: `initialize_session` waits for it.
            let _ = reply.send(message);
            return Delivery::Done;
        }
        let key = match &message {
            JsonRpcMessage::Request(request) => request
                .request
                .extensions()
                .get::<OriginatingRequestId>()
                .map(|origin| Key::Request(origin.0.clone())),
            JsonRpcMessage::Notification(notification) => match &notification.notification {
                ServerNotification::ProgressNotification(progress) => {
                    Some(Key::Progress(progress.params.progress_token.clone()))
                }
                ServerNotification::CancelledNotification(cancelled) => {
                    cancelled.params.request_id.clone().map(Key::Request)
                }
                _ => None,
            },
            JsonRpcMessage::Response(response) => Some(Key::Request(response.id.clone())),
            JsonRpcMessage::Error(error) => error.id.clone().map(Key::Request),
        };
        let number = key.and_then(|key| state.routes.get(&key).copied());
        match number.and_then(|number| state.streams.get_mut(&number).map(|s| (number, s))) {
            Some((number, stream)) => {
                let event = ServerSseMessage::new(format!("{}/{number}", stream.next), message);
                stream.next += 1;
                let sender = stream.sender.clone();
                if closes {
                    // The response ends its stream once sent: only the clone is left.
                    state.end_stream(number);
                }
                push(sender, event)
            }
            None => state.standalone_event(message),
        }
    }

    /// The next client message for the service; `None` once the session ended, or when
    /// it has had no message for the idle timeout and no request is in flight (the
    /// service then stops, and rmcp closes the session).
    pub(crate) async fn next_message(&self) -> Option<ClientJsonRpcMessage> {
        loop {
            let deadline = {
                let mut state = self.lock();
                if let Some(message) = state.inbox.pop_front() {
                    if state.inbox.is_empty() {
                        // A client message is 480 bytes, and a queue that grew keeps
                        // room for four: an idle session gives that room back.
                        state.inbox = VecDeque::new();
                    }
                    return Some(message);
                }
                if state.closed {
                    return None;
                }
                // A call whose client closed its stream was cancelled, and rmcp sends
                // no response for it: its stream is no longer in flight.
                state.end_abandoned_streams();
                let now = Instant::now();
                let since = *state.last_active.get_or_insert(now);
                if state.streams.is_empty() && now.duration_since(since) >= self.idle {
                    state.close();
                    return None;
                }
                if state.streams.is_empty() {
                    since + self.idle
                } else {
                    now + self.idle
                }
            };
            let _ = tokio::time::timeout_at(deadline, self.wake.notified()).await;
        }
    }

    /// Ends the session: the service's next read is `None`, and every stream ends.
    pub(crate) fn close(&self) {
        self.lock().close();
        self.wake.notify_one();
    }
}

impl State {
    fn end_abandoned_streams(&mut self) {
        let abandoned: Vec<u64> = self
            .streams
            .iter()
            .filter(|(_, stream)| stream.sender.is_closed())
            .map(|(number, _)| *number)
            .collect();
        for number in abandoned {
            self.end_stream(number);
        }
    }

    fn end_stream(&mut self, number: u64) {
        if let Some(stream) = self.streams.remove(&number) {
            for key in stream.keys {
                self.routes.remove(&key);
            }
        }
        if self.streams.is_empty() {
            // With no request in flight the two maps are empty: a session that waits
            // for its next request holds no room for it.
            self.streams.shrink_to_fit();
            self.routes.shrink_to_fit();
        }
    }

    fn standalone_event(&mut self, message: ServerJsonRpcMessage) -> Delivery {
        let standalone = &mut self.standalone;
        let event = ServerSseMessage::new(standalone.next.to_string(), message);
        standalone.next += 1;
        if standalone.cache.len() >= REPLAY {
            standalone.cache.pop_front();
        }
        standalone.cache.push_back(event.clone());
        match &standalone.sender {
            Some(sender) if !sender.is_closed() => push(sender.clone(), event),
            _ => Delivery::Done,
        }
    }

    fn close(&mut self) {
        self.closed = true;
        self.inbox.clear();
        self.initializing = None;
        self.streams.clear();
        self.routes.clear();
        self.standalone = Standalone::default();
    }
}

/// Puts `event` on its stream now when there is room, in the order the service sent
/// it; otherwise the send waits for the reader.
fn push(sender: Sender<ServerSseMessage>, event: ServerSseMessage) -> Delivery {
    match sender.try_send(event) {
        Ok(()) | Err(TrySendError::Closed(_)) => Delivery::Done,
        Err(TrySendError::Full(event)) => Delivery::Wait(sender, event),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ping(id: i64) -> ClientJsonRpcMessage {
        serde_json::from_value(json!({"jsonrpc": "2.0", "id": id, "method": "ping"})).unwrap()
    }

    fn answer(id: i64) -> ServerJsonRpcMessage {
        serde_json::from_value(json!({"jsonrpc": "2.0", "id": id, "result": {}})).unwrap()
    }

    fn progress(token: &str) -> ServerJsonRpcMessage {
        serde_json::from_value(json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": 1}}))
        .unwrap()
    }

    fn ids(receiver: &mut Receiver<ServerSseMessage>) -> Vec<String> {
        let mut ids = Vec::new();
        while let Ok(event) = receiver.try_recv() {
            ids.push(event.event_id.unwrap_or_default());
        }
        ids
    }

    #[test]
    fn a_request_stream_carries_its_answers_and_ends_with_the_response() {
        let session = Session::new(Duration::from_secs(60));
        let mut first = session.request_stream(ping(7)).unwrap();
        let mut second = session.request_stream(ping(8)).unwrap();
        assert!(matches!(session.route(answer(8)), Delivery::Done));
        assert!(matches!(session.route(answer(7)), Delivery::Done));
        assert_eq!(ids(&mut first), ["0/0", "1/0"]);
        assert_eq!(ids(&mut second), ["0/1", "1/1"]);
        // Both streams ended with their responses.
        for stream in [&mut first, &mut second] {
            assert!(matches!(
                stream.try_recv(),
                Err(tokio::sync::mpsc::error::TryRecvError::Disconnected)
            ));
        }
        assert!(session.lock().streams.is_empty() && session.lock().routes.is_empty());
    }

    #[tokio::test]
    async fn an_idle_session_holds_no_room_for_messages_or_requests() {
        let session = Session::new(Duration::from_secs(60));
        let _first = session.request_stream(ping(1)).unwrap();
        let _second = session.request_stream(ping(2)).unwrap();
        assert!(session.next_message().await.is_some());
        assert!(session.lock().inbox.capacity() > 0, "one still waits");
        assert!(session.next_message().await.is_some());
        assert!(matches!(session.route(answer(1)), Delivery::Done));
        assert!(session.lock().streams.capacity() > 0, "one still in flight");
        assert!(matches!(session.route(answer(2)), Delivery::Done));
        let state = session.lock();
        assert_eq!(
            (
                state.inbox.capacity(),
                state.streams.capacity(),
                state.routes.capacity()
            ),
            (0, 0, 0)
        );
    }

    #[test]
    fn unrouted_messages_go_to_the_standalone_stream_and_are_replayed() {
        let session = Session::new(Duration::from_secs(60));
        for token in ["a", "b", "c"] {
            assert!(matches!(session.route(progress(token)), Delivery::Done));
        }
        let mut get = session.standalone_stream(Some(0)).unwrap();
        assert_eq!(ids(&mut get), ["0", "1", "2"]);
        // A second GET while the first is open is a shadow: no events.
        let mut shadow = session.standalone_stream(Some(0)).unwrap();
        assert!(matches!(session.route(progress("d")), Delivery::Done));
        assert_eq!(ids(&mut get), ["3"]);
        assert!(ids(&mut shadow).is_empty());
        // A resumption once the first is gone replays from the event named.
        drop(get);
        let mut resumed = session.resume("2").unwrap();
        assert_eq!(ids(&mut resumed), ["2", "3"]);
        // A request stream's events are not kept: its resumption ends at once.
        let mut gone = session.resume("1/0").unwrap();
        assert!(gone.try_recv().is_err());
    }

    #[tokio::test]
    async fn a_session_ends_after_its_idle_timeout_unless_a_request_is_in_flight() {
        const IDLE: Duration = Duration::from_millis(200);
        let session = Session::new(IDLE);
        let _stream = session.request_stream(ping(1)).unwrap();
        assert!(session.next_message().await.is_some());
        // A request is in flight: the session outlives the timeout.
        let waited = tokio::time::timeout(IDLE * 3, session.next_message()).await;
        assert!(waited.is_err(), "ended with a request in flight");
        assert!(matches!(session.route(answer(1)), Delivery::Done));
        let started = Instant::now();
        assert!(session.next_message().await.is_none());
        let elapsed = started.elapsed();
        assert!(
            (IDLE..IDLE * 5).contains(&elapsed),
            "ended after {elapsed:?}"
        );
        assert!(session.request_stream(ping(2)).is_err());
    }
}
