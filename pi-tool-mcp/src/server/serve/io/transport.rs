//! The line framing as rmcp's transport: the lines are read, checked (`framing.rs`) and
//! parsed here, and rmcp gets each message as its own type; rmcp's answers are written
//! straight to the output.
//!
//! Why not rmcp's `AsyncRwTransport` behind an in-memory pipe (as before): every
//! request was then parsed four times (the checks, the shape check, the window's look at
//! its id, rmcp's own parse) and crossed the pipe and two more tasks each way. Here a
//! line is parsed twice: once as a `Value` for the checks, once as rmcp's message (which
//! is also the shape check). What rmcp did with a line it could not read is done here
//! the same way ([`rmcp_reading`](super::framing::rmcp_reading)), so the answers on the
//! wire are unchanged.

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage, ServerResult};
use rmcp::service::{RoleServer, RxJsonRpcMessage, Service, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

use super::batch::Batches;
use super::framing::{
    Checked, Line, LineReader, Parsed, Verdict, check_line, empty_batch_answer,
    is_unreadable_notification, oversized_answer, parse,
};
use super::window::{Kind, Window, classify_value};
use crate::error::ServeError;

/// Serves the rmcp service `server` on newline-delimited JSON-RPC read from `read` and
/// written to `write`, answering broken lines itself (see the module docs); the lines
/// reach rmcp through [`LineTransport`] (the checks are `framing.rs`'s).
pub(crate) async fn serve_framed<S, R, W>(
    server: S,
    read: R,
    write: W,
    max_message_bytes: usize,
    max_pending_requests: usize,
) -> Result<(), ServeError>
where
    S: Service<RoleServer>,
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // Back-pressure: a client that stops reading stops being read (window.rs).
    let window = Window::new(max_pending_requests);
    let transport = LineTransport::new(read, write, max_message_bytes, window);
    match server.serve(transport).await {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|error| ServeError::Service(error.to_string())),
        Err(error) => Err(ServeError::Initialize(error.to_string())),
    }
}

/// The shared output: rmcp's answers and ours, one whole line at a time.
pub(crate) type Output<W> = Arc<Mutex<W>>;

/// Newline-delimited JSON-RPC in front of rmcp (see the module docs and `framing.rs`).
pub(crate) struct LineTransport<R, W> {
    input: BufReader<R>,
    reader: LineReader,
    limit: usize,
    out: Output<W>,
    window: Window,
    batches: Batches,
    /// Messages checked and parsed, in order, with what each does to the window; a
    /// batch gives several at once.
    ready: VecDeque<(ClientJsonRpcMessage, Kind)>,
    /// Lines of ours to write before the next line is read (an answer, or a batch's
    /// answers), so they keep their place among the answers.
    owed: VecDeque<Vec<u8>>,
    /// The write of the first owed line, on a task of its own: rmcp may drop a
    /// `receive` at any await (it polls it in a `select!`), and a write dropped halfway
    /// would leave half a line for rmcp's next answer to land in.
    writing: Option<JoinHandle<io::Result<()>>>,
    /// When the input ended, once it has.
    input_ended: Option<tokio::time::Instant>,
}

