//! The OAuth 2.0 token endpoint (`POST /esign/oauth/token`, client credentials) and the
//! check of the tokens it issued.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::post;
use serde_json::json;

use crate::http::json;
use crate::registry::Credential;
use crate::state::{Shared, World};

use super::{ESIGN_CLIENT_ID, ESIGN_CLIENT_SECRET, EsignState, TOKEN_LIFETIME_SECS, Token};

/// The routes relative to `/esign` that need no key.
pub(super) fn router() -> Router<Arc<Shared>> {
    Router::new().route("/oauth/token", post(token))
}

/// `POST /esign/oauth/token`: client credentials in, a bearer token out.
async fn token(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let fields: HashMap<String, String> = form_urlencoded::parse(&body).into_owned().collect();
    let oauth_error = |status: StatusCode, code: &str, description: &str| {
        json(
            status,
            &json!({"error": code, "error_description": description}),
        )
    };
    shared.with_world(|w| {
        w.services.get_mut::<EsignState>().token_requests += 1;
        if fields.get("grant_type").map(String::as_str) != Some("client_credentials") {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "grant_type must be client_credentials",
            );
        }
        let id = fields.get("client_id").map(String::as_str);
        let secret = fields.get("client_secret").map(String::as_str);
        if id != Some(ESIGN_CLIENT_ID) || secret != Some(ESIGN_CLIENT_SECRET) {
            return oauth_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "unknown client id or wrong secret",
            );
        }
        let token = w.ids.next("at");
        let expires_at = w.now() + time::Duration::seconds(TOKEN_LIFETIME_SECS);
        w.services.get_mut::<EsignState>().tokens.insert(
            token.clone(),
            Token {
                tenant: format!("oauth:{ESIGN_CLIENT_ID}"),
                expires_at,
            },
        );
        let mut response = json(
            StatusCode::OK,
            &json!({"access_token": token, "token_type": "Bearer", "expires_in": TOKEN_LIFETIME_SECS}),
        );
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    })
}

/// What a bearer value that is not an API key is: a token this endpoint issued, valid
/// or expired, or nothing known.
pub(super) fn check_token(world: &World, token: &str) -> Credential {
    let Some(state) = world.services.get::<EsignState>() else {
        return Credential::Unknown;
    };
    match state.tokens.get(token) {
        Some(t) if world.now() < t.expires_at => Credential::Tenant(t.tenant.clone()),
        Some(_) => Credential::Expired,
        None => Credential::Unknown,
    }
}
