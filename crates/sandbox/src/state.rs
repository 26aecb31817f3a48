//! The sandbox's state: one `World` behind a mutex, shared by the request handlers, the
//! clock ticker and the webhook worker.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use time::OffsetDateTime;

use crate::clock::{Clock, rfc3339};
use crate::faults::Faults;
use crate::ids::Ids;
use crate::plans::{Admission, Bucket, Service, limit_for};
use crate::webhooks::{
    Delivery, DeliveryStatus, EventRecord, Job, WebhookReceiver, WorkerMsg, WorkerSender,
};
use crate::{esign, projects, social, vision};

/// What the sandbox was started with, kept so that a reset can go back to it.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub seed: u64,
    pub start: OffsetDateTime,
    pub running: bool,
    pub keys: Vec<(String, String)>,
}

pub(crate) struct Shared {
    world: Mutex<World>,
    worker: Mutex<WorkerSender>,
}

impl Shared {
    pub(crate) fn new(settings: Settings, worker: WorkerSender) -> Self {
        Shared {
            world: Mutex::new(World::new(settings)),
            worker: Mutex::new(worker),
        }
    }

    /// The world, locked. A panic in another handler does not poison the sandbox.
    pub(crate) fn world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the world, then hands the events it emitted to the webhook worker.
    pub(crate) fn with_world<T>(&self, f: impl FnOnce(&mut World) -> T) -> T {
        let (result, jobs) = {
            let mut world = self.world();
            world.tick();
            let result = f(&mut world);
            world.tick();
            (result, std::mem::take(&mut world.jobs))
        };
        self.dispatch(jobs);
        result
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
    jobs: Vec<Job>,
    pub social: social::SocialState,
    pub projects: projects::ProjectsState,
    pub vision: vision::VisionState,
    pub esign: esign::EsignState,
}

impl World {
    fn new(settings: Settings) -> Self {
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
            jobs: Vec::new(),
            social: social::SocialState::default(),
            projects: projects::ProjectsState::default(),
            vision: vision::VisionState::default(),
            esign: esign::EsignState::default(),
            settings,
        }
    }

    /// Forgets everything: data, receivers, faults, limits; the clock and the ids start
    /// over, so a reset sandbox answers exactly as a fresh one.
    pub(crate) fn reset(&mut self) {
        let generation = self.generation + 1;
        *self = World::new(self.settings.clone());
        self.generation = generation;
    }

    pub(crate) fn now(&self) -> OffsetDateTime {
        self.clock.now()
    }

    /// The plan of a key, if the key is known.
    pub(crate) fn plan_of(&self, key: &str) -> Option<&str> {
        self.keys.get(key).map(String::as_str)
    }

    /// Admits (or not) one request of `key` to `service`; `None` means unlimited.
    pub(crate) fn admit(&mut self, key: &str, plan: &str, service: Service) -> Option<Admission> {
        let limit = limit_for(service, plan)?;
        let now = self.now();
        let bucket = self
            .buckets
            .entry((key.to_owned(), service))
            .or_insert_with(|| Bucket::new(limit, now));
        Some(bucket.admit(now))
    }

    /// Emits an event: logs it and queues a delivery to every receiver that wants it.
    pub(crate) fn emit(&mut self, event_type: &str, data: serde_json::Value) {
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
            self.jobs.push(Job {
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

    /// Lets time-driven things happen: scheduled posts publish, daily analytics refresh.
    pub(crate) fn tick(&mut self) {
        let now = self.now();
        let mut events = social::tick(self, now);
        events.extend(esign::tick(self, now));
        for (event_type, data) in events {
            self.emit(event_type, data);
        }
    }
}