/// How long the end of the input waits for the answers of requests in flight (rmcp
/// waits as long for them once it knows).
const END_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub(crate) fn new(read: R, write: W, limit: usize, window: Window) -> Self {
        LineTransport {
            input: BufReader::new(read),
            reader: LineReader::new(limit),
            limit,
            out: Arc::new(Mutex::new(write)),
            window,
            batches: Batches::default(),
            ready: VecDeque::new(),
            owed: VecDeque::new(),
            writing: None,
            input_ended: None,
        }
    }

    /// Writes what is owed, in order; `false` once the output is gone.
    async fn pay(&mut self) -> bool {
        loop {
            if let Some(writing) = &mut self.writing {
                let written = writing.await;
                self.writing = None;
                if !matches!(written, Ok(Ok(()))) {
                    return false;
                }
            }
            let Some(line) = self.owed.pop_front() else {
                return true;
            };
            let out = self.out.clone();
            self.writing = Some(tokio::spawn(async move { write_line(&out, &line).await }));
        }
    }

    fn owe(&mut self, answer: &Value) {
        let mut line = answer.to_string().into_bytes();
        line.push(b'\n');
        self.owed.push_back(line);
    }

    /// Decides on the complete line in the reader.
    fn take_line(&mut self) {
        let line = self.reader.line();
        let taken = match parse(line) {
            Parsed::Message(_, Value::Array(items)) if self.batches.allowed() => {
                Taken::Batch(items)
            }
            Parsed::Done(Verdict::Answer(answer)) => Taken::Answer(answer),
            Parsed::Done(_) => Taken::Nothing,
            Parsed::Message(text, message) => match check_line(text, &message) {
                Checked::Answer(answer) => Taken::Answer(answer),
                Checked::Message(parsed) => Taken::Message(parsed, classify_value(&message)),
                Checked::Unread(answer) => answer.map_or(Taken::Nothing, Taken::Answer),
            },
        };
        match taken {
            Taken::Nothing => {}
            Taken::Answer(answer) => self.owe(&answer),
            Taken::Message(message, kind) => self.ready.push_back((*message, kind)),
            Taken::Batch(items) => self.take_batch(items),
        }
    }

    /// A batch of a 2025-03-26 session (batch.rs): each message checked as a line of its
    /// own, the well-formed ones passed to rmcp, the answers gathered into one array.
    fn take_batch(&mut self, items: Vec<Value>) {
        if items.is_empty() {
            self.owe(&empty_batch_answer());
            return;
        }
        let mut answers = Vec::new();
        let mut waiting = Vec::new();
        let mut passed = Vec::new();
        for item in items {
            let text = serde_json::to_vec(&item).unwrap_or_default();
            if is_unreadable_notification(&item) {
                continue;
            }
            match check_line(&text, &item) {
                Checked::Answer(answer) => answers.push(Some(answer)),
                checked => {
                    let kind = classify_value(&item);
                    if let Kind::Request(id) = &kind {
                        waiting.push((id.clone(), answers.len()));
                        answers.push(None);
                    }
                    passed.push((checked, kind));
                }
            }
        }
        // Owed before rmcp sees a message, so that no answer comes before its batch.
        if let Some(line) = self.batches.open(answers, waiting) {
            self.owed.push_back(line);
        }
        for (checked, kind) in passed {
            match checked {
                Checked::Message(message) => self.ready.push_back((*message, kind)),
                Checked::Unread(Some(answer)) => self.owe(&answer),
                Checked::Unread(None) | Checked::Answer(_) => {}
            }
        }
    }
}

/// What became of one line.
enum Taken {
    Nothing,
    Answer(Value),
    Message(Box<ClientJsonRpcMessage>, Kind),
    Batch(Vec<Value>),
}

async fn write_line<W: AsyncWrite + Unpin>(out: &Output<W>, line: &[u8]) -> io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line).await?;
    out.flush().await
}

/// The window's name for the request a response answers.
fn answered(message: &ServerJsonRpcMessage) -> Option<String> {
    let id = match message {
        ServerJsonRpcMessage::Response(response) => &response.id,
        ServerJsonRpcMessage::Error(error) => error.id.as_ref()?,
        _ => return None,
    };
    serde_json::to_string(id).ok()
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        let window = self.window.clone();
        let batches = self.batches.clone();
        async move {
            if !batches.revision_known()
                && let ServerJsonRpcMessage::Response(response) = &item
                && let ServerResult::InitializeResult(result) = &response.result
            {
                batches.set_revision(result.protocol_version.to_string());
            }
            let answered = answered(&item);
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            match answered.as_deref().and_then(|id| batches.take(id, &line)) {
                // The batch waits for more answers.
                Some(None) => {}
                Some(Some(batch)) => write_line(&out, &batch).await?,
                None => write_line(&out, &line).await?,
            }
            if let Some(id) = answered {
                window.leave(&id);
            }
            Ok(())
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if !self.pay().await {
                return None;
            }
            if let Some((_, kind)) = self.ready.front() {
                if let Kind::Request(id) = kind {
                    // Back-pressure (window.rs). Nothing is taken if this is dropped.
                    self.window.enter(id.clone()).await;
                }
                let (message, kind) = self.ready.pop_front()?;
                // rmcp sends no answer for a cancelled request.
                if let Kind::Cancelled(id) = &kind {
                    self.window.leave(id);
                }
                return Some(message);
            }
            match self.reader.next(&mut self.input).await {
                Ok(Line::Eof) => {
                    // rmcp stops serving notifications once its input ends, so a call
                    // still running would wait forever to send its progress: the end
                    // of the input reaches rmcp once every request is answered, or
                    // after rmcp's own grace for answers in flight.
                    let deadline = *self
                        .input_ended
                        .get_or_insert_with(|| tokio::time::Instant::now() + END_GRACE);
                    let _ = tokio::time::timeout_at(deadline, self.window.drained()).await;
                    return None;
                }
                Err(_) => return None,
                Ok(Line::Complete) => self.take_line(),
                Ok(Line::Oversized { length }) => {
                    let answer = oversized_answer(self.reader.line(), self.limit, length);
                    self.owe(&answer);
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let _ = self.pay().await;
        self.out.lock().await.flush().await
    }
}
