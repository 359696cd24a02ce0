//! The one engine every caller shares (`translate`, `serve`, `bench translate`): a queue of
//! sentences for any loaded model, scheduled onto THREADS compute threads with continuous
//! batching.
//!
//! A caller hands in sentences and the models they go through (one, or two through English);
//! the scheduler ([`scheduler`]) encodes newly arrived sentences between decoder steps and runs
//! one decoder step at a time over every live sentence of every model, at most MAX_BATCH per
//! model and compute thread. A sentence joins at the step after its encoder pass and leaves the step it ends; a
//! pivoted sentence enters the second model's queue as soon as its first stage ends; a caller gets
//! its texts back when its own sentences are done, not when a batch is. Output never depends on
//! what else is in flight: every row of a step is computed alone except inside the int8 products,
//! whose integer sums are exact (see [`crate::marian::search`]).

mod jobs;
pub mod registry;
mod scheduler;

use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use reseam_kernels::{Arithmetic, Kernels};

use crate::marian::Model;
use crate::marian::layers::attention::Mkl;
use crate::marian::search::{DecodeError, SearchOptions};
use crate::text::Aligned;
use crate::vocab::{Pieces, VocabError};

pub use scheduler::SPLIT_ROWS_PER_THREAD;

/// How the engine runs.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// Compute threads (0: one per core).
    pub threads: usize,
    /// Most sentences of one model in one compute thread's decoder step: with N threads up to
    /// N times as many are live.
    pub max_batch: usize,
    pub arithmetic: Arithmetic,
    /// Whose summation orders the attention products reproduce (MKL's on Intel or AMD CPUs).
    pub mkl: Mkl,
    /// Print per-layer values (Marian's `debug()`); forces one sentence per step and one thread,
    /// so the dump reads like Marian's.
    pub debug: bool,
    /// Pin compute thread i to core N + i (Linux).
    pub pin_from_core: Option<usize>,
    /// The working memory (activations, scores, the decoder's state) goes back to the allocator
    /// once the engine has been idle this long; `None` keeps it (serve's `IDLE_SECONDS` 0).
    pub release_after: Option<Duration>,
    /// Of a model's MAX_BATCH places, those that chunks of heavy requests (over a few sentences)
    /// may not take, so that a light request that arrives while heavy ones fill the batch starts
    /// at the next step instead of waiting for one of their chunks to end, which can take
    /// hundreds of steps. 0 (one caller, as `translate`) uses every place for anything.
    pub light_places: usize,
    /// Where the engine's warnings go (a compute thread that could not be pinned): stderr by
    /// default, `serve`'s log there.
    pub notes: fn(registry::Note, &str),
    /// Most source pieces of a request (its sentences through the first model, every chunk):
    /// more is refused with [`EngineError::OverBudget`] before any is queued. `None`: no limit.
    pub max_pieces: Option<usize>,
}

impl Default for EngineOptions {
    fn default() -> EngineOptions {
        EngineOptions {
            threads: 0,
            max_batch: 64,
            arithmetic: Kernels::firefox_arithmetic(),
            mkl: Mkl::current(),
            debug: false,
            pin_from_core: None,
            release_after: Some(Duration::from_secs(5)),
            light_places: 0,
            notes: registry::notes_to_stderr,
            max_pieces: None,
        }
    }
}

