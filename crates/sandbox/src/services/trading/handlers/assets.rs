//! Assets: `GET /v1/assets?status=active|inactive|all` (the listed assets) and
//! `GET /v1/assets/{symbol}` (any well-formed symbol).

use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::super::assets::{Asset, known_symbol, unknown_symbol};
use crate::http::{Params, bad_request, error};

pub(super) async fn list(params: Params) -> Response {
    let status = params.get("status").unwrap_or_else(|| "active".into());
    let keep = match status.as_str() {
        "active" => |a: &Asset| a.active,
        "inactive" => |a: &Asset| !a.active,
        "all" => |_: &Asset| true,
        _ => {
            return bad_request("invalid_status", "status is active, inactive or all");
        }
    };
    let assets: Vec<Value> = Asset::listed().filter(keep).map(|a| a.to_json()).collect();
    crate::http::json(StatusCode::OK, &json!({ "assets": assets }))
}

pub(super) async fn get_one(Path(symbol): Path<String>) -> Response {
    if !known_symbol(&symbol) {
        return error(
            StatusCode::NOT_FOUND,
            "asset_not_found",
            unknown_symbol(&symbol),
        );
    }
    crate::http::json(StatusCode::OK, &Asset::of(&symbol).to_json())
}
