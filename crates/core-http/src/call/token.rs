//! The auth header of an attempt: a key as it is, or an OAuth token from the client's
//! cache, fetched (within the calling request's deadline) through a clean token request
//! when it is missing, stale or refused.

use std::borrow::Cow;

use log::debug;

use super::send_token_request;
use crate::auth::{Auth, AuthHeader, CachedToken, OAuth2Config, Secret, TokenResponse, bearer};
use crate::client::HttpClient;
use crate::method::Method;
use crate::time::Deadline;

/// The auth header an attempt carries, and the client's credentials to keep out of
/// texts.
impl HttpClient {
    /// The auth header for the next attempt. With OAuth, `stale` is a token the server
    /// just refused: it is dropped and a new one fetched (unless another thread already
    /// replaced it). A token fetch fits in what is left of the call's `deadline`.
    pub(crate) fn auth_header(
        &self,
        stale: Option<&Secret>,
        deadline: &Deadline,
    ) -> crate::Result<Option<AuthHeader<'_>>> {
        let config = &self.inner.config;
        // Every credential goes out as its stand-in: the socket puts it back.
        let masks = &self.inner.dialer.masks;
        match &config.auth {
            Auth::None => Ok(None),
            // Made once, when the client was built.
            Auth::Bearer(key) => Ok(Some((
                Cow::Borrowed("authorization"),
                match &self.inner.bearer {
                    Some(header) => Cow::Borrowed(header),
                    None => Cow::Owned(bearer(&Secret::new(masks.own_header(key.expose())))),
                },
            ))),
            Auth::Header { name, value } => Ok(Some((
                Cow::Borrowed(name.as_str()),
                Cow::Owned(Secret::new(masks.own_header(value.expose()))),
            ))),
            Auth::BearerFrom(source) => {
                let key = source.read();
                crate::auth::check_credential(
                    "the key its source (Auth::bearer_from) gave",
                    key.expose(),
                )?;
                Ok(Some((
                    Cow::Borrowed("authorization"),
                    Cow::Owned(bearer(&Secret::new(masks.header(key.expose())))),
                )))
            }
            Auth::OAuth2ClientCredentials(oauth) => {
                let stale = stale.and_then(|h| h.expose().strip_prefix("Bearer "));
                let stale = stale.map(Secret::new);
                let token = self.inner.tokens.get(
                    config.clock.as_ref(),
                    deadline,
                    stale.as_ref(),
                    || self.fetch_token(oauth, *deadline),
                )?;
                // The socket hid the token as it came (a stand-in already, kept as it
                // is); one it could not hide is masked here.
                Ok(Some((
                    Cow::Borrowed("authorization"),
                    Cow::Owned(bearer(&Secret::new(masks.header(token.expose())))),
                )))
            }
        }
    }

    /// Requests a token. The request is built clean: none of the calling request's
    /// options or headers, none of the client's extra headers, no rate-limit token, no
    /// redirect to another origin (the body holds the client secret), and only what is
    /// left of the calling request's deadline.
    fn fetch_token(&self, oauth: &OAuth2Config, deadline: Deadline) -> crate::Result<CachedToken> {
        debug!(
            "requesting an OAuth token from {}",
            crate::url::strip_query(&oauth.token_url)
        );
        let mut form = oauth.token_form();
        // The secret goes out as the stand-in of its form-encoded value: the socket puts
        // it back in the body, and knows the answer holds a token to hide.
        for (name, value) in &mut form {
            if *name == "client_secret" {
                *value = self
                    .inner
                    .dialer
                    .masks
                    .client_secret(&crate::url::encode(value));
            }
        }
        let fields: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let mut request = self
            .request(Method::Post, &oauth.token_url)
            .unauthenticated()
            .replay_safe(true)
            .form(&fields);
        if let Some(body) = request.body.as_mut() {
            body.credentials = true;
        }
        let response = send_token_request(request, deadline)?;
        let unusable = || crate::Error::UnexpectedBody {
            status: response.status(),
            message: "the OAuth token endpoint's answer is not a token (JSON with a \
                      non-empty access_token); it is not shown because it may hold one"
                .into(),
        };
        let answer: TokenResponse =
            serde_json::from_slice(response.body()).map_err(|_| unusable())?;
        if answer.access_token.trim().is_empty() {
            return Err(unusable());
        }
        // A token that cannot be a header's value as it is (the socket would send its
        // bytes, line breaks and all) is never sent.
        let masks = &self.inner.dialer.masks;
        let token = answer.access_token.as_str();
        if let Some(problem) = masks
            .refusal(token)
            .or_else(|| crate::masks::header_value_problem(token.as_bytes()))
        {
            return Err(crate::Error::UnexpectedBody {
                status: response.status(),
                message: format!(
                    "the OAuth token endpoint answered an access token that {problem}, \
                     which cannot be sent as a header: nothing was sent with it"
                ),
            });
        }
        Ok(CachedToken::new(answer, self.inner.config.clock.now()))
    }
}
