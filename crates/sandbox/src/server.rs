//! The HTTP server: an accept loop that can drop a connection on purpose (for injected
//! faults), and the middleware every service request goes through: request id, faults,
//! the API key check and the per-plan rate limit.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::sync::{Notify, oneshot};
use tower::ServiceExt as _;

use crate::answer;
use crate::faults::FaultAction;
use crate::http::{Caller, error};
use crate::plans::Admission;
use crate::registry::Credential;
use crate::service::Service;
use crate::state::Shared;

/// Closes the connection a request came on, without an answer.
#[derive(Clone)]
struct KillSwitch(Arc<Notify>);

/// Serves `app` on `listener` until `shutdown` fires.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    panics: Arc<AtomicU64>,
    mut shutdown: oneshot::Receiver<()>,
) {
    loop {
        let (stream, _) = tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(_) => {
                    // Out of file descriptors or similar: back off briefly.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let panics = panics.clone();
        tokio::spawn(async move {
            let kill = Arc::new(Notify::new());
            let switch = KillSwitch(kill.clone());
            let service =
                hyper::service::service_fn(move |mut request: Request<hyper::body::Incoming>| {
                    request.extensions_mut().insert(switch.clone());
                    let app = app.clone();
                    let panics = panics.clone();
                    async move { Ok::<_, Infallible>(answer(app, request, &panics).await) }
                });
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(answer::Wire::new(stream)), service)
                .with_upgrades();
            tokio::select! {
                _ = connection => {}
                _ = kill.notified() => {}
            }
        });
    }
}

/// One request through the router, kept to what every answer promises (see
/// [`crate::answer`]): a URI within its limit, a panic answered, an error in the
/// services' shape, the body read to its end (or the connection honestly closed).
async fn answer(app: Router, request: Request<Incoming>, panics: &AtomicU64) -> Response {
    use futures_util::FutureExt as _;
    let (parts, incoming) = request.into_parts();
    let body = answer::SharedBody::new(incoming);
    let method = parts.method.as_str().to_owned();
    let path = parts.uri.path().to_owned();
    let length = parts.uri.to_string().len();
    let response = if length > answer::MAX_URI {
        answer::uri_too_long(length)
    } else {
        let request = Request::from_parts(parts, answer::body(&body));
        match std::panic::AssertUnwindSafe(app.oneshot(request))
            .catch_unwind()
            .await
        {
            Ok(Ok(response)) => response,
            Ok(Err(never)) => match never {},
            Err(_) => {
                panics.fetch_add(1, Ordering::Relaxed);
                answer::panicked()
            }
        }
    };
    let response = answer::shape(response, &method, &path).await;
    if body.drain().await {
        response
    } else {
        answer::closing(response)
    }
}

/// The middleware in front of every service route.
pub(crate) async fn gate(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    let kill = request.extensions().get::<KillSwitch>().cloned();
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    // The body stays unread until a handler takes it.
    let (mut parts, body) = request.into_parts();
    let mut body = Some(body);
    let (request_id, fault) =
        shared.with_world(|w| (w.ids.next("req"), w.faults.take(&method, &path)));

    let mut response = 'answer: {
        if let Some(delay) = fault.as_ref().and_then(|f| f.delay_ms) {
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
        if let Some(fault) = fault.as_ref()
            && let Some(status) = fault.status
        {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut response = error(
                status,
                "injected_fault",
                format!("fault injected by the sandbox: {status}"),
            );
            if let Some(seconds) = fault.retry_after {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
            }
            break 'answer response;
        }
        let Some(service) = Service::from_path(&path) else {
            break 'answer error(
                StatusCode::NOT_FOUND,
                "not_found",
                format!("no service at {path}"),
            );
        };
        let key = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim)
            .map(str::to_owned);
        let admission = shared.with_world(|w| {
            let key = key.as_deref().ok_or("unauthorized")?;
            if let Some(plan) = w.plan_of(key).map(str::to_owned) {
                let limit = crate::services::def(service).limit(&plan);
                return Ok((key.to_owned(), w.admit(key, limit, service)));
            }
            match crate::services::def(service).authenticate(w, key) {
                Credential::Tenant(tenant) => {
                    let limit = crate::services::def(service).limit("default");
                    return Ok((tenant.clone(), w.admit(&tenant, limit, service)));
                }
                Credential::Expired => return Err("token_expired"),
                Credential::Unknown => {}
            }
            Err("unauthorized")
        });
        let (key, admission) = match admission {
            Ok(admitted) => admitted,
            Err(code) => {
                let message = if code == "token_expired" {
                    "the access token has expired: request a new one"
                } else {
                    "missing or unknown API key: send Authorization: Bearer <key>"
                };
                let mut response = error(StatusCode::UNAUTHORIZED, code, message);
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                break 'answer response;
            }
        };
        let limits = match admission {
            Some(Admission::Limited {
                limit,
                retry_after,
                reset,
            }) => {
                let mut response = error(
                    StatusCode::TOO_MANY_REQUESTS,
                    "rate_limited",
                    format!("rate limit of {limit} requests exceeded; retry in {retry_after} s"),
                );
                let headers = response.headers_mut();
                headers.insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
                headers.insert("x-ratelimit-limit", HeaderValue::from(limit));
                headers.insert("x-ratelimit-remaining", HeaderValue::from(0));
                headers.insert("x-ratelimit-reset", HeaderValue::from(reset));
                break 'answer response;
            }
            Some(Admission::Allowed {
                limit,
                remaining,
                reset,
            }) => Some((limit, remaining, reset)),
            None => None,
        };
        parts.extensions.insert(Caller { key });
        let body = body.take().unwrap_or_default();
        let mut response = next.run(Request::from_parts(parts, body)).await;
        if let Some((limit, remaining, reset)) = limits {
            let headers = response.headers_mut();
            headers.insert("x-ratelimit-limit", HeaderValue::from(limit));
            headers.insert("x-ratelimit-remaining", HeaderValue::from(remaining));
            headers.insert("x-ratelimit-reset", HeaderValue::from(reset));
        }
        response
    };
    // A body nobody read is read to its end by the server after the answer
    // (`crate::answer`), whoever answered.
    drop(body);
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert("x-request-id", value);
    }
    match fault.and_then(|f| f.action) {
        None => response,
        Some(action) => damage(response, action, kill).await,
    }
}

