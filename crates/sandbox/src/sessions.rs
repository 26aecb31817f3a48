//! A service's stream session: what it does with what arrives (its [`SessionHandler`])
//! and the loop that runs it over the socket.

use std::sync::Arc;

use axum::extract::ws::{Message, WebSocket};

use crate::outbox::StreamEvent;
use crate::service::Service;
use crate::state::Shared;

/// What a service's stream session does with what arrives. The runner owns the socket;
/// the handler only turns inputs into messages to send.
pub(crate) trait SessionHandler: Send + 'static {
    /// A text (or UTF-8 binary) message from the client.
    fn on_text(&mut self, shared: &Shared, text: &str) -> Vec<Outgoing>;
    /// An event from the outbox, already filtered to this session's service and tenant.
    fn on_event(&mut self, shared: &Shared, event: &StreamEvent) -> Vec<Outgoing>;
    /// A tick of the session's timer.
    fn on_tick(&mut self, shared: &Shared) -> Vec<Outgoing>;
    /// How often [`on_tick`](Self::on_tick) runs.
    fn tick_every(&self, shared: &Shared) -> std::time::Duration;
    /// The session ended, however it ended (a close, a dropped connection, a cut).
    fn on_close(&mut self, _shared: &Shared) {}
}

/// A message a session sends.
#[derive(Debug, Clone)]
pub(crate) enum Outgoing {
    Text(String),
    Binary(String),
}

/// Runs one stream session until the client leaves, the session falls behind the
/// outbox (it is closed, not buffered forever), or a control endpoint drops it (the
/// connection is cut without a close frame, as a network failure would).
pub(crate) async fn run_session(
    shared: Arc<Shared>,
    service: Service,
    tenant: String,
    mut socket: WebSocket,
    mut handler: impl SessionHandler,
) {
    use futures_util::StreamExt as _;
    let mut events = shared.subscribe();
    let session = shared.streams.register(service);
    // The first tick one period from now (an interval's first tick is otherwise at
    // once, racing the client's first message).
    let period = handler.tick_every(&shared);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    'session: loop {
        let outgoing = tokio::select! {
            _ = session.cancel.notified() => break,
            incoming = socket.next() => match incoming {
                Some(Ok(Message::Text(text))) => handler.on_text(&shared, text.as_str()),
                Some(Ok(Message::Binary(bytes))) => match std::str::from_utf8(&bytes) {
                    Ok(text) => handler.on_text(&shared, text),
                    Err(_) => Vec::new(),
                },
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => Vec::new(),
            },
            event = events.recv() => match event {
                Ok(event) if event.service == service
                    && event.tenant.as_deref().is_none_or(|t| t == tenant) => {
                    handler.on_event(&shared, &event)
                }
                Ok(_) => Vec::new(),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    let _ = socket
                        .send(Message::Close(Some(axum::extract::ws::CloseFrame {
                            code: 1013,
                            reason: "the session fell behind".into(),
                        })))
                        .await;
                    break;
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            },
            _ = tick.tick() => handler.on_tick(&shared),
        };
        for message in outgoing {
            let message = match message {
                Outgoing::Text(t) => Message::Text(t.into()),
                Outgoing::Binary(t) => Message::Binary(t.into_bytes().into()),
            };
            if socket.send(message).await.is_err() {
                break 'session;
            }
        }
    }
    handler.on_close(&shared);
}
