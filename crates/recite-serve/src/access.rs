//! The access log: one line on standard error per request, `recite serve: METHOD PATH STATUS
//! MS ms` (the path cut at 200 characters), never the query, a header or the body.
//!
//! tower-http's `TraceLayer` ([`trace`]) opens a span per request carrying its method and path,
//! and, when the response starts (its status known, the body perhaps still streaming), records
//! an event in it carrying the status and the milliseconds taken. [`Lines`], the process's
//! tracing subscriber ([`install`]), turns those into the lines; it listens to nothing else, so
//! the dependencies' own tracing (DataFusion, rmcp, hyper) stays off as before.

use std::time::Duration;

use axum::extract::Request;
use axum::response::Response;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Span, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

/// The target of the access log's spans and events.
const TARGET: &str = "recite_serve::access";

/// How much of a path a line repeats.
const SHOWN: usize = 200;

/// The request span: its method and path.
fn request_span(req: &Request) -> Span {
    let path = req.uri().path();
    let path: String = if path.chars().count() > SHOWN {
        path.chars().take(SHOWN).chain(['…']).collect()
    } else {
        path.into()
    };
    tracing::info_span!(target: TARGET, "request", method = %req.method(), path = %path)
}

/// The response event, in the request's span: its status and time.
fn response_event(res: &Response, latency: Duration, _span: &Span) {
    tracing::info!(target: TARGET, status = res.status().as_u16(), ms = latency.as_millis() as u64);
}

/// The tower-http layer that traces each request as [`Lines`] logs it; the layer's other
/// events (request start, body chunks, end of stream, failures) are off: the line is the log.
#[allow(clippy::type_complexity)]
pub fn trace() -> tower_http::trace::TraceLayer<
    tower_http::classify::SharedClassifier<tower_http::classify::ServerErrorsAsFailures>,
    fn(&Request) -> Span,
    (),
    fn(&Response, Duration, &Span),
    (),
    (),
    (),
> {
    tower_http::trace::TraceLayer::new_for_http()
        .make_span_with(request_span as fn(&Request) -> Span)
        .on_request(())
        .on_response(response_event as fn(&Response, Duration, &Span))
        .on_body_chunk(())
        .on_eos(())
        .on_failure(())
}

/// Makes [`Lines`] the process's tracing subscriber, unless one is set already (a program that
/// embeds the service and traces itself keeps its own, and gets the spans and events).
pub fn install() {
    let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry().with(Lines));
}

/// The tracing layer that writes the access log's lines, and listens to nothing else.
pub struct Lines;

/// A request span's fields, kept with the span until its response event.
struct Requested {
    method: String,
    path: String,
}

/// The fields an access span or event carries.
#[derive(Default)]
struct Fields {
    method: Option<String>,
    path: Option<String>,
    status: Option<u64>,
    ms: Option<u64>,
}

impl Visit for Fields {
    fn record_u64(&mut self, field: &Field, value: u64) {
        match field.name() {
            "status" => self.status = Some(value),
            "ms" => self.ms = Some(value),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "method" => self.method = Some(format!("{value:?}")),
            "path" => self.path = Some(format!("{value:?}")),
            _ => {}
        }
    }
}

impl<S> Layer<S> for Lines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        if metadata.target() == TARGET { Interest::always() } else { Interest::never() }
    }

    fn enabled(&self, metadata: &Metadata<'_>, _ctx: Context<'_, S>) -> bool {
        metadata.target() == TARGET
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut f = Fields::default();
        attrs.record(&mut f);
        if let (Some(span), Some(method), Some(path)) = (ctx.span(id), f.method, f.path) {
            span.extensions_mut().insert(Requested { method, path });
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut f = Fields::default();
        event.record(&mut f);
        let (Some(status), Some(ms)) = (f.status, f.ms) else { return };
        let Some(span) = ctx.event_span(event) else { return };
        let ext = span.extensions();
        let Some(r) = ext.get::<Requested>() else { return };
        crate::warn(&format!("recite serve: {} {} {status} {ms} ms", r.method, r.path));
    }
}
