//! The connections of `recite serve`: an accept loop that holds at most `--max-connections`
//! open (past that, a connection is answered 503 and closed at once, so the process never runs
//! out of file descriptors and what is open times out), and HTTP/1.1 on each with hyper, whose
//! header timeout (`--header-timeout`) closes a connection that has not sent a whole request
//! header within it: from when it opens, and again from the end of each response (so it is the
//! kept-alive connection's idle timeout too).
//!
//! On stopping, the listener is closed, a connection without a request in flight (idle, or
//! half-way through sending a header) is closed at once, and the others finish the request
//! they are answering (keep-alive off, so each closes after it).

use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use hyper::body::{Body as HttpBody, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};

/// How connections are bounded.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The longest a connection may take to send a request's header, from when it opens or its
    /// previous response ended.
    pub header_timeout: Duration,
    /// Connections open at once.
    pub max_connections: usize,
}

/// What a connection past the cap is told before it is closed: 503, as `busy` is.
fn busy() -> Vec<u8> {
    let body = "{\"type\": \"about:blank\", \"title\": \"busy\", \"status\": 503, \
                \"detail\": \"too many connections are open (--max-connections); try again later\"}\n";
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/problem+json\r\nretry-after: 1\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Accepts connections on `listener` and serves `app` on each until `stop` turns true; then
/// returns once every connection has closed.
pub async fn serve(listener: TcpListener, app: Router, opts: Options, stop: watch::Receiver<bool>) {
    let slots = Arc::new(Semaphore::new(opts.max_connections.max(1)));
    let mut open = tokio::task::JoinSet::new();
    let mut stopping = stop.clone();
    let mut full = false;
    loop {
        let accepted = tokio::select! {
            _ = stopping.wait_for(|s| *s) => break,
            a = listener.accept() => a,
        };
        // Finished connections are reaped as new ones come.
        while open.try_join_next().is_some() {}
        let stream = match accepted {
            Ok((s, _)) => s,
            // Out of descriptors (or another failure of the listener): new connections wait in
            // the backlog while the open ones finish or time out.
            Err(e) if !connection_error(&e) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            Err(_) => continue,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            let _ = stream.try_write(&busy());
            if !full {
                crate::warn(&format!(
                    "recite serve: {} connections open (--max-connections): refusing new ones until some close",
                    opts.max_connections
                ));
            }
            full = true;
            continue;
        };
        full = false;
        let _ = stream.set_nodelay(true);
        let (app, stop) = (app.clone(), stop.clone());
        open.spawn(async move {
            connection(stream, app, opts, stop).await;
            drop(slot);
        });
    }
    drop(listener);
    while open.join_next().await.is_some() {}
}

/// An error of one accepted connection (the caller gave up before it was accepted), not of the
/// listener.
fn connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), ConnectionRefused | ConnectionAborted | ConnectionReset)
}

/// Serves one connection until it closes, or `stop` turns true with no request in flight.
async fn connection(stream: TcpStream, app: Router, opts: Options, mut stop: watch::Receiver<bool>) {
    let busy = Arc::new(AtomicUsize::new(0));
    let tracked = busy.clone();
    let inner = TowerToHyperService::new(app);
    let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        let during = InFlight::enter(&tracked);
        let answer = hyper::service::Service::call(&inner, req);
        async move {
            let r = answer.await?;
            Ok::<_, std::convert::Infallible>(r.map(|body| Tracked { body, _during: during }))
        }
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(opts.header_timeout).keep_alive(true);
    let mut conn = pin!(http.serve_connection(TokioIo::new(stream), service));
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = stop.wait_for(|s| *s) => {}
    }
    if busy.load(Ordering::SeqCst) == 0 {
        // Idle, or a request header not yet complete: nothing to finish.
        return;
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}

/// A request being answered on a connection, from its complete header to the end of its
/// response's body.
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn enter(count: &Arc<AtomicUsize>) -> InFlight {
        count.fetch_add(1, Ordering::SeqCst);
        InFlight(count.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A response body that counts as in flight until hyper is done with it.
struct Tracked {
    body: Body,
    _during: InFlight,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
