//! Requests on a stream: a message the server answers by its id ([`Inbound::Reply`]),
//! sent at most once.
//!
//! A request is queued while the stream is disconnected and sent on the next connection
//! (after the subscriptions' replay, so a service sees the caller's joins first). Who
//! sends it and whether the caller still waits are settled by one atomic state, so the
//! caller's error says exactly what happened:
//! - it was never written: [`WsError::NotSent`] (the caller gave up first, the stream
//!   ended): safe to send again;
//! - it was written and no answer came (the caller's time ran out, or the connection was
//!   lost): [`WsError::Unanswered`]: it may have been acted on, and it is never sent again
//!   by the stream;
//! - the server answered: its reply, or [`WsError::Rejected`] with its code and reason.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use super::{Command, Protocol, Stream, WsError};

const WAITING: u8 = 0;
const SENT: u8 = 1;
const ABANDONED: u8 = 2;

type Outcome = std::result::Result<String, WsError>;

/// A request on its way: its id, its message, and where its answer goes.
pub(super) struct Request {
    id: String,
    message: String,
    state: Arc<AtomicU8>,
    answer: mpsc::Sender<Outcome>,
}

impl Request {
    /// Marks it written, unless the caller has given up: `Some(message)` to write now.
    fn take_to_send(&mut self) -> Option<String> {
        self.state
            .compare_exchange(WAITING, SENT, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| std::mem::take(&mut self.message))
    }
}

/// The connection's side: requests waiting for a connection, and those written and
/// waiting for their answer.
#[derive(Default)]
pub(super) struct Requests {
    queued: VecDeque<Request>,
    sent: HashMap<String, Request>,
}

impl Requests {
    /// A request to send now, if the caller still waits: its message. It then waits
    /// for its answer.
    pub(super) fn send_now(&mut self, mut request: Request) -> Option<String> {
        let message = request.take_to_send()?;
        self.sent.insert(request.id.clone(), request);
        Some(message)
    }

    /// A request to send once connected.
    pub(super) fn queue(&mut self, request: Request) {
        self.queued.push_back(request);
    }

    /// The queued requests the caller still waits for, in order, to write on a new
    /// connection; each then waits for its answer.
    pub(super) fn take_queued(&mut self) -> Vec<String> {
        let queued: Vec<Request> = self.queued.drain(..).collect();
        queued
            .into_iter()
            .filter_map(|r| self.send_now(r))
            .collect()
    }

    /// The server's answer to request `id`; one nobody waits for is dropped.
    pub(super) fn answer(&mut self, id: &str, outcome: Outcome) {
        match self.sent.remove(id) {
            Some(request) => {
                let _ = request.answer.send(outcome);
            }
            None => log::debug!("stream: an answer to request {id:?}, which nobody waits for"),
        }
    }

    /// The connection was lost: every request written on it stays unanswered (never
    /// written again).
    pub(super) fn connection_lost(&mut self) {
        for (_, request) in self.sent.drain() {
            let _ = request.answer.send(Err(WsError::Unanswered(
                "the connection was lost before the server answered".into(),
            )));
        }
    }
}

impl Requests {
    /// The stream ended: nothing more is written or answered.
    pub(super) fn ended(&mut self) {
        self.connection_lost();
        for request in self.queued.drain(..) {
            let _ = request
                .answer
                .send(Err(WsError::NotSent("the stream has ended".into())));
        }
    }
}

impl<P: Protocol> Stream<P> {
    /// Sends `message`, which the server answers by `id` (the protocol decodes the
    /// answer into [`Inbound::Reply`](super::Inbound::Reply)), and waits at most
    /// `timeout` for the answer. While disconnected, the message waits for the next
    /// connection within the same time. It is written at most once, whatever happens:
    /// see [`WsError::NotSent`], [`WsError::Unanswered`] and [`WsError::Rejected`] for
    /// what each failure means.
    pub fn request(
        &self,
        id: impl Into<String>,
        message: impl Into<String>,
        timeout: Duration,
    ) -> core_http::Result<String> {
        if self.inbox.is_finished() {
            return Err(core_http::Error::from(WsError::NotSent(
                "the stream has ended".into(),
            )));
        }
        let state = Arc::new(AtomicU8::new(WAITING));
        let (answer, answered) = mpsc::channel();
        let request = Request {
            id: id.into(),
            message: message.into(),
            state: state.clone(),
            answer,
        };
        if self.command(Command::Request(request)).is_err() {
            return Err(core_http::Error::from(WsError::NotSent(
                "the stream has ended".into(),
            )));
        }
        let outcome = match answered.recv_timeout(timeout) {
            Ok(outcome) => outcome,
            Err(e) => {
                // Settles the race with the thread that writes it: written or never.
                let sent = state
                    .compare_exchange(WAITING, ABANDONED, Ordering::AcqRel, Ordering::Acquire)
                    .is_err();
                let ended = matches!(e, mpsc::RecvTimeoutError::Disconnected);
                Err(match (sent, ended) {
                    (false, true) => WsError::NotSent("the stream has ended".into()),
                    (false, false) => WsError::NotSent(format!(
                        "not connected within {timeout:?}; the message was not sent"
                    )),
                    (true, true) => {
                        WsError::Unanswered("the stream ended before the server answered".into())
                    }
                    (true, false) => WsError::Unanswered(format!(
                        "no answer within {timeout:?}; the message was sent"
                    )),
                })
            }
        };
        outcome.map_err(core_http::Error::from)
    }
}