/// Why the engine could not start or a request failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("the int8 kernels cannot run")]
    Kernels(#[source] reseam_kernels::dispatch::IsaError),
    #[error("starting the compute threads failed")]
    Threads(#[source] std::io::Error),
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error(transparent)]
    Vocab(#[from] VocabError),
    #[error("internal error: {0}; please report this")]
    Internal(String),
    #[error("the engine has stopped")]
    Stopped,
    /// Over [`EngineOptions::max_pieces`]: the caller's to fix (send less).
    #[error("Invalid request: request ({pieces} pieces) exceeds piece limit ({max})")]
    OverBudget { pieces: usize, max: usize },
}

crate::error::fault!(EngineError);

impl EngineError {
    /// Only what the wrapped errors say of themselves (see [`crate::error`]); the engine's own
    /// failures are never the caller's.
    pub fn is_usage(&self) -> bool {
        match self {
            EngineError::Decode(e) => e.is_usage(),
            EngineError::Vocab(e) => e.is_usage(),
            EngineError::OverBudget { .. } => true,
            EngineError::Kernels(_) | EngineError::Threads(_) | EngineError::Internal(_) | EngineError::Stopped => {
                false
            }
        }
    }
}

/// A request: sentences through `stages` (one model, or from→en and en→to).
pub(crate) struct Request {
    pub stages: Vec<Arc<Model>>,
    pub sentences: Vec<Source>,
    pub opts: SearchOptions,
    pub reply: mpsc::Sender<Result<Vec<Aligned>, EngineError>>,
}

/// A sentence to translate, and its pieces when the caller has already encoded it.
pub(crate) struct Source {
    pub text: String,
    /// `text`'s pieces from the first stage's source vocabulary (with spans when the request
    /// asks for alignment), as the text pipeline counted them to cut long sentences: the engine
    /// decodes these instead of encoding `text` again. `None`: the engine encodes it.
    pub pieces: Option<Pieces>,
}

impl From<String> for Source {
    fn from(text: String) -> Source {
        Source { text, pieces: None }
    }
}

/// A request in flight; [`Ticket::wait`] gives its translations, in order.
pub struct Ticket(mpsc::Receiver<Result<Vec<Aligned>, EngineError>>);

fn texts(aligned: Vec<Aligned>) -> Vec<String> {
    aligned.into_iter().map(|a| a.text).collect()
}

impl Ticket {
    /// The translations if they are ready (then they are taken), without waiting.
    pub fn try_wait(&self) -> Option<Result<Vec<String>, EngineError>> {
        self.0.try_recv().ok().map(|r| r.map(texts))
    }

    pub fn wait(self) -> Result<Vec<String>, EngineError> {
        self.wait_aligned().map(texts)
    }

    /// The translations with their alignments (empty unless the request's
    /// [`SearchOptions::alignment`] was on): target pieces aligned with bytes of the sentence
    /// as it was submitted, through every stage.
    pub fn wait_aligned(self) -> Result<Vec<Aligned>, EngineError> {
        self.0.recv().unwrap_or(Err(EngineError::Stopped))
    }
}

/// The shared engine. Cheap to share (`Arc<Engine>`); dropping the last handle stops it after
/// the work in flight.
pub struct Engine {
    tx: Option<mpsc::Sender<Request>>,
    thread: Option<JoinHandle<()>>,
    threads: usize,
    arith: Arithmetic,
    kernels: &'static Kernels,
}

impl Engine {
    pub fn new(opts: &EngineOptions) -> Result<Engine, EngineError> {
        let kernels = reseam_kernels::dispatch::kernels().map_err(EngineError::Kernels)?;
        let threads = if opts.threads == 0 { physical_cores() } else { opts.threads };
        let threads = if opts.debug { 1 } else { threads };
        let pool = scheduler::pool(threads, opts.pin_from_core, opts.notes).map_err(EngineError::Threads)?;
        crate::profile::engine_started(threads);
        let (tx, rx) = mpsc::channel();
        let sched = scheduler::Scheduler::new(pool, kernels, opts, threads);
        let thread = std::thread::Builder::new()
            .name("reseam-scheduler".into())
            .spawn(move || sched.serve(rx))
            .map_err(EngineError::Threads)?;
        Ok(Engine { tx: Some(tx), thread: Some(thread), threads, arith: opts.arithmetic, kernels })
    }

    /// Queues `sentences` through `stages` and returns at once.
    pub fn submit(&self, stages: &[Arc<Model>], sentences: Vec<String>, opts: &SearchOptions) -> Ticket {
        self.submit_sources(stages, sentences.into_iter().map(Source::from).collect(), opts)
    }

    /// [`Engine::submit`] with the sentences a caller has already encoded with the first
    /// stage's source vocabulary.
    pub(crate) fn submit_sources(&self, stages: &[Arc<Model>], sentences: Vec<Source>, opts: &SearchOptions) -> Ticket {
        let (reply, rx) = mpsc::channel();
        let req = Request { stages: stages.to_vec(), sentences, opts: opts.clone(), reply };
        if let Some(tx) = &self.tx
            && let Err(mpsc::SendError(req)) = tx.send(req)
        {
            let _ = req.reply.send(Err(EngineError::Stopped));
        }
        Ticket(rx)
    }

    /// Translates `sentences` through `stages`, one output per sentence (chunks of an over-long
    /// sentence joined with a space, as Firefox joins them).
    pub fn translate(
        &self,
        stages: &[Arc<Model>],
        sentences: Vec<String>,
        opts: &SearchOptions,
    ) -> Result<Vec<String>, EngineError> {
        self.submit(stages, sentences, opts).wait()
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    pub fn arithmetic(&self) -> Arithmetic {
        self.arith
    }

    pub fn kernels(&self) -> &'static Kernels {
        self.kernels
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // Closing the queue lets the scheduler finish what it holds and return.
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Physical cores (one compute thread each): hyperthreads share a core's multiply units, which
/// the int8 products keep busy.
pub fn physical_cores() -> usize {
    let logical = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    #[cfg(target_os = "linux")]
    {
        if let Ok(text) = std::fs::read_to_string("/proc/cpuinfo") {
            let mut cores = std::collections::HashSet::new();
            let (mut phys, mut core) = (None, None);
            for line in text.lines().chain(std::iter::once("")) {
                if line.trim().is_empty() {
                    if let (Some(p), Some(c)) = (phys.take(), core.take()) {
                        cores.insert((p, c));
                    }
                    continue;
                }
                let mut kv = line.splitn(2, ':');
                match (kv.next().map(str::trim), kv.next().map(str::trim)) {
                    (Some("physical id"), Some(v)) => phys = Some(v.to_string()),
                    (Some("core id"), Some(v)) => core = Some(v.to_string()),
                    _ => {}
                }
            }
            if !cores.is_empty() {
                return cores.len().min(logical);
            }
        }
    }
    logical
}