/// The size from which a JSON answer is compressed, when the request asks for it
/// (`Accept-Encoding: gzip` or `br`): below it, the encoding's framing costs more than
/// it saves. A gateway's usual threshold.
pub const COMPRESS_ABOVE: u16 = 1024;

/// Marks an answer the compression layer leaves as it is (a damaged one).
#[derive(Clone, Copy)]
struct AsItIs;

/// Compresses JSON answers of at least [`COMPRESS_ABOVE`] bytes with gzip or brotli,
/// as the request's `Accept-Encoding` prefers, the way a production service behind a
/// gateway does. Not a PDF (already compressed inside), not a stream's upgrade, not an
/// answer a fault has damaged.
pub(crate) fn compression()
-> tower_http::compression::CompressionLayer<impl tower_http::compression::Predicate> {
    use tower_http::compression::predicate::{Predicate as _, SizeAbove};
    let json = |status: StatusCode,
                _: axum::http::Version,
                headers: &axum::http::HeaderMap,
                extensions: &axum::http::Extensions| {
        status != StatusCode::SWITCHING_PROTOCOLS
            && extensions.get::<AsItIs>().is_none()
            && headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("application/json"))
    };
    tower_http::compression::CompressionLayer::new()
        .compress_when(SizeAbove::new(COMPRESS_ABOVE).and(json))
}

/// Spoils an answer the way an injected fault asks.
async fn damage(response: Response, action: FaultAction, kill: Option<KillSwitch>) -> Response {
    let (mut parts, body) = response.into_parts();
    parts.extensions.insert(AsItIs);
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    match action {
        FaultAction::WrongEncoding => {
            // The answer as it is, labelled as compressed.
            parts
                .headers
                .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            Response::from_parts(parts, Body::from(bytes))
        }
        FaultAction::Drop => {
            if let Some(KillSwitch(kill)) = kill {
                kill.notify_one();
                std::future::pending::<()>().await;
            }
            error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "injected_fault",
                "the connection could not be dropped",
            )
        }
        FaultAction::Malformed => {
            parts.headers.remove(header::CONTENT_LENGTH);
            parts.headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            Response::from_parts(parts, Body::from(MALFORMED))
        }
        FaultAction::Truncated => {
            let half = Bytes::copy_from_slice(&bytes[..bytes.len() / 2]);
            parts.headers.insert(
                header::CONTENT_LENGTH,
                HeaderValue::from(bytes.len().max(2)),
            );
            // The first half goes out; a moment later the body fails, and hyper closes the
            // connection short of the promised length.
            let chunks = futures_util::stream::unfold(Some(half), |half| async move {
                match half {
                    Some(half) => Some((Ok(half), None)),
                    None => {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        let cut = std::io::Error::new(
                            std::io::ErrorKind::ConnectionAborted,
                            "injected truncation",
                        );
                        Some((Err::<Bytes, _>(cut), None))
                    }
                }
            });
            Response::from_parts(parts, Body::from_stream(chunks))
        }
    }
}

/// The body of a `malformed` fault: cut off in the middle of a JSON document.
const MALFORMED: &str = "{\"data\": [{\"id\": \"post_";

/// Not a service path: answered before any key check.
pub(crate) async fn not_found(request: Request) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("no route for {} {}", request.method(), request.uri().path()),
    )
}
