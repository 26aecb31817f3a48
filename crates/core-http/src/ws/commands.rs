//! The caller's commands as the connection's state takes them: subscriptions (with their
//! confirmations), sends, requests and the close, on a live connection or while
//! disconnected (recorded, sent on the next connection).

use std::io;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use tungstenite::Message;

use super::conn::Next;
use super::ending::{Ended, GRACEFUL, lost_or_fatal};
use super::worker::{Live, Worker};
use super::{Command, Protocol};

impl<P: Protocol> Worker<P> {
    /// Runs the caller's queued commands on a live connection. (Out of line: a busy
    /// stream's read path stays small enough for the processor's instruction cache.)
    #[inline(never)]
    pub(super) fn commands_while_connected(&mut self, live: &mut Live) -> Option<Ended> {
        loop {
            let command = match self.commands.try_recv() {
                Ok(command) => {
                    self.commands_waiting.fetch_sub(1, Ordering::AcqRel);
                    command
                }
                Err(TryRecvError::Empty) => return None,
                Err(TryRecvError::Disconnected) => {
                    self.close_handshake(live);
                    return Some(Ended::Closed);
                }
            };
            let result = match command {
                Command::Subscribe(s, confirm) => {
                    let messages = self.protocol.subscribe(&s);
                    let count = messages.len();
                    let mut result = Ok(());
                    for message in messages {
                        result = self.write(live, message);
                        if result.is_err() {
                            break;
                        }
                        live.outstanding += 1;
                        live.ack_deadline
                            .get_or_insert(Instant::now() + self.config.ack_timeout);
                    }
                    if let Some(confirm) = confirm {
                        if count == 0 {
                            let _ = confirm.send(Ok(()));
                        } else {
                            // Settled by its own acks (or by the replay if the
                            // connection is lost first).
                            self.confirmations.push_back((count, confirm));
                        }
                    }
                    result
                }
                Command::Unsubscribe(s) => {
                    let mut result = Ok(());
                    for message in self.protocol.unsubscribe(&s) {
                        result = self.write(live, message);
                        if result.is_err() {
                            break;
                        }
                    }
                    result
                }
                // The server has closed the connection already: what was to be sent
                // waits for the next one (never written into one that is gone, where
                // it would be lost, or a request left unanswered).
                Command::Send(message) if live.peer_closed() => {
                    self.pending.push_back(message);
                    return Some(Ended::Lost("the connection closed".into(), Next::Retry));
                }
                Command::Request(request) if live.peer_closed() => {
                    self.requests.queue(request);
                    return Some(Ended::Lost("the connection closed".into(), Next::Retry));
                }
                Command::Send(message) => self.write(live, message),
                Command::Request(request) => match self.requests.send_now(request) {
                    Some(message) => self.write(live, message),
                    None => Ok(()),
                },
                Command::Close => {
                    self.close_handshake(live);
                    return Some(Ended::Closed);
                }
            };
            if let Err(e) = result {
                return Some(lost_or_fatal(e));
            }
        }
    }

    /// Waits `delay` while disconnected, still taking the caller's commands; `false`
    /// when the caller closed the stream.
    pub(super) fn wait(&mut self, delay: Duration) -> bool {
        let until = Instant::now().checked_add(delay);
        loop {
            let left = until.map_or(Duration::from_secs(3600), |u| {
                u.saturating_duration_since(Instant::now())
            });
            if left.is_zero() {
                return true;
            }
            let received = self.commands.recv_timeout(left);
            if received.is_ok() {
                self.commands_waiting.fetch_sub(1, Ordering::AcqRel);
            }
            match received {
                Ok(Command::Subscribe(s, confirm)) => {
                    // Recorded now, sent with the replay on the next connection, whose
                    // acknowledgement confirms it.
                    let _ = self.protocol.subscribe(&s);
                    if let Some(confirm) = confirm {
                        self.confirmations.push_back((0, confirm));
                    }
                }
                Ok(Command::Unsubscribe(s)) => {
                    let _ = self.protocol.unsubscribe(&s);
                }
                Ok(Command::Send(message)) => self.pending.push_back(message),
                Ok(Command::Request(request)) => self.requests.queue(request),
                Ok(Command::Close) | Err(RecvTimeoutError::Disconnected) => return false,
                Err(RecvTimeoutError::Timeout) => return true,
            }
        }
    }
}

impl<P: Protocol> Worker<P> {
    /// Sends a close frame and waits for the server's, every read and write held to
    /// [`GRACEFUL`] of the close timeout (a peer that does not read cannot hold the
    /// write).
    pub(super) fn close_handshake(&self, live: &mut Live) {
        let deadline = Instant::now() + self.config.close_timeout.mul_f64(GRACEFUL);
        live.socket
            .get_mut()
            .set_deadline(Some(deadline), self.config.tick);
        if live.socket.close(None).is_err() {
            live.socket.get_ref().shutdown();
            return;
        }
        while Instant::now() < deadline {
            match live.socket.read() {
                Ok(Message::Close(_)) => {}
                Ok(_) => continue,
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    continue;
                }
                Err(_) => break,
            }
        }
        live.socket.get_ref().shutdown();
    }
}
