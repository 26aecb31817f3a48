//! The sandbox's state: one `World` behind a mutex, shared by the request handlers, the
//! clock ticker and the webhook worker. Each service keeps its own state in the world's
//! [`Services`] map, keyed by type, so the core names no service.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use time::OffsetDateTime;
use tokio::sync::broadcast;

use crate::clock::{Clock, rfc3339};
use crate::faults::Faults;
use crate::ids::Ids;
use crate::outbox::{Outbox, STREAM_BACKLOG, StreamEvent};
use crate::plans::{Admission, Bucket, Limit};
use crate::service::Service;
use crate::streams::Streams;
use crate::webhooks::{
    Delivery, DeliveryStatus, EventRecord, Job, WebhookReceiver, WorkerMsg, WorkerSender,
};

/// What the sandbox was started with, kept so that a reset can go back to it.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub seed: u64,
    pub start: OffsetDateTime,
    pub running: bool,
    pub keys: Vec<(String, String)>,
    /// How long after sending e-signature signers sign on their own (sandbox seconds).
    pub sign_after_secs: i64,
    /// The root URL it serves, `http://<addr>`.
    pub root: String,
    /// Whether trading's market fills only while its calendar says it is open.
    pub market_hours: bool,
}

pub(crate) struct Shared {
    world: Mutex<World>,
    /// What happens as the clock moves, in every service (`services::tick`): given here
    /// so that the state names no service.
    tick: fn(&mut World),
    worker: Mutex<WorkerSender>,
    /// The open stream sessions (outside the world's lock: sessions come and go
    /// without touching the data).
    pub(crate) streams: Arc<Streams>,
    broadcast: broadcast::Sender<Arc<StreamEvent>>,
}

impl Shared {
    pub(crate) fn new(settings: Settings, worker: WorkerSender, tick: fn(&mut World)) -> Self {
        let (broadcast, _) = broadcast::channel(STREAM_BACKLOG);
        Shared {
            world: Mutex::new(World::new(settings, broadcast.clone())),
            tick,
            worker: Mutex::new(worker),
            streams: Arc::default(),
            broadcast,
        }
    }

    /// The world, locked. A panic in another handler does not poison the sandbox.
    pub(crate) fn world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the world, then hands the webhook events it emitted to the worker.
    pub(crate) fn with_world<T>(&self, f: impl FnOnce(&mut World) -> T) -> T {
        let (result, jobs) = {
            let mut world = self.world();
            (self.tick)(&mut world);
            let result = f(&mut world);
            (self.tick)(&mut world);
            (result, std::mem::take(&mut world.outbox.jobs))
        };
        self.dispatch(jobs);
        result
    }

    /// A receiver of every stream event from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<StreamEvent>> {
        self.broadcast.subscribe()
    }

    fn dispatch(&self, jobs: Vec<Job>) {
        if jobs.is_empty() {
            return;
        }
        let worker = self.worker.lock().unwrap_or_else(|e| e.into_inner());
        for job in jobs {
            // The worker only stops when the sandbox does.
            let _ = worker.send(WorkerMsg::Deliver(job));
        }
    }

    pub(crate) fn shutdown_worker(&self) {
        let worker = self.worker.lock().unwrap_or_else(|e| e.into_inner());
        let _ = worker.send(WorkerMsg::Shutdown);
    }

    /// Records the outcome of a delivery attempt; false when the delivery belongs to
    /// state that a reset has since thrown away.
    pub(crate) fn record_attempt(
        &self,
        job: &Job,
        status: Option<u16>,
        error: Option<String>,
        delivered: bool,
        will_retry: bool,
    ) -> bool {
        let mut world = self.world();
        if world.generation != job.generation {
            return false;
        }
        let Some(delivery) = world.deliveries.get_mut(job.delivery) else {
            return false;
        };
        delivery.attempts = job.attempt;
        delivery.last_status = status;
        delivery.last_error = error;
        delivery.status = if delivered {
            DeliveryStatus::Delivered
        } else if will_retry {
            DeliveryStatus::Pending
        } else {
            DeliveryStatus::Failed
        };
        true
    }
}

/// Each service's own state, keyed by its type; created empty on first use.
#[derive(Default)]
pub(crate) struct Services(HashMap<TypeId, Box<dyn Any + Send>>);

