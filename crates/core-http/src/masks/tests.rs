//! The stand-ins' tests: what reaches the socket for each way a credential comes.

use super::*;

/// The token a stand-in in a token answer hides, as the head carrying it reaches
/// the socket.
fn sent(masks: &Masks, answer: &[u8]) -> String {
    let text = String::from_utf8_lossy(answer).into_owned();
    let token: String = serde_json::from_str::<serde_json::Value>(&text).unwrap()["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut head = format!(
        "authorization: {}\r\n\r\n",
        masks.header(&format!("Bearer {token}"))
    )
    .into_bytes();
    masks.reveal(&mut head, true);
    String::from_utf8(head).unwrap()
}

fn answer(masks: &Masks, body: &[u8]) -> Vec<u8> {
    let mut bytes = body.to_vec();
    masks.blank(&mut bytes, b"");
    assert_eq!(TokenScan::default().scan(&mut bytes, masks), Scanned::Ready);
    bytes
}

#[test]
fn a_standin_is_the_credentials_length_and_swapped_back_only_where_it_belongs() {
    let masks = Masks::default();
    let key = "sk_live_0123456789abcdef";
    let shown = masks.own_header(&format!("Bearer {key}"));
    assert_eq!(shown.len(), key.len() + 7);
    assert!(!shown.contains(key));
    assert_eq!(masks.header(&format!("Bearer {key}")), shown, "made once");
    assert_eq!(
        masks.header(&shown),
        shown,
        "a stand-in is not masked again"
    );
    let mut head = format!("GET / HTTP/1.1\r\nauthorization: {shown}\r\n\r\n").into_bytes();
    assert!(!masks.reveal(&mut head, true));
    assert!(String::from_utf8_lossy(&head).contains(key));
    // In a body, a header's stand-in stays as it is.
    let mut body = shown.clone().into_bytes();
    masks.reveal(&mut body, false);
    assert_eq!(body, shown.as_bytes());
    // A client secret is swapped in a body, and says so.
    let secret = masks.client_secret("s3cr3t%2Bvalue");
    let mut form = format!("grant_type=client_credentials&client_secret={secret}").into_bytes();
    assert!(masks.reveal(&mut form, false));
    assert!(String::from_utf8_lossy(&form).ends_with("client_secret=s3cr3t%2Bvalue"));
    // Too short to mask.
    assert_eq!(masks.header("abc"), "abc");
}

#[test]
fn an_echoed_credential_is_hidden_even_cut_across_two_reads() {
    let masks = Masks::default();
    let standin = masks.header("sk_test_ECHOED_KEY");
    let mut one = b"{\"error\":\"bad key sk_test_ECHOED_KEY\"}".to_vec();
    masks.blank(&mut one, b"");
    let text = String::from_utf8_lossy(&one).into_owned();
    assert!(
        !text.contains("ECHOED") && text.contains(&standin),
        "{text}"
    );
    assert_eq!(
        masks.conceal(&text).as_deref(),
        Some("{\"error\":\"bad key ***\"}")
    );
    let before = b"... sk_test_ECH".to_vec();
    let mut after = b"OED_KEY is not valid".to_vec();
    masks.blank(&mut after, &before);
    assert_eq!(after[..7], standin.as_bytes()[11..]);
    assert!(after.ends_with(b" is not valid"));
}

#[test]
fn a_token_is_hidden_once_its_value_is_whole() {
    let masks = Masks::default();
    let mut scan = TokenScan::default();
    let mut answer = br#"{"token_type":"Bearer","access_to"#.to_vec();
    assert_eq!(scan.scan(&mut answer, &masks), Scanned::More);
    answer.extend_from_slice(br#"ken": "tok_0123456789"#);
    assert_eq!(scan.scan(&mut answer, &masks), Scanned::More);
    answer.extend_from_slice(br#"abcdef","expires_in":3600}"#);
    assert_eq!(scan.scan(&mut answer, &masks), Scanned::Ready);
    let text = String::from_utf8_lossy(&answer).into_owned();
    assert!(!text.contains("tok_0123456789abcdef"), "{text}");
    assert!(sent(&masks, &answer).contains("Bearer tok_0123456789abcdef\r\n"));
}

#[test]
fn a_token_handed_out_again_is_the_token_sent_whatever_the_order_of_what_came_before() {
    let masks = Masks::default();
    masks.client_secret("client_secret_value");
    let body = br#"{"access_token":"tok_SAME_0123456789","expires_in":3600}"#;
    let first = answer(&masks, body);
    // Refreshed: the same string again (blanked to its stand-in on the way in, then
    // read by the scan), and again with other credentials remembered in between.
    for round in 0..40 {
        let again = answer(&masks, body);
        assert_eq!(again, first, "round {round}: one token, one stand-in");
        assert!(sent(&masks, &again).contains("Bearer tok_SAME_0123456789\r\n"));
        masks.header(&format!("rotated_key_{round:04}"));
    }
    // A new token is a new stand-in, sent as itself.
    let new = answer(&masks, br#"{"access_token":"tok_NEW_0123456789"}"#);
    assert!(sent(&masks, &new).contains("Bearer tok_NEW_0123456789\r\n"));
    // The client's own secret was never forgotten.
    let mut form = masks.client_secret("client_secret_value").into_bytes();
    masks.reveal(&mut form, false);
    assert_eq!(form, b"client_secret_value");
}

#[test]
fn an_escaped_token_is_sent_as_json_decodes_it() {
    let masks = Masks::default();
    let body = br#"{"access_token":"abc\/def\u002Bghi=","expires_in":60}"#;
    let hidden = answer(&masks, body);
    assert_eq!(hidden.len(), body.len());
    let text = String::from_utf8_lossy(&hidden).into_owned();
    assert!(!text.contains("abc") && !text.contains("ghi"), "{text}");
    assert!(sent(&masks, &hidden).contains("Bearer abc/def+ghi=\r\n"));
}

#[test]
fn a_token_that_cannot_be_a_header_is_never_swapped_back() {
    let masks = Masks::default();
    let hidden = answer(
        &masks,
        br#"{"access_token":"tok_0123456789\r\nX-Injected: yes"}"#,
    );
    let text = String::from_utf8_lossy(&hidden).into_owned();
    assert!(!text.contains("Injected"), "{text}");
    let token = serde_json::from_str::<serde_json::Value>(&text).unwrap()["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(masks.refusal(&token), Some("holds a line break"));
    let mut head = format!("authorization: Bearer {token}\r\n\r\n").into_bytes();
    masks.reveal(&mut head, true);
    assert!(!String::from_utf8_lossy(&head).contains("Injected"));
}
