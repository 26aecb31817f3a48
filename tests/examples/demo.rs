//! `cargo xtask demo`: a readable tour of the clients against a sandbox started
//! in-process. No key, no network.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use e2e::{WebhookReceiver, sandbox_time_builder, social_client_with_sleeper};
use sandbox::{Fault, Sandbox, Service};
use social_client::webhooks;
use social_client::{
    Client,
    analytics::Period,
    posts::{ListPosts, NewPost, Platform},
};

/// What the tour did, for its closing summary: HTTP requests and retries (counted from
/// core-http's debug log records), webhooks verified, bytes downloaded.
struct Tally {
    requests: AtomicU64,
    retries: AtomicU64,
    webhooks: AtomicU64,
    bytes: AtomicU64,
}

static TALLY: Tally = Tally {
    requests: AtomicU64::new(0),
    retries: AtomicU64::new(0),
    webhooks: AtomicU64::new(0),
    bytes: AtomicU64::new(0),
};

impl log::Log for Tally {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.target().starts_with("core_http") && metadata.level() <= log::Level::Debug
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let message = record.args().to_string();
        if message.starts_with("--> ") {
            self.requests.fetch_add(1, Ordering::Relaxed);
        }
        if message.contains("; retry ") {
            self.retries.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn flush(&self) {}
}

/// A figure an answer may not carry: `-` rather than a zero it did not give.
fn figure<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

fn main() -> anyhow::Result<()> {
    let _ = log::set_logger(&TALLY);
    log::set_max_level(log::LevelFilter::Debug);
    let started = Instant::now();
    // The tour's market never closes, so it shows fills whatever the hour it runs.
    let sandbox = Arc::new(Sandbox::builder().market_hours(false).start()?);
    println!(
        "sandbox running at {} (key {})",
        sandbox.url(),
        sandbox.api_key()
    );
    social(&sandbox)?;
    projects(&sandbox)?;
    vision(&sandbox)?;
    esign(&sandbox)?;
    trading(&sandbox)?;
    worlds(&sandbox)?;
    println!(
        "\n#### in all\n  {} HTTP requests ({} of them retries), {} webhooks verified, \
         {} bytes downloaded, {:.1} s",
        TALLY.requests.load(Ordering::Relaxed),
        TALLY.retries.load(Ordering::Relaxed),
        TALLY.webhooks.load(Ordering::Relaxed),
        TALLY.bytes.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64()
    );
    println!(
        "\n#### next\n  \
         this tour's code: tests/examples/demo.rs\n  \
         the sandbox as a program: cargo run -p service-clients-sandbox (it prints the\n  \
         variables that point a client at it)\n  \
         then, in another terminal, one whole script against it:\n  \
         cargo run -p esign-client --example esign_quickstart\n  \
         each crate's README starts with a program to paste into a project of your own"
    );
    Ok(())
}

/// An error's kind in words ("not found"), or "no error".
fn kind<E: std::borrow::Borrow<core_http::Error>>(e: Option<E>) -> String {
    match e {
        Some(e) => e.borrow().kind().to_string(),
        None => "no error".into(),
    }
}

/// A time as RFC 3339, to the second.
fn rfc3339(t: time::OffsetDateTime) -> String {
    t.replace_nanosecond(0)
        .unwrap_or(t)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// A progress bar on one line of the terminal (redrawn in place).
fn progress_bar(label: &str, done: u64, total: Option<u64>, unit: &str) {
    use std::io::Write;
    let line = match total {
        Some(total) if total > 0 => {
            let share = (done as f64 / total as f64).clamp(0.0, 1.0);
            let filled = (share * 30.0).round() as usize;
            format!(
                "\r{label} [{}{}] {:>3.0}% {done} of {total} {unit}",
                "#".repeat(filled),
                ".".repeat(30 - filled),
                share * 100.0
            )
        }
        _ => format!("\r{label} {done} {unit}"),
    };
    let mut out = std::io::stdout();
    let _ = out.write_all(line.as_bytes());
    if total.is_some_and(|t| done >= t) {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

fn step(title: &str) {
    println!("\n== {title}");
}

fn social(sandbox: &Arc<Sandbox>) -> anyhow::Result<()> {
    println!("\n#### social-client");
    let receiver = WebhookReceiver::start(0)?;
    let endpoint = sandbox.add_webhook(receiver.url());
    let client = Client::new(sandbox.social().url(), sandbox.api_key())?;
    let shown = format!("{client:?}");
    println!(
        "  the client's Debug shows the key as {}: it never appears in Debug, errors or logs",
        if shown.contains(sandbox.api_key()) {
            "IS VISIBLE"
        } else {
            "***"
        }
    );

    step("create a post on two platforms: one post per platform");
    let posts = client.posts().create(&NewPost::new(
        "Hello from the demo",
        [Platform::X, Platform::LinkedIn],
    ))?;
    for post in &posts {
        let platform = post.platform.as_ref().map_or("?", |p| p.as_str());
        println!("  {} on {platform}: {}", post.id, post.status);
    }

    step("schedule a post an hour ahead");
    let at = sandbox.now() + time::Duration::hours(1);
    let scheduled = client
        .posts()
        .create(&NewPost::new("See you in an hour", [Platform::Mastodon]).scheduled_at(at))?;
    for entry in client.schedule().list()? {
        println!(
            "  schedule: post {} at {}",
            entry.post_id,
            rfc3339(entry.scheduled_at)
        );
    }

    step("move the sandbox clock past it: it publishes and leaves the schedule");
    sandbox.advance(Duration::from_secs(3601));
    let page = client.posts().list(&ListPosts::new())?;
    for post in page.data.iter().filter(|p| p.id == scheduled[0].id) {
        println!("  {} is now {}", post.id, post.status);
    }
    println!(
        "  schedule entries left: {}",
        client.schedule().list()?.len()
    );

    step("analytics follow the published posts");
    let stats = client.analytics().overview_for(Period::Week)?;
    println!(
        "  {}: {} followers, {} impressions, {} clicks ({}% engagement)",
        stats.period,
        figure(stats.followers),
        figure(stats.impressions),
        figure(stats.clicks),
        figure(stats.engagement_rate.map(|r| format!("{:.2}", r * 100.0)))
    );

    step("iterate every post lazily");
    let count = client.posts().iter().collect::<Result<Vec<_>, _>>()?.len();
    println!(
        "  {count} posts (the page's meta.total says {})",
        page.meta
            .and_then(|m| m.total)
            .map_or("nothing".to_owned(), |t| t.to_string())
    );

    step("disconnect an account");
    let account = client.accounts().list()?.remove(0);
    client.accounts().disconnect(&account.id)?;
    let again = client.accounts().disconnect(&account.id);
    println!(
        "  disconnected {}; again: {}",
        account.id,
        kind(again.err())
    );

    step("webhooks: signed deliveries, verified by a local receiver");
    sandbox.wait_for_deliveries(Duration::from_secs(10));
    for delivered in receiver.drain(Duration::from_millis(300)) {
        match webhooks::verify_and_parse(&endpoint.secret, &delivered.headers, &delivered.body) {
            Ok(event) => {
                TALLY.webhooks.fetch_add(1, Ordering::Relaxed);
                println!("  verified {}", event.event_type());
            }
            Err(e) => println!("  REJECTED: {e}"),
        }
    }

    step("a typed error from the server's validation");
    let err = client
        .posts()
        .create(&NewPost::new("hi", [Platform::from("myspace")]))
        .err()
        .ok_or_else(|| anyhow::anyhow!("an unknown platform was accepted"))?;
    println!("  {err}");

    step("a Starter key (100/min): the 101st request gets a 429 and the client waits it out");
    let (starter, sleeper) = social_client_with_sleeper(sandbox, "sk_test_starter")?;
    for _ in 0..101 {
        starter.schedule().list()?;
    }
    println!(
        "  101 calls succeeded; the client waited {:.1} s as Retry-After asked",
        sleeper.slept().iter().sum::<Duration>().as_secs_f64()
    );

    step("an injected 503 is retried");
    let (retrying, _) = social_client_with_sleeper(sandbox, sandbox.api_key())?;
    sandbox.inject(Fault::on("GET", "/social/v1/accounts").status(503));
    let accounts = retrying.accounts().list()?;
    println!("  got {} accounts after one retry", accounts.len());

    step("a POST whose connection drops after the server acted is not repeated");
    let before = client
        .posts()
        .list(&ListPosts::new())?
        .meta
        .and_then(|m| m.total)
        .unwrap_or(0);
    sandbox.inject(Fault::on("POST", "/social/v1/posts").drop_connection());
    match client
        .posts()
        .create(&NewPost::new("exactly once", [Platform::Facebook]))
    {
        Ok(_) => println!("  unexpected success"),
        Err(e) => println!(
            "  error: {e}\n  may_have_been_processed: {} -> {}",
            e.may_have_been_processed(),
            if e.may_have_been_processed() {
                "look before posting again"
            } else {
                "nothing was posted"
            }
        ),
    }
    let after = client
        .posts()
        .list(&ListPosts::new())?
        .meta
        .and_then(|m| m.total)
        .unwrap_or(0);
    println!("  posts before {before}, after {after}: created once, not twice");

    step("a slow answer hits the configured timeout");
    sandbox.inject(Fault::on("GET", "/social/v1/schedule").delay_ms(3_000));
    let hurried = client.with_options(
        &social_client::config::RequestOptions::new().timeout(Duration::from_millis(500)),
    );
    let t = Instant::now();
    let err = hurried.schedule().list().err();
    match err {
        Some(e) => println!("  after {:.1} s: {e}", t.elapsed().as_secs_f64()),
        None => println!("  unexpected success"),
    }
    Ok(())
}

fn projects(sandbox: &Arc<Sandbox>) -> anyhow::Result<()> {
    use projects_client::{
        Client, Plan,
        projects::{Environment, ListProjects, NewProject},
    };

    println!("\n#### projects-client");
    let client = Client::new(sandbox.projects().url(), sandbox.api_key())?;

    step("create 120 projects, read the first page, iterate them all (100 a page)");
    for i in 0..120 {
        let environment = [Environment::Development, Environment::Production][i % 2].clone();
        client
            .projects()
            .create(&NewProject::new(format!("demo-{i:03}")).environment(environment))?;
    }
    let page = client.projects().list(&ListProjects::new())?;
    println!(
        "  first page: {} projects (the default page size), {} in all",
        page.data.len(),
        page.meta
            .and_then(|m| m.total)
            .map_or("?".to_owned(), |t| t.to_string())
    );
    let all = client.projects().iter().collect::<Result<Vec<_>, _>>()?;
    println!(
        "  iterated {} projects, {} .. {}",
        all.len(),
        all.first().map_or("", |p| p.name.as_str()),
        all.last().map_or("", |p| p.name.as_str())
    );

    step("a limit of 101 is refused before anything is sent");
    match client.projects().list(&ListProjects::new().limit(101)) {
        Err(e) => println!("  {e}"),
        Ok(_) => println!("  unexpected success"),
    }

    step("delete one; deleting it again is NotFound");
    client.projects().delete(&all[0].id)?;
    let again = client.projects().delete(&all[0].id).err();
    println!("  deleted {}; again: {}", all[0].id, kind(again));

    step("with Plan::Free the client paces itself: a burst of 150, then one call per 0.6 s");
    let (builder, sleeper) =
        sandbox_time_builder::<Client>(sandbox, Service::Projects, "sk_test_free");
    let free = builder.rate_limit(Plan::Free).build()?;
    for _ in 0..160 {
        free.projects().list(&ListProjects::new().limit(1))?;
    }
    let waited: f64 = sleeper.slept().iter().map(|d| d.as_secs_f64()).sum();
    println!(
        "  160 calls succeeded; {} waits, {waited:.1} s of sandbox time in all",
        sleeper.slept().len()
    );
    Ok(())
}

fn vision(sandbox: &Arc<Sandbox>) -> anyhow::Result<()> {
    use vision_client::{
        Client,
        analyses::{ClassifyRequest, DetectRequest, FacesRequest, OcrRequest},
    };

    println!("\n#### vision-client");
    let image = "https://images.example.com/street.jpg";
    let client = Client::new(sandbox.vision().url(), sandbox.api_key())?;

    step("detect with the defaults (threshold 0.5, at most 100), then with threshold 0.9");
    let all = client.analyses().detect(&DetectRequest::new(image))?;
    for object in &all.objects {
        println!(
            "  {:<10} {:.2} xywh {:?} xyxy {:?}",
            object.label,
            object.confidence,
            object.bbox.xywh(),
            object.bbox.xyxy()
        );
    }
    let confident = client
        .analyses()
        .detect(&DetectRequest::new(image).confidence_threshold(0.9))?;
    println!(
        "  threshold 0.9 keeps {} of {}",
        confident.objects.len(),
        all.objects.len()
    );

    step("classify (top 5, imagenet), OCR (structured), faces (with a collection)");
    let classes = client.analyses().classify(&ClassifyRequest::new(image))?;
    let labels: Vec<&str> = classes
        .predictions
        .iter()
        .map(|p| p.label.as_str())
        .collect();
    println!("  labels: {}", labels.join(", "));
    let text = client
        .analyses()
        .ocr(&OcrRequest::new(image).structured())?;
    println!("  text {:?}, {} block(s)", text.text, text.blocks.len());
    let faces = client
        .analyses()
        .faces(&FacesRequest::new(image).collection("col_staff"))?;
    for face in &faces.faces {
        println!(
            "  face at {:?}, looking {}, matches {}",
            face.bbox.xyxy(),
            face.attributes
                .as_ref()
                .and_then(|a| a.emotion.as_ref())
                .map_or("?", |e| e.as_str()),
            face.matches
                .iter()
                .map(|m| m.face_id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }

    step("a Free key's monthly quota (25 calls): used up, reported, not retried");
    let free = Client::new(sandbox.vision().url(), "sk_test_free")?;
    let mut calls = 0;
    let err = loop {
        match free
            .analyses()
            .classify(&ClassifyRequest::new(image).top_n(1))
        {
            Ok(_) => calls += 1,
            Err(e) => break e,
        }
    };
    println!("  after {calls} calls, {}: {err}", kind(Some(&err)));
    let usage = free.status().get()?.usage;
    println!(
        "  status: {} of {} calls used in {}",
        usage.calls_used, usage.calls_limit, usage.period
    );
    Ok(())
}

fn esign(sandbox: &Arc<Sandbox>) -> anyhow::Result<()> {
    use esign_client::webhooks::{self, Event};
    use esign_client::{
        Client,
        documents::{DocumentSource, NewSigner, SendDocument},
    };

    println!("\n#### esign-client");
    let receiver = WebhookReceiver::start(0)?;
    let endpoint = sandbox.add_webhook(receiver.url());
    let client = Client::with_oauth(
        sandbox.esign().url(),
        sandbox.esign().token_url(),
        sandbox::ESIGN_CLIENT_ID,
        sandbox::ESIGN_CLIENT_SECRET,
    )?;
    let dir = std::env::temp_dir().join(format!("esign-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;

    step("send a contract to two signers (OAuth client credentials, one Idempotency-Key)");
    let contract = SendDocument::new(DocumentSource::bytes(
        "contract.pdf",
        b"%PDF-1.4\n% demo contract\n%%EOF\n".to_vec(),
    ))
    .name("Services agreement")
    .signer(NewSigner::new("Ada Lovelace", "ada@example.com").order(1))
    .signer(NewSigner::new("Charles Babbage", "charles@example.com").order(2));
    // The sandbox creates the document and then drops the connection: the client resends
    // with the same key and gets the same document, not a second one.
    sandbox.inject(Fault::on("POST", "/esign/documents").drop_connection());
    let document = client.documents().send(&contract)?;
    println!(
        "  {} is {}; the connection dropped once, documents on the server: {}; token requests: {}",
        document.id,
        document.status.as_str(),
        sandbox.esign().documents().len(),
        sandbox.esign().token_requests()
    );

    step("download before completion: 409, and no file left behind");
    let path = dir.join("signed.pdf");
    match client.documents().download_to_path(&document.id, &path) {
        Err(e) => println!("  {e}\n  file exists: {}", path.exists()),
        Ok(_) => println!("  unexpected success"),
    }

    step("both sign (sandbox control endpoint); the webhooks arrive signed");
    for signer in &document.signers {
        sandbox
            .esign()
            .sign(document.id.as_str(), Some(&signer.email))
            .map_err(|e| anyhow::anyhow!(e))?;
    }
    sandbox.wait_for_deliveries(Duration::from_secs(10));
    for delivered in receiver.drain(Duration::from_millis(300)) {
        let event =
            webhooks::verify_and_parse(&endpoint.secret, &delivered.headers, &delivered.body)?;
        let status = match &event {
            Event::Unknown { .. } => "?".to_owned(),
            other => other
                .document()
                .map_or("?".to_owned(), |d| d.status.as_str().to_owned()),
        };
        TALLY.webhooks.fetch_add(1, Ordering::Relaxed);
        println!("  verified {} (document {status})", event.event_type());
    }

    step("wait until everyone signed (one call, one deadline), then download with a progress bar");
    let completed = client
        .documents()
        .wait_until_completed(&document.id, Duration::from_secs(10))?;
    println!("  {} is {}", completed.id, completed.status);
    let mut last = (0, None);
    let download = client
        .documents()
        .download(&document.id)
        .on_progress(|done, total| {
            last = (done, total);
            progress_bar("  signed PDF", done, total, "bytes");
        })
        .to_path(&path)?;
    TALLY.bytes.fetch_add(download.bytes, Ordering::Relaxed);
    let bytes = std::fs::read(&path)?;
    println!(
        "  {} bytes (progress reached {} of {}), starts with {:?}",
        download.bytes,
        last.0,
        last.1.map_or("?".to_owned(), |t| t.to_string()),
        String::from_utf8_lossy(&bytes[..8.min(bytes.len())])
    );
    let text = String::from_utf8_lossy(&bytes);
    // The page's text lines are the PDF's literal strings: `(Signed by ...) Tj`.
    for line in text
        .split(['(', ')'])
        .filter(|l| l.starts_with("Signed by") || l.starts_with("Completed at"))
    {
        println!("  the PDF says: {line}");
    }

    step("an expired token (sandbox clock +61 min) is renewed once, on the 401");
    sandbox.advance(Duration::from_secs(
        sandbox::TOKEN_LIFETIME_SECS as u64 + 60,
    ));
    let again = client.documents().get(&document.id)?;
    println!(
        "  get: {}; token requests now {}",
        again.status.as_str(),
        sandbox.esign().token_requests()
    );
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

fn trading(sandbox: &Arc<Sandbox>) -> anyhow::Result<()> {
    use trading_client::{
        Decimal,
        orders::{Amount, Entry, OrderRequest, Side, StopLoss, TimeInForce, Trail},
        stream::Event,
    };
    println!("\n#### trading-client (paper)");
    let client = trading_client::Client::new(sandbox.trading().url(), sandbox.api_key())?;
    let cents = |d: Decimal| d.round_dp(2);
    let wait_for = |stream: &mut trading_client::stream::TradingStream,
                    what: &str,
                    want: &dyn Fn(&Event) -> bool|
     -> anyhow::Result<Event> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(event) = stream.next_timeout(Duration::from_millis(200)) {
                let event = event?;
                if want(&event) {
                    return Ok(event);
                }
            }
        }
        anyhow::bail!("no {what} on the stream within 10 s")
    };

    step("a quote, exact to the cent (Decimal, never f64)");
    let quote = client.markets().quotes(&["AAPL"])?.remove(0);
    let price = quote.price;
    println!(
        "  AAPL {price} (bid {}, ask {})",
        figure(quote.bid),
        figure(quote.ask)
    );

    step("open the stream and subscribe to fills and orders");
    let mut stream = client.stream()?;
    stream.subscribe_orders()?;
    println!("  subscribed; the server acknowledged");

    step("a market order fills at once; its fill arrives on the stream");
    let market = client.orders().place(
        &OrderRequest::market("AAPL", Side::Buy, Amount::Qty(Decimal::from(10)))
            .client_order_id("demo-market-1"),
    )?;
    println!(
        "  {} ({}) is {}, {} filled at {}",
        market.id,
        market.client_order_id,
        market.status,
        figure(market.filled_qty),
        figure(market.filled_avg_price)
    );
    if let Event::Fill(fill) = wait_for(&mut stream, "fill", &|e| matches!(e, Event::Fill(_)))? {
        println!(
            "  stream: fill {} of {} at {}",
            fill.execution_id, fill.qty, fill.price
        );
    }

    step("the same client_order_id again: the first order comes back, no second one");
    let again = client.orders().place(
        &OrderRequest::market("AAPL", Side::Buy, Amount::Qty(Decimal::from(10)))
            .client_order_id("demo-market-1"),
    )?;
    println!(
        "  answered {} (same order: {})",
        again.id,
        again.id == market.id
    );

    step("every other kind rests until the price crosses it");
    let kinds = [
        (
            "limit",
            OrderRequest::limit(
                "AAPL",
                Side::Buy,
                Decimal::from(5),
                cents(price * Decimal::new(97, 2)),
            )
            .time_in_force(TimeInForce::Gtc),
        ),
        (
            "stop",
            OrderRequest::stop(
                "AAPL",
                Side::Sell,
                Decimal::from(2),
                cents(price * Decimal::new(95, 2)),
            ),
        ),
        (
            "stop-limit",
            OrderRequest::stop_limit(
                "AAPL",
                Side::Sell,
                Decimal::from(2),
                cents(price * Decimal::new(95, 2)),
                cents(price * Decimal::new(94, 2)),
            ),
        ),
        (
            "trailing stop",
            OrderRequest::trailing_stop(
                "AAPL",
                Side::Sell,
                Decimal::from(2),
                Trail::Percent(Decimal::from(3)),
            ),
        ),
        (
            "bracket",
            OrderRequest::bracket(
                "MSFT",
                Side::Buy,
                Decimal::from(3),
                Entry::Market,
                cents(client.markets().quotes(&["MSFT"])?[0].price * Decimal::new(105, 2)),
                StopLoss::at(cents(
                    client.markets().quotes(&["MSFT"])?[0].price * Decimal::new(95, 2),
                )),
            ),
        ),
    ];
    let mut limit_id = None;
    let mut placed = Vec::new();
    for (name, request) in &kinds {
        let order = client.orders().place(request)?;
        placed.push((*name, order.id.clone()));
        println!(
            "  {name:<13} {} {}: {} ({} legs)",
            order.id,
            order.order_type,
            order.status,
            order.legs.len()
        );
        if *name == "limit" {
            limit_id = Some(order.id.clone());
        }
    }

    step("the price drops 4 % and a minute passes: the limit buy and the 3 % trailing stop fill");
    let limit_id = limit_id.ok_or_else(|| anyhow::anyhow!("no limit order"))?;
    sandbox
        .trading()
        .set_price("AAPL", cents(price * Decimal::new(96, 2)));
    sandbox.advance(Duration::from_secs(60));
    // Waiting on the stream's events: whatever passes meanwhile stays readable.
    let filled = stream.wait_until_filled(limit_id.as_str(), Duration::from_secs(10))?;
    println!(
        "  waited: {} is {} ({} at {})",
        filled.id,
        filled.status,
        figure(filled.filled_qty),
        figure(filled.filled_avg_price)
    );
    let want = limit_id.clone();
    if let Event::Fill(fill) = wait_for(
        &mut stream,
        "limit fill",
        &move |e| matches!(e, Event::Fill(f) if f.order_id == want),
    )? {
        println!(
            "  stream, after the wait: {} filled {} at {}",
            fill.order_id, fill.qty, fill.price
        );
    }
    for (name, id) in &placed {
        let order = client.orders().get(id.as_str())?;
        println!("  {name:<13} now {}", order.status);
    }

    step("the connection is cut, and an order fills while it is down");
    sandbox.drop_streams(Some(Service::Trading));
    let during = client.orders().place(
        &OrderRequest::market("NVDA", Side::Buy, Amount::Qty(Decimal::from(4)))
            .client_order_id("demo-while-down"),
    )?;
    let mut recovered = None;
    let event = wait_for(&mut stream, "reconnect", &|e| {
        matches!(e, Event::Reconnected { .. }) || matches!(e, Event::Fill(f) if f.recovered)
    })?;
    let reconnected = match event {
        Event::Fill(f) => {
            recovered = Some(f);
            wait_for(&mut stream, "reconnect", &|e| {
                matches!(e, Event::Reconnected { .. })
            })?
        }
        other => other,
    };
    if let Some(fill) = recovered {
        println!(
            "  fill {} of {} found by the reconciliation (recovered: {})",
            fill.execution_id, fill.order_id, fill.recovered
        );
    } else {
        println!("  {} filled after the reconnect, delivered live", during.id);
    }
    if let Event::Reconnected { gap } = reconnected {
        println!(
            "  Reconnected after {gap:.1?}; {} reconnect(s) so far",
            stream.stats().reconnects
        );
    }
    stream.close();

    step("the account after");
    let account = client.account().get()?;
    println!(
        "  cash {} {}, buying power {}, equity {}",
        figure(account.cash),
        account.currency.as_deref().unwrap_or(""),
        figure(account.buying_power),
        figure(account.equity)
    );
    for p in &account.positions {
        println!(
            "  {:<5} {:>4} at {} (now {}, P/L {})",
            p.symbol,
            figure(p.qty),
            figure(p.avg_entry_price),
            figure(p.current_price),
            figure(p.unrealized_pl)
        );
    }

    step("twenty years of daily bars, read lazily with a progress bar");
    let twenty_years =
        trading_client::history::ListBars::new("AAPL", trading_client::markets::Timeframe::Day)
            .start(sandbox.now() - time::Duration::days(20 * 365))
            .end(sandbox.now())
            .limit(1_000);
    let mut bars = 0u64;
    // A token list does not say its total: the count so far, redrawn page by page.
    for bar in client
        .history()
        .iter_from(&twenty_years)
        .on_progress(|done, total| progress_bar("  bars read", done, total, "bars"))
    {
        bar?;
        bars += 1;
    }
    println!("\n  {bars} bars in all");

    step("the market's clock");
    let clock = client.clock().get()?;
    println!(
        "  {} now; next open {}, next close {}",
        if clock.is_open { "open" } else { "closed" },
        rfc3339(clock.next_open),
        rfc3339(clock.next_close)
    );

    step("replace a resting order in one step (never two orders, never a gap)");
    let quote = client.markets().quotes(&["AAPL"])?;
    let low = quote
        .first()
        .map(|q| (q.price * Decimal::new(8, 1)).round_dp(2))
        .unwrap_or(Decimal::ONE);
    let resting = client.orders().place(
        &OrderRequest::limit("AAPL", Side::Buy, Decimal::ONE, low).time_in_force(TimeInForce::Gtc),
    )?;
    let replaced = client.orders().replace(
        resting.id.clone(),
        &trading_client::orders::ReplaceOrder::new().qty(Decimal::from(2)),
    )?;
    println!(
        "  {} (1 share at {low}) replaced by {} ({} shares), linked both ways",
        resting.id,
        replaced.id,
        figure(replaced.qty)
    );

    step("end of day: cancel what rests, close every position (each once, even on a retry)");
    // Each answer says what happened to every order and position; `into_complete` makes
    // one that was not carried out for all of them an error.
    let canceled = client.orders().cancel_all()?.into_complete()?;
    let closing = client.positions().close_all()?.into_complete()?;
    println!(
        "  {} orders canceled; {} positions closing: {}",
        canceled.len(),
        closing.len(),
        closing
            .iter()
            .map(|o| format!("{} {} {}", o.side, figure(o.qty), o.symbol))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("  positions left: {}", client.positions().list()?.len());
    Ok(())
}

fn worlds(sandbox: &Arc<Sandbox>) -> anyhow::Result<()> {
    use worlds_client::{
        stream::Event,
        worlds::{NewWorld, WorldObject},
    };
    println!("\n#### worlds-client");
    let client = worlds_client::Client::new(sandbox.worlds().url(), sandbox.api_key())?;
    let next = |rt: &mut worlds_client::stream::WorldsStream| -> anyhow::Result<Event> {
        match rt.next_timeout(Duration::from_secs(10)) {
            Some(event) => Ok(event?),
            None => anyhow::bail!("no realtime event within 10 s"),
        }
    };
    let describe = |e: &Event| match e {
        Event::Joined { users, .. } => format!("Joined: {} users here", users.len()),
        Event::UserJoined {
            user, recovered, ..
        } => {
            format!("UserJoined {} (recovered: {recovered})", user.id)
        }
        Event::UserLeft {
            user, recovered, ..
        } => {
            format!("UserLeft {} (recovered: {recovered})", user.id)
        }
        Event::AssetUpdated {
            asset, recovered, ..
        } => format!(
            "AssetUpdated {} {} (revision {}, recovered: {recovered})",
            asset.id,
            serde_json::Value::Object(asset.properties.clone()),
            asset.revision.map_or("?".to_owned(), |r| r.to_string())
        ),
        Event::Unknown { kind, .. } => format!("Unknown {kind:?}, kept whole"),
        Event::ObjectMoved {
            index,
            object,
            recovered,
            ..
        } => format!(
            "ObjectMoved #{} {} to {:?} (recovered: {recovered})",
            index.unwrap_or_default(),
            object.kind,
            object.position.unwrap_or_default()
        ),
        Event::Custom {
            name, data, from, ..
        } => format!(
            "Custom {name:?} {data} from {}",
            from.as_ref().map_or("?", |f| f.as_str())
        ),
        Event::Resynced {
            world_id, recovery, ..
        } => format!("Resynced {world_id}: {recovery:?}"),
        Event::Reconnected { gap } => format!("Reconnected after {gap:.1?}"),
        other => format!("{other:?}"),
    };

    step("create a world with objects; list every world lazily");
    let world = client.worlds().create(
        &NewWorld::new("Harbour", "seaside")
            .object(WorldObject::new("lighthouse", [12.0, 0.0, -3.5]))
            .object(WorldObject::new("portal", [0.0, 1.5, 0.0]).destination("world_elsewhere")),
    )?;
    println!(
        "  created {} with {} objects",
        world.id,
        world.objects.len()
    );
    for w in client.worlds().iter() {
        let w = w?;
        println!("  {} {:<14} theme {}", w.id, w.name, w.theme);
    }
    let plaza = sandbox.worlds().plaza(sandbox.api_key());
    let users = client.worlds().users(plaza.as_str())?;
    println!(
        "  the plaza's users: {}",
        users
            .iter()
            .map(|u| u.id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );

    step("two clients join the plaza; one updates an asset, the other sees it");
    let asset = sandbox
        .worlds()
        .add_asset(&plaza, serde_json::json!({"colour": "red"}))
        .ok_or_else(|| anyhow::anyhow!("no plaza"))?;
    let mut watcher = client.stream()?;
    watcher.join(plaza.as_str())?;
    println!("  watcher: {}", describe(&next(&mut watcher)?));
    let mut visitor = client.stream()?;
    visitor.join_as(plaza.as_str(), "user_visitor", "Visitor")?;
    println!("  watcher: {}", describe(&next(&mut watcher)?));
    let mut colour = serde_json::Map::new();
    colour.insert("colour".into(), serde_json::json!("blue"));
    let updated = client.assets().replace(asset.as_str(), &colour)?;
    println!(
        "  visitor set the colour: revision {}",
        updated.revision.map_or("?".to_owned(), |r| r.to_string())
    );
    println!("  watcher: {}", describe(&next(&mut watcher)?));

    step("a partial update (a JSON merge) changes only the properties it names");
    let mut size = serde_json::Map::new();
    size.insert("size".into(), serde_json::json!(2));
    client.assets().merge(asset.as_str(), &size)?;
    println!("  watcher: {}", describe(&next(&mut watcher)?));

    step("the visitor sends on the channel: an event of its own, acknowledged by the server");
    let accepted = visitor.send(
        plaza.as_str(),
        "wave",
        &serde_json::json!({"to": "everyone"}),
    )?;
    match accepted.seq {
        Some(seq) => println!("  visitor: accepted as event {seq}"),
        None => println!("  visitor: accepted"),
    }
    println!("  watcher: {}", describe(&next(&mut watcher)?));

    step("a stale conditional update is a conflict that names the current revision");
    let err = client
        .assets()
        .replace_if(asset.as_str(), &colour, 1)
        .err()
        .ok_or_else(|| anyhow::anyhow!("a stale update went through"))?;
    println!(
        "  {err}\n  current revision: {}",
        worlds_client::assets::current_revision(&err).map_or("?".to_owned(), |r| r.to_string())
    );

    step("an event type this version does not know arrives whole");
    sandbox
        .worlds()
        .emit(&plaza, "weather.changed", serde_json::json!({"rain": true}));
    println!("  watcher: {}", describe(&next(&mut watcher)?));

    step(
        "every connection is cut; meanwhile the asset changes twice, the fountain moves and Ada \
         leaves: the watcher recovers each, in order, on reconnecting",
    );
    sandbox.drop_streams(Some(Service::Worlds));
    while sandbox.open_streams(Some(Service::Worlds)) > 0 {
        std::thread::sleep(Duration::from_millis(2));
    }
    for colour in ["green", "gold"] {
        let mut change = serde_json::Map::new();
        change.insert("colour".into(), serde_json::json!(colour));
        client.assets().merge(asset.as_str(), &change)?;
    }
    sandbox.worlds().move_object(&plaza, 0, [3.0, 0.0, 1.0]);
    sandbox.worlds().leave_user(&plaza, "user_ada", true);
    loop {
        let event = next(&mut watcher)?;
        println!("  watcher: {}", describe(&event));
        if matches!(event, Event::Reconnected { .. }) {
            break;
        }
    }
    visitor.close();
    watcher.close();
    Ok(())
}