impl Services {
    /// The state of type `S`, created with `S::default()` on first use.
    pub(crate) fn get_mut<S: Default + Send + 'static>(&mut self) -> &mut S {
        let slot = self
            .0
            .entry(TypeId::of::<S>())
            .or_insert_with(|| Box::new(S::default()));
        if !slot.is::<S>() {
            *slot = Box::new(S::default());
        }
        match slot.downcast_mut::<S>() {
            Some(state) => state,
            None => unreachable!("the slot was just given an S"),
        }
    }

    /// The state of type `S`, if it was ever used.
    pub(crate) fn get<S: 'static>(&self) -> Option<&S> {
        self.0.get(&TypeId::of::<S>())?.downcast_ref::<S>()
    }
}

/// Everything the sandbox remembers.
pub(crate) struct World {
    pub settings: Settings,
    pub generation: u64,
    pub clock: Clock,
    pub ids: Ids,
    keys: HashMap<String, String>,
    buckets: HashMap<(String, Service), Bucket>,
    pub faults: Faults,
    pub receivers: Vec<WebhookReceiver>,
    pub deliveries: Vec<Delivery>,
    pub events: Vec<EventRecord>,
    pub outbox: Outbox,
    pub services: Services,
}

impl World {
    fn new(settings: Settings, broadcast: broadcast::Sender<Arc<StreamEvent>>) -> Self {
        World {
            generation: 0,
            clock: Clock::new(settings.start, settings.running),
            ids: Ids::new(settings.seed),
            keys: settings.keys.iter().cloned().collect(),
            buckets: HashMap::new(),
            faults: Faults::default(),
            receivers: Vec::new(),
            deliveries: Vec::new(),
            events: Vec::new(),
            outbox: Outbox::new(broadcast),
            services: Services::default(),
            settings,
        }
    }

    /// Forgets everything: data, receivers, faults, limits; the clock and the ids start
    /// over, so a reset sandbox answers exactly as a fresh one.
    pub(crate) fn reset(&mut self) {
        let generation = self.generation + 1;
        let broadcast = self.outbox.sender();
        *self = World::new(self.settings.clone(), broadcast);
        self.generation = generation;
    }

    pub(crate) fn now(&self) -> OffsetDateTime {
        self.clock.now()
    }

    /// The plan of a key, if the key is known.
    pub(crate) fn plan_of(&self, key: &str) -> Option<&str> {
        self.keys.get(key).map(String::as_str)
    }

    /// Admits (or not) one request of `key` to `service` under `limit` (its plan's);
    /// `None` means unlimited.
    pub(crate) fn admit(
        &mut self,
        key: &str,
        limit: Option<Limit>,
        service: Service,
    ) -> Option<Admission> {
        let limit = limit?;
        let now = self.now();
        let bucket = self
            .buckets
            .entry((key.to_owned(), service))
            .or_insert_with(|| Bucket::new(limit, now));
        Some(bucket.admit(now))
    }
}

impl World {
    /// Emits a webhook event: logs it and queues a delivery to every receiver that
    /// wants it.
    pub(crate) fn emit(&mut self, event_type: &str, data: Value) {
        let event = EventRecord {
            id: self.ids.next("msg"),
            event_type: event_type.to_owned(),
            timestamp: rfc3339(self.now()),
            data,
        };
        let body = event.body();
        for receiver in self.receivers.iter().filter(|r| r.wants(event_type)) {
            self.deliveries.push(Delivery {
                receiver_id: receiver.id.clone(),
                message_id: event.id.clone(),
                event_type: event.event_type.clone(),
                attempts: 0,
                status: DeliveryStatus::Pending,
                last_status: None,
                last_error: None,
            });
            self.outbox.jobs.push(Job {
                delivery: self.deliveries.len() - 1,
                generation: self.generation,
                url: receiver.url.clone(),
                secret: receiver.secret.clone(),
                message_id: event.id.clone(),
                body: body.clone(),
                attempt: 0,
            });
        }
        self.events.push(event);
    }

    /// Publishes a stream event to the sessions that want it (none listening is fine).
    pub(crate) fn publish(&mut self, event: StreamEvent) {
        self.outbox.send(event);
    }
}
